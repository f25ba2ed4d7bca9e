// The model and the resumed session as most mappings pass them: one copy for every adapter.
#pragma once

#include <string_view>

#include "adapters/adapter.hpp"
#include "adapters/support/flag_value.hpp"
#include "adapters/support/relies.hpp"

namespace sonata::adapters {

/// Sets `--model` to the input's model (none: the harness keeps its default) and, when resuming,
/// `resume_flag` to the session; a resumed mapping relies on resume-keeps-mode.
inline void pass_model_and_resume(Invocation& inv, const PlanInput& in,
                                  std::string_view resume_flag) {
    set_flag_value(inv.argv, "--model", in.model);
    if (in.resume_session.empty()) return;
    set_flag_value(inv.argv, resume_flag, in.resume_session);
    relies::add_resume(inv.relies_on);
}

} // namespace sonata::adapters
