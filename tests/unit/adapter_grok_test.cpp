// The grok mode table cell by cell (whole invocations and refusals), its forbidden flags and
// its resume form.
#include <gtest/gtest.h>

#include "tests/support/mode_table.hpp"

namespace sonata::testing {
namespace adapter_grok_test {

using Strings = std::vector<std::string>;

const Strings k_read_only{"write-withheld", "shell-write-withheld", "delegation-escape",
                          "self-promotion", "hostile-workspace",    "mcp-reachability",
                          "tool-census"};
const Strings k_edits{"outside-workspace-write", "hostile-workspace", "tool-census"};
const std::string k_temp_note = "the sandbox also lets grok write ~/.grok, /tmp and /var/tmp";
const std::string k_unasked_note = "headless: commands run unasked inside the workspace sandbox";
const std::string k_no_mode_note =
    "dangerously_skip_permissions=false: no --permission-mode "
    "bypassPermissions, so tool calls that need approval are cancelled";

Invocation headless(Strings argv, Strings relies, Strings notes) {
    return headless_invocation(std::move(argv), std::move(relies), std::move(notes));
}

PlanCase dispatch(Mode parent, RoleKind role = RoleKind::write) {
    return plan_case("grok", parent, role);
}

const Refusal k_default_refusal{
    "grok runs headless with tool approval handed to its sandbox: it cannot ask first, so default "
    "(\"ask me first\") cannot be honoured",
    {"dispatch in acceptEdits mode (grok --sandbox workspace)",
     "use harness codex (its interactive TUI asks)",
     "use harness reasonix (its interactive TUI asks)"}};

PlanCase resumed_plan() {
    PlanCase plan = dispatch(Mode::plan);
    plan.resume = "sess-1";
    plan.model = "grok-4.5";
    return plan;
}

const std::vector<TableCell> k_cells{
    {"plan", dispatch(Mode::plan), Mode::plan,
     headless({"grok", "--sandbox", "read-only", "--permission-mode", "bypassPermissions", "-p"},
              k_read_only, {k_temp_note})},
    {"read_only_role_in_bypass", dispatch(Mode::bypass_permissions, RoleKind::read_only),
     Mode::plan,
     headless({"grok", "--sandbox", "read-only", "--permission-mode", "bypassPermissions", "-p"},
              k_read_only, {k_temp_note})},
    {"default_is_refused", dispatch(Mode::default_mode), Mode::default_mode, k_default_refusal},
    {"accept_edits", dispatch(Mode::accept_edits), Mode::accept_edits,
     headless({"grok", "--sandbox", "workspace", "--permission-mode", "bypassPermissions", "-p"},
              guarded(k_edits), {k_unasked_note, k_temp_note})},
    {"bypass", dispatch(Mode::bypass_permissions), Mode::bypass_permissions,
     headless({"grok", "--sandbox", "off", "--permission-mode", "bypassPermissions", "-p"}, {},
              {})},
    {"bypass_without_bypass", no_bypass(dispatch(Mode::bypass_permissions)),
     Mode::bypass_permissions,
     headless({"grok", "--sandbox", "workspace", "-p"}, k_edits,
              {"dangerously_skip_permissions=false: --sandbox workspace instead of off",
               k_no_mode_note, k_temp_note})},
    {"plan_without_bypass", no_bypass(dispatch(Mode::plan)), Mode::plan,
     headless({"grok", "--sandbox", "read-only", "-p"}, k_read_only,
              {k_no_mode_note, k_temp_note})},
    {"plan_resumed_with_model", resumed_plan(), Mode::plan,
     headless({"grok", "--sandbox", "read-only", "--permission-mode", "bypassPermissions",
               "--model", "grok-4.5", "--resume", "sess-1", "-p"},
              {"write-withheld", "shell-write-withheld", "delegation-escape", "self-promotion",
               "hostile-workspace", "mcp-reachability", "tool-census", "resume-keeps-mode"},
              {k_temp_note})},
};

class GrokTable : public ::testing::TestWithParam<TableCell> {};

TEST_P(GrokTable, DecidesTheWholeOutcome) { expect_cell(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Grok, GrokTable, ::testing::ValuesIn(k_cells), cell_name);

TEST(Grok, AlwaysApproveIsForbiddenEvenInBypass) {
    const Error error = extra_args_error(dispatch(Mode::bypass_permissions), {"--always-approve"});
    EXPECT_EQ(error.code, ExitCode::config);
    EXPECT_EQ(error.message,
              "flag '--always-approve' is forbidden for grok in bypassPermissions mode (config)");
}

TEST(Grok, AllowRulesAndAnotherWorkingDirectoryAreForbiddenBelowBypass) {
    EXPECT_EQ(extra_args_error(dispatch(Mode::plan), {"--allow", "Bash(*)"}).message,
              "flag '--allow' is forbidden for grok in plan mode (config)");
    EXPECT_EQ(extra_args_error(dispatch(Mode::accept_edits), {"--cwd=/"}).message,
              "flag '--cwd' is forbidden for grok in acceptEdits mode (config)");
}

TEST(Grok, ConfiguredArgumentsGoBeforeThePromptFlag) {
    PlanCase plan = dispatch(Mode::accept_edits);
    plan.extra_args = {"--model", "grok-code"};
    const auto decision = decide_case(plan);
    ASSERT_TRUE(decision && decision->runs());
    const auto& argv = decision->invocation().argv;
    ASSERT_GE(argv.size(), 3U);
    EXPECT_EQ(argv.back(), "-p");
    EXPECT_EQ((std::vector<std::string>{argv[argv.size() - 3], argv[argv.size() - 2]}),
              (std::vector<std::string>{"--model", "grok-code"}));
}

} // namespace adapter_grok_test
} // namespace sonata::testing
