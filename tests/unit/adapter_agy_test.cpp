// The agy mode table cell by cell (whole invocations and refusals), the `sandbox` option, its
// forbidden flags and its resume form.
#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "tests/support/mode_table.hpp"

namespace sonata::testing {
namespace {

using Strings = std::vector<std::string>;
using Options = std::map<std::string, std::string>;

Invocation headless(Strings argv, Strings relies, Strings notes) {
    return headless_invocation(std::move(argv), std::move(relies), std::move(notes));
}

PlanCase dispatch(Mode parent, Options options = {}, RoleKind role = RoleKind::write) {
    return plan_case("agy", parent, role, std::move(options));
}

PlanCase resumed_bypass() {
    PlanCase plan = dispatch(Mode::bypass_permissions);
    plan.resume = "sess-1";
    plan.model = "Gemini 3.1 Pro (High)";
    return plan;
}

const Refusal k_plan_refusal{
    "agy has no read-only mode: --sandbox restricts terminal execution, and until it is measured "
    "to "
    "withhold writes (write-withheld, shell-write-withheld) a read-only run cannot be promised",
    {"use harness gemini (--approval-mode plan)", "use harness codex (--sandbox read-only)",
     "use harness claude (plan mode)"}};
const Refusal k_default_refusal{
    "agy cannot ask first: headless it either skips every permission or has no one to answer",
    {"use harness codex (its interactive TUI asks)",
     "use harness reasonix (its interactive TUI asks)",
     "dispatch from a bypassPermissions session"}};
const Refusal k_edits_refusal{"agy has no edit-only tier: its one mapping skips every permission",
                              {"use harness gemini (--approval-mode auto_edit)",
                               "use harness codex (--sandbox workspace-write)",
                               "dispatch from a bypassPermissions session"}};

const Invocation k_bypass = headless({"agy", "--dangerously-skip-permissions", "-p"}, {}, {});
const std::string k_unmeasured =
    ": --sandbox instead of --dangerously-skip-permissions; what it withholds is "
    "not measured";
const Options k_no_bypass{{"dangerously_skip_permissions", "false"}};

const std::vector<TableCell> k_cells{
    {"plan_is_refused", dispatch(Mode::plan), Mode::plan, k_plan_refusal},
    {"plan_with_sandbox_is_refused", dispatch(Mode::plan, {{"sandbox", "true"}}), Mode::plan,
     k_plan_refusal},
    {"read_only_role_in_bypass", dispatch(Mode::bypass_permissions, {}, RoleKind::read_only),
     Mode::plan, k_plan_refusal},
    {"default_is_refused", dispatch(Mode::default_mode), Mode::default_mode, k_default_refusal},
    {"accept_edits_is_refused", dispatch(Mode::accept_edits), Mode::accept_edits, k_edits_refusal},
    {"bypass", dispatch(Mode::bypass_permissions), Mode::bypass_permissions, k_bypass},
    {"bypass_sandbox_false", dispatch(Mode::bypass_permissions, {{"sandbox", "false"}}),
     Mode::bypass_permissions, k_bypass},
    {"bypass_sandbox_true", dispatch(Mode::bypass_permissions, {{"sandbox", "true"}}),
     Mode::bypass_permissions,
     headless({"agy", "--sandbox", "-p"}, {}, {"sandbox=true" + k_unmeasured})},
    {"bypass_without_bypass", dispatch(Mode::bypass_permissions, k_no_bypass),
     Mode::bypass_permissions,
     headless({"agy", "--sandbox", "-p"}, {},
              {"dangerously_skip_permissions=false" + k_unmeasured})},
    {"bypass_sandbox_true_without_bypass",
     dispatch(Mode::bypass_permissions,
              {{"sandbox", "true"}, {"dangerously_skip_permissions", "false"}}),
     Mode::bypass_permissions,
     headless({"agy", "--sandbox", "-p"}, {}, {"sandbox=true" + k_unmeasured})},
    {"bypass_resumed_with_model", resumed_bypass(), Mode::bypass_permissions,
     headless({"agy", "--dangerously-skip-permissions", "--model", "Gemini 3.1 Pro (High)",
               "--conversation", "sess-1", "-p"},
              {"resume-keeps-mode"}, {})},
};

class AgyTable : public ::testing::TestWithParam<TableCell> {};

TEST_P(AgyTable, DecidesTheWholeOutcome) { expect_cell(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Agy, AgyTable, ::testing::ValuesIn(k_cells), cell_name);

TEST(Agy, SandboxOptionIsABoolean) {
    for (Mode mode : {Mode::plan, Mode::bypass_permissions}) {
        const Error error = decide_error(dispatch(mode, {{"sandbox", "yes"}}));
        EXPECT_EQ(error.code, ExitCode::usage);
        EXPECT_EQ(error.message,
                  "option sandbox has invalid value 'yes'; valid values: true, false");
    }
}

TEST(Agy, TheBypassFlagIsForbiddenBelowBypass) {
    EXPECT_EQ(
        extra_args_error(dispatch(Mode::accept_edits), {"--dangerously-skip-permissions"}).message,
        "flag '--dangerously-skip-permissions' is forbidden for agy in acceptEdits mode (config)");
}

TEST(Agy, ConfiguredArgumentsGoBeforeThePromptFlag) {
    // `-p` takes the prompt as its value, so it must stay last.
    PlanCase plan = dispatch(Mode::bypass_permissions);
    plan.extra_args = {"--model", "Gemini 3.1 Pro (High)"};
    const auto decision = decide_case(plan);
    ASSERT_TRUE(decision && decision->runs());
    EXPECT_EQ(decision->invocation().argv, (Strings{"agy", "--dangerously-skip-permissions",
                                                    "--model", "Gemini 3.1 Pro (High)", "-p"}));
}

TEST(Agy, OnlyInfrastructureFailuresAreWorthARetry) {
    auto agy = adapters::find_adapter("agy");
    ASSERT_TRUE(agy);
    const auto why = [&](const std::string& err, int exit_code, const std::string& out = "") {
        return (*agy)->infrastructure_failure(out, err, exit_code);
    };
    EXPECT_EQ(why("Error: fetch failed (ECONNRESET)\n", 1),
              "agy exited 1 on a network failure (\"econnreset\" in its output)");
    EXPECT_EQ(why("Your token has expired. Please log in again.\n", 1),
              "agy exited 1 on an expired login (\"token has expired\" in its output)");
    EXPECT_EQ(why("", 2, "429 Too Many Requests: RESOURCE_EXHAUSTED\n"),
              "agy exited 2 on an exhausted quota (\"resource_exhausted\" in its output)");
    // Never a run that exited 0, a task's own failure, a model error or an abort.
    EXPECT_EQ(why("fetch failed (ECONNRESET)\n", 0), "");
    EXPECT_EQ(why("Error: the tests do not pass\n", 1), "");
    EXPECT_EQ(why("Error: model returned an invalid tool call\n", 1), "");
    EXPECT_EQ(why("Request aborted by the user (ECONNRESET)\n", 130), "");
    // Only the end of the output says why it stopped: a task that talked of networks earlier
    // and then failed is not retried.
    EXPECT_EQ(why("fetch failed while testing the proxy\n" + std::string(5000, '.') +
                      "\nError: assertion failed\n",
                  1),
              "");
}

} // namespace
} // namespace sonata::testing
