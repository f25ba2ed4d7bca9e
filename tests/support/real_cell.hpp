// One probe cell of a real harness run as the prober runs it, with a rewrite of the planned
// invocation: how the conformance tier proves that a check or a hardening matters.
#pragma once

#include <functional>
#include <string>

#include "core/decision.hpp"
#include "core/matrix.hpp"
#include "core/mode.hpp"
#include "core/process.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata::testing {

struct RealCell {
    std::string harness;
    std::string executable;
    std::string version;
    Mode mode = Mode::plan;
    RoleKind role = RoleKind::read_only;
    std::string probe;
    /// Applied to the planned invocation before it runs.
    std::function<void(Invocation&)> rewrite;
};

/// Runs the cell under `base` (a directory of `dir`'s, holding the workspace template
/// `template_dir`), with a 180 s timeout and `dir`'s hermetic environment.
Cell run_real_cell(const RealCell& cell, const ScratchDir& dir, const std::string& base,
                   const std::string& template_dir, ProcessRunner& runner);

} // namespace sonata::testing
