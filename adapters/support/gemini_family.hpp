// What Gemini CLI and its fork Qwen Code share: four `--approval-mode` tiers that line up with
// Claude Code's four modes, a per-task `approval_mode` option that may only narrow, the prompt on
// stdin (headless because stdin is not a terminal) and `--resume ID`.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"

namespace sonata::adapters {

/// The per-task option naming an approval mode; its values are the harness's own spellings.
inline constexpr const char* k_option_approval_mode = "approval_mode";

/// The adapter both forks share; subclasses name their spellings and what else they need.
class GeminiFamily : public Adapter {
public:
    std::vector<std::string> accepted_options() const override { return {k_option_approval_mode}; }

    /// `<exe> --approval-mode <tier> <startup_flags()> [-m MODEL] [--resume ID]`, the prompt on
    /// stdin. The tier is the mode's, narrowed by `approval_mode` (a wider or unknown value is an
    /// error); `dangerously_skip_permissions=false` turns the yolo tier into the edit tier.
    Result<Outcome> map(const PlanInput& input) const override;

    /// `-y`/`--yolo` in every mode (the yolo tier is spelled through --approval-mode, and the two
    /// cannot be combined), plus widening_flags(mode).
    std::vector<std::string> forbidden_flags(Mode mode) const override;

protected:
    /// The harness's spelling of each tier in Mode order: plan, default, edits, yolo.
    virtual std::array<std::string, 4> approval_modes() const = 0;

    /// Flags every invocation carries after the approval mode (gemini: --skip-trust).
    virtual std::vector<std::string> startup_flags() const { return {}; }

    /// What the startup flags cost, said in every invocation's notes.
    virtual std::vector<std::string> startup_notes() const { return {}; }

    /// Flags that would let `mode` do more than its tier; forbidden besides -y/--yolo.
    virtual std::vector<std::string> widening_flags(Mode mode) const = 0;
};

}  // namespace sonata::adapters
