// How an invocation becomes a process, for probe cells and dispatches alike (dispatch/launch.hpp):
// the prompt goes where the prompt channel says, the invocation's variables win over the base
// environment, and a variable the planner unsets never reaches the harness.
#include <gtest/gtest.h>

#include "dispatch/launch.hpp"

namespace sonata::dispatch {
namespace {

Invocation invocation(PromptChannel channel) {
    Invocation inv;
    inv.argv = {"harness", "-p", "--flag"};
    inv.prompt = channel;
    inv.env = {{"SET_BY_PLAN", "plan"}, {"BOTH", "plan"}};
    inv.env_unset = {"IS_SANDBOX", "BOTH"};
    return inv;
}

TEST(DispatchLaunch, ThePromptGoesWhereTheChannelSays) {
    const auto arg = headless_request(invocation(PromptChannel::argument), "the task", {}, "/w");
    EXPECT_EQ(arg.argv, (std::vector<std::string>{"harness", "-p", "--flag", "the task"}));
    EXPECT_EQ(arg.stdin_data, std::nullopt);
    EXPECT_EQ(arg.cwd, "/w");
    const auto in = headless_request(invocation(PromptChannel::stdin_pipe), "the task", {}, "/w");
    EXPECT_EQ(in.argv, (std::vector<std::string>{"harness", "-p", "--flag"}));
    EXPECT_EQ(in.stdin_data, std::optional<std::string>("the task"));
}

TEST(DispatchLaunch, PlannedVariablesWinAndUnsetOnesNeverReachTheHarness) {
    const Environment base{
        {"PATH", "/bin"}, {"IS_SANDBOX", "1"}, {"SET_BY_PLAN", "inherited"}, {"BOTH", "inherited"}};
    EXPECT_EQ(child_environment(base, invocation(PromptChannel::argument)),
              (Environment{{"PATH", "/bin"}, {"SET_BY_PLAN", "plan"}}));
}

TEST(DispatchLaunch, TheTuiSpecRunsTheArgvAsPlanned) {
    const auto spec = tui_spec(invocation(PromptChannel::tmux_keys), {{"A", "1"}}, "/w", "/sock");
    EXPECT_EQ(spec.argv, (std::vector<std::string>{"harness", "-p", "--flag"}));
    EXPECT_EQ(spec.env, (Environment{{"A", "1"}}));
    EXPECT_EQ(spec.cwd, "/w");
    EXPECT_EQ(spec.socket_dir, "/sock");
}

} // namespace
} // namespace sonata::dispatch
