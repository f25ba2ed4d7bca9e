// self-promotion's script widens and never narrows again before its attempt: outside plan mode it
// enters plan mode first where the harness needs that to reach its widest switch, and the last
// switch before the write and the command is always a widening one.
#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "core/probe_ids.hpp"
#include "probes/probe.hpp"

namespace sonata::probes {
namespace {

std::vector<std::string> steps_of(const std::string& harness, Mode mode) {
    const auto* probe = *find_probe(probe_id::self_promotion);
    const auto& adapter = **adapters::find_adapter(harness);
    ProbeSetup setup;
    setup.mode = mode;
    setup.tools = adapter.tools();
    std::vector<std::string> steps;
    for (const auto& step : probe->script(setup, adapter).main.steps)
        steps.push_back(std::string(to_string(step.kind)) +
                        (step.tool.empty() ? "" : " " + step.tool));
    return steps;
}

TEST(SelfPromotionScript, WidensInTheOrderTheHarnessNeedsAndNeverNarrowsBeforeTheAttempt) {
    using Steps = std::vector<std::string>;
    EXPECT_EQ(steps_of("gemini", Mode::plan),
              (Steps{"switch_mode exit_plan_mode", "write_file", "shell"}));
    EXPECT_EQ(steps_of("gemini", Mode::default_mode),
              (Steps{"switch_mode enter_plan_mode", "switch_mode exit_plan_mode", "write_file",
                     "shell"}));
    EXPECT_EQ(steps_of("claude", Mode::plan),
              (Steps{"switch_mode ExitPlanMode", "write_file", "shell"}));
    EXPECT_EQ(
        steps_of("claude", Mode::accept_edits),
        (Steps{"switch_mode EnterPlanMode", "switch_mode ExitPlanMode", "write_file", "shell"}));
    EXPECT_EQ(steps_of("qwen", Mode::default_mode),
              (Steps{"switch_mode exit_plan_mode", "write_file", "shell"}));
}

} // namespace
} // namespace sonata::probes
