// The muse mode table cell by cell (whole invocations and refusals), its forbidden flags and
// its resume form.
#include <gtest/gtest.h>

#include "tests/support/mode_table.hpp"

namespace sonata::testing {
namespace adapter_muse_test {

using Strings = std::vector<std::string>;

const Strings k_read_only{"write-withheld", "shell-write-withheld", "delegation-escape",
                          "self-promotion", "hostile-workspace",    "mcp-reachability",
                          "tool-census"};
const Strings k_edits{"outside-workspace-write", "hostile-workspace", "tool-census"};
const std::string k_unasked_note = "headless: actions run unasked inside muse's process sandbox";

Invocation headless(Strings argv, Strings relies, Strings notes) {
    return headless_invocation(std::move(argv), std::move(relies), std::move(notes));
}

PlanCase dispatch(Mode parent, RoleKind role = RoleKind::write) {
    return plan_case("muse", parent, role);
}

PlanCase resumed(PlanCase plan) {
    plan.resume = "sess-1";
    plan.model = "muse-large";
    return plan;
}

const Refusal k_default_refusal{
    "muse exec cannot raise an approval prompt, and whether --disable-approval refuses or runs "
    "unapproved actions is not measured",
    {"dispatch in acceptEdits mode (muse exec --disable-approval, process sandbox kept)",
     "use harness codex (its interactive TUI asks)",
     "use harness reasonix (its interactive TUI asks)"}};

const std::vector<TableCell> k_cells{
    {"plan", dispatch(Mode::plan), Mode::plan,
     headless({"muse", "exec", "--disable-approval", "--disable-write", "--disable-shell"},
              k_read_only, {})},
    {"read_only_role_in_accept_edits", dispatch(Mode::accept_edits, RoleKind::read_only),
     Mode::plan,
     headless({"muse", "exec", "--disable-approval", "--disable-write", "--disable-shell"},
              k_read_only, {})},
    {"default_is_refused", dispatch(Mode::default_mode), Mode::default_mode, k_default_refusal},
    {"accept_edits", dispatch(Mode::accept_edits), Mode::accept_edits,
     headless({"muse", "exec", "--disable-approval"}, guarded(k_edits), {k_unasked_note})},
    {"bypass", dispatch(Mode::bypass_permissions), Mode::bypass_permissions,
     headless({"muse", "exec", "--disable-approval", "--yolo"}, {},
              {"--yolo also turns the process sandbox off and trusts the workspace (its rules and "
               "skills load)"})},
    {"bypass_without_bypass", no_bypass(dispatch(Mode::bypass_permissions)),
     Mode::bypass_permissions,
     headless({"muse", "exec", "--disable-approval"}, k_edits,
              {"dangerously_skip_permissions=false: no --yolo, the process sandbox stays on",
               k_unasked_note})},
    {"accept_edits_resumed_with_model", resumed(dispatch(Mode::accept_edits)), Mode::accept_edits,
     headless(
         {"muse", "exec", "--disable-approval", "--model", "muse-large", "--session-id", "sess-1"},
         guarded(
             {"outside-workspace-write", "hostile-workspace", "tool-census", "resume-keeps-mode"}),
         {k_unasked_note})},
};

class MuseTable : public ::testing::TestWithParam<TableCell> {};

TEST_P(MuseTable, DecidesTheWholeOutcome) { expect_cell(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Muse, MuseTable, ::testing::ValuesIn(k_cells), cell_name);

TEST(Muse, SandboxAndTrustFlagsAreForbiddenBelowBypass) {
    EXPECT_EQ(extra_args_error(dispatch(Mode::accept_edits), {"--disable-sandbox"}).message,
              "flag '--disable-sandbox' is forbidden for muse in acceptEdits mode (config)");
    EXPECT_EQ(extra_args_error(dispatch(Mode::accept_edits), {"--trust-workspace"}).message,
              "flag '--trust-workspace' is forbidden for muse in acceptEdits mode (config)");
    EXPECT_EQ(extra_args_error(dispatch(Mode::plan), {"--enable-shell-tool"}).message,
              "flag '--enable-shell-tool' is forbidden for muse in plan mode (config)");
    EXPECT_EQ(extra_args_error(dispatch(Mode::plan), {"--yolo"}).message,
              "flag '--yolo' is forbidden for muse in plan mode (config)");
}

TEST(Muse, BypassTakesExtraArgumentsBeforeThePrompt) {
    PlanCase plan = dispatch(Mode::bypass_permissions);
    plan.extra_args = {"--disable-web-tools"};
    auto decision = decide_case(plan);
    ASSERT_TRUE(decision && decision->runs());
    EXPECT_EQ(decision->invocation().argv,
              (Strings{"muse", "exec", "--disable-approval", "--yolo", "--disable-web-tools"}));
}

} // namespace adapter_muse_test
} // namespace sonata::testing
