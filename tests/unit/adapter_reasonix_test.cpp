// The reasonix mode table cell by cell (whole invocations), its forbidden flags, resume forms and
// endpoint injection.
#include <algorithm>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "tests/support/mode_table.hpp"

namespace sonata::testing {
namespace adapter_reasonix_test {

using Strings = std::vector<std::string>;

const Strings k_unset{"IS_SANDBOX", "REASONIX_HOME"};
const Strings k_read_only{"write-withheld", "shell-write-withheld", "delegation-escape",
                          "self-promotion", "hostile-workspace",    "mcp-reachability",
                          "tool-census"};
const Strings k_edits{"outside-workspace-write", "hostile-workspace", "tool-census", "rm-prompt"};
const Strings k_tui{"rm-prompt",         "delegation-escape", "self-promotion",
                    "hostile-workspace", "tool-census",       "trust-dialog"};
const std::string k_plan_note =
    "read-only: no report.md can be written, the final message is the report";
const std::string k_edit_note =
    "headless: edits run unasked; other actions that would be asked are refused";
const Strings k_tui_notes{"interactive TUI in tmux: approval cards surface as PAUSED"};

Invocation headless(Strings argv, Strings relies, Strings notes) {
    return headless_invocation(std::move(argv), std::move(relies), std::move(notes), k_unset);
}

Invocation tui(Strings argv, Strings relies) {
    Invocation inv = headless(std::move(argv), std::move(relies), k_tui_notes);
    inv.env["REASONIX_TELEMETRY"] = "0";
    inv.prompt = PromptChannel::tmux_keys;
    inv.interactive = true;
    inv.report = ReportSource::pane_text;
    return inv;
}

Strings with(Strings base, const std::string& more) {
    base.push_back(more);
    return base;
}

PlanCase dispatch(Mode parent, RoleKind role = RoleKind::write) {
    return plan_case("reasonix", parent, role);
}

PlanCase resumed(PlanCase plan) {
    plan.resume = "sess-1";
    plan.model = "deepseek-pro";
    return plan;
}

const std::vector<TableCell> k_cells{
    {"plan", dispatch(Mode::plan), Mode::plan,
     headless({"reasonix", "run", "--permission-mode", "dontAsk", "--"}, k_read_only,
              {k_plan_note})},
    {"read_only_role_in_bypass", dispatch(Mode::bypass_permissions, RoleKind::read_only),
     Mode::plan,
     headless({"reasonix", "run", "--permission-mode", "dontAsk", "--"}, k_read_only,
              {k_plan_note})},
    {"default_is_the_tui", dispatch(Mode::default_mode), Mode::default_mode,
     tui({"reasonix", "--permission-mode", "ask"}, k_tui)},
    {"accept_edits", dispatch(Mode::accept_edits), Mode::accept_edits,
     headless({"reasonix", "run", "--permission-mode", "dontAsk", "--allowed-tools", "Edit", "--"},
              guarded(k_edits), {k_edit_note})},
    {"bypass", dispatch(Mode::bypass_permissions), Mode::bypass_permissions,
     headless({"reasonix", "run", "--permission-mode", "bypassPermissions", "--"}, {}, {})},
    {"bypass_without_bypass", no_bypass(dispatch(Mode::bypass_permissions)),
     Mode::bypass_permissions,
     headless({"reasonix", "run", "--permission-mode", "dontAsk", "--allowed-tools", "Edit", "--"},
              k_edits, {"dangerously_skip_permissions=false: runs as acceptEdits", k_edit_note})},
    {"plan_resumed_with_model", resumed(dispatch(Mode::plan)), Mode::plan,
     headless({"reasonix", "run", "--permission-mode", "dontAsk", "--model", "deepseek-pro",
               "--resume", "sess-1", "--"},
              with(k_read_only, "resume-keeps-mode"), {k_plan_note})},
    {"tui_resumed_with_model", resumed(dispatch(Mode::default_mode)), Mode::default_mode,
     tui({"reasonix", "--permission-mode", "ask", "--model", "deepseek-pro", "--resume", "sess-1"},
         with(k_tui, "resume-keeps-mode"))},
};

class ReasonixTable : public ::testing::TestWithParam<TableCell> {};

TEST_P(ReasonixTable, DecidesTheWholeInvocation) { expect_cell(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Reasonix, ReasonixTable, ::testing::ValuesIn(k_cells), cell_name);

TEST(Reasonix, AutoFlagsAreForbiddenInEveryMode) {
    for (Mode mode :
         {Mode::plan, Mode::default_mode, Mode::accept_edits, Mode::bypass_permissions}) {
        for (const char* flag : {"-y", "--auto", "--yolo"}) {
            const Error error = extra_args_error(dispatch(mode), {flag});
            EXPECT_EQ(error.code, ExitCode::config);
            EXPECT_EQ(error.message, "flag '" + std::string(flag) +
                                         "' is forbidden for reasonix in " +
                                         std::string(to_string(mode)) + " mode (config)");
        }
    }
}

TEST(Reasonix, ExtraDirectoriesOnlyInBypassAndBeforeThePromptSeparator) {
    const Error error = extra_args_error(dispatch(Mode::accept_edits), {"--add-dir", "/elsewhere"});
    EXPECT_EQ(error.message,
              "flag '--add-dir' is forbidden for reasonix in acceptEdits mode (config)");

    PlanCase plan = dispatch(Mode::bypass_permissions);
    plan.extra_args = {"--add-dir", "/elsewhere"};
    auto decision = decide_case(plan);
    ASSERT_TRUE(decision && decision->runs());
    EXPECT_EQ(decision->invocation().argv,
              (Strings{"reasonix", "run", "--permission-mode", "bypassPermissions", "--add-dir",
                       "/elsewhere", "--"}));
}

TEST(Reasonix, EndpointInjectionMakesAPrivateHomeWithOneProvider) {
    auto decision = decide_case(resumed(dispatch(Mode::plan)));
    ASSERT_TRUE(decision && decision->runs());
    const auto& adapter = **adapters::find_adapter("reasonix");
    EXPECT_EQ(adapter.protocol(), adapters::WireProtocol::openai_chat);
    auto injected =
        adapter.inject_endpoint(decision->invocation(), {"http://127.0.0.1:4242", "/h", "/w"});
    ASSERT_TRUE(injected) << injected.error().message;

    Invocation want = headless({"reasonix", "run", "--permission-mode", "dontAsk", "--model",
                                "sonata-probe/sonata-probe-model", "--resume", "sess-1", "--"},
                               with(k_read_only, "resume-keeps-mode"), {k_plan_note});
    // The SONATA_PROBE_* variables reach the fixture harness; the files reach a real reasonix.
    want.env = {{"REASONIX_HOME", "/h/.reasonix"},
                {"SONATA_PROBE_API_KEY", "sonata-probe-key-0000000000000000"},
                {"SONATA_PROBE_BASE_URL", "http://127.0.0.1:4242/v1"},
                {"SONATA_PROBE_MODEL", "sonata-probe-model"}};
    want.env_unset = {"IS_SANDBOX"};
    EXPECT_EQ(injected->invocation, want) << show(injected->invocation);
    const std::string config =
        "# Reasonix home of one sonata probe run: the scripted model server is the only provider.\n"
        "config_version = 10\n"
        "default_model = \"sonata-probe/sonata-probe-model\"\n\n"
        "[telemetry]\n"
        "cli_metrics = \"off\"\n\n"
        "[[providers]]\n"
        "name = \"sonata-probe\"\n"
        "kind = \"openai\"\n"
        "base_url = \"http://127.0.0.1:4242/v1\"\n"
        "models = [\"sonata-probe-model\"]\n"
        "default = \"sonata-probe-model\"\n"
        "api_key_env = \"SONATA_PROBE_API_KEY\"\n";
    EXPECT_EQ(
        files_of(*injected),
        (std::vector<std::pair<std::string, std::string>>{
            {"/h/.reasonix/config.toml", config},
            {"/h/.reasonix/.env", "SONATA_PROBE_API_KEY=sonata-probe-key-0000000000000000\n"}}));
}

TEST(Reasonix, ToolVocabularyReachesWhatTheRealBinaryOffers) {
    // Measured on 1.38.11: write_file{path,content} and bash{command}; the model server takes the
    // first name a harness offers, so other names may come first.
    const auto tools = (*adapters::find_adapter("reasonix"))->tools();
    EXPECT_EQ(tools.write, Strings{"write_file"});
    EXPECT_EQ(std::tie(tools.write_path_field, tools.write_content_field),
              std::make_tuple(std::string("path"), std::string("content")));
    EXPECT_EQ(tools.shell_command_field, "command");
    EXPECT_FALSE(tools.write_path_absolute);
    EXPECT_NE(std::find(tools.shell.begin(), tools.shell.end(), "bash"), tools.shell.end());
}

} // namespace adapter_reasonix_test
} // namespace sonata::testing
