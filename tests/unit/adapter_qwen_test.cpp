// The qwen mode table cell by cell (whole invocations), the `approval_mode` option in qwen's own
// spellings, its forbidden flags, resume form and endpoint injection.
#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "tests/support/mode_table.hpp"

namespace sonata::testing {
namespace adapter_qwen_test {

using Strings = std::vector<std::string>;
using Options = std::map<std::string, std::string>;

const Strings k_unset{"IS_SANDBOX",
                      "QWEN_SANDBOX",
                      "QWEN_CODE_SYSTEM_SETTINGS_PATH",
                      "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
                      "QWEN_CODE_TRUSTED_FOLDERS_PATH",
                      "QWEN_HOME"};
const Strings k_read_only{"write-withheld", "shell-write-withheld", "delegation-escape",
                          "self-promotion", "hostile-workspace",    "mcp-reachability",
                          "tool-census"};
const Strings k_asks{"rm-prompt", "delegation-escape", "self-promotion", "hostile-workspace",
                     "tool-census"};
const Strings k_edits{"outside-workspace-write", "hostile-workspace", "tool-census", "rm-prompt"};
const std::string k_default_note =
    "headless: actions that need approval are withheld or refused, not asked";
const std::string k_edit_note =
    "headless: edits run unasked; commands that need approval are withheld or "
    "refused, not asked";
const std::string k_key = "sonata-probe-key-0000000000000000";
const std::string k_bare_note =
    "--bare: qwen's settings files (system, user and the repository's) are not read, so "
    "credentials must come from the environment or flags";

// `qwen --approval-mode <tail[0]> --bare <tail[1..]>`; every tier ends its notes with --bare's.
Invocation qwen(Strings tail, Strings relies, Strings notes) {
    Invocation inv;
    inv.argv = {"qwen", "--approval-mode", tail.front(), "--bare"};
    inv.argv.insert(inv.argv.end(), tail.begin() + 1, tail.end());
    inv.env_unset = k_unset;
    inv.prompt = PromptChannel::stdin_pipe;
    inv.relies_on = std::move(relies);
    notes.push_back(k_bare_note);
    inv.notes = std::move(notes);
    return inv;
}

PlanCase dispatch(Mode parent, Options options = {}, RoleKind role = RoleKind::write) {
    return plan_case("qwen", parent, role, std::move(options));
}

PlanCase resumed_plan() {
    PlanCase plan = dispatch(Mode::plan);
    plan.resume = "sess-1";
    plan.model = "qwen3-coder";
    return plan;
}

Strings with(Strings base, const std::string& more) {
    base.push_back(more);
    return base;
}

const std::vector<TableCell> k_cells{
    {"plan", dispatch(Mode::plan), Mode::plan, qwen({"plan"}, k_read_only, {})},
    {"read_only_role_in_accept_edits", dispatch(Mode::accept_edits, {}, RoleKind::read_only),
     Mode::plan, qwen({"plan"}, k_read_only, {})},
    {"default_refuses_headless", dispatch(Mode::default_mode), Mode::default_mode,
     qwen({"default"}, k_asks, {k_default_note})},
    {"accept_edits", dispatch(Mode::accept_edits), Mode::accept_edits,
     qwen({"auto-edit"}, guarded(k_edits), {k_edit_note})},
    {"bypass", dispatch(Mode::bypass_permissions), Mode::bypass_permissions,
     qwen({"yolo"}, {}, {})},
    {"bypass_without_bypass",
     dispatch(Mode::bypass_permissions, {{"dangerously_skip_permissions", "false"}}),
     Mode::bypass_permissions,
     qwen({"auto-edit"}, k_edits,
          {"dangerously_skip_permissions=false: --approval-mode auto-edit instead of yolo",
           k_edit_note})},
    {"option_narrows_bypass_to_edits",
     dispatch(Mode::bypass_permissions, {{"approval_mode", "auto-edit"}}), Mode::bypass_permissions,
     qwen({"auto-edit"}, k_edits, {"approval_mode=auto-edit: narrower than yolo", k_edit_note})},
    {"option_narrows_default_to_plan", dispatch(Mode::default_mode, {{"approval_mode", "plan"}}),
     Mode::default_mode,
     qwen({"plan"}, k_read_only, {"approval_mode=plan: narrower than default"})},
    {"plan_resumed_with_model", resumed_plan(), Mode::plan,
     qwen({"plan", "-m", "qwen3-coder", "--resume", "sess-1"},
          with(k_read_only, "resume-keeps-mode"), {})},
};

class QwenTable : public ::testing::TestWithParam<TableCell> {};

TEST_P(QwenTable, DecidesTheWholeInvocation) { expect_cell(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Qwen, QwenTable, ::testing::ValuesIn(k_cells), cell_name);

TEST(Qwen, AWiderApprovalModeIsAnErrorNamingTheOption) {
    const Error error =
        decide_error(dispatch(Mode::default_mode, {{"approval_mode", "auto-edit"}}));
    EXPECT_EQ(error.code, ExitCode::usage);
    EXPECT_EQ(error.message,
              "option approval_mode=auto-edit would widen what this mode allows, and options "
              "may only narrow: qwen in default mode gets at most --approval-mode default");
}

TEST(Qwen, GeminisSpellingIsNotQwens) {
    const Error error =
        decide_error(dispatch(Mode::bypass_permissions, {{"approval_mode", "auto_edit"}}));
    EXPECT_EQ(error.code, ExitCode::usage);
    EXPECT_EQ(error.message,
              "option approval_mode has invalid value 'auto_edit' (did you mean 'auto-edit'?); "
              "valid values: plan, default, auto-edit, yolo");
}

TEST(Qwen, YoloFlagsAndToolGrantsAreForbidden) {
    EXPECT_EQ(extra_args_error(dispatch(Mode::bypass_permissions), {"--yolo"}).message,
              "flag '--yolo' is forbidden for qwen in bypassPermissions mode (config)");
    EXPECT_EQ(extra_args_error(dispatch(Mode::plan), {"--mcp-config", "{}"}).message,
              "flag '--mcp-config' is forbidden for qwen in plan mode (config)");
    EXPECT_EQ(extra_args_error(dispatch(Mode::accept_edits), {"--add-dir", "/elsewhere"}).message,
              "flag '--add-dir' is forbidden for qwen in acceptEdits mode (config)");
}

adapters::EndpointInjection inject(const PlanCase& plan) {
    auto decision = decide_case(plan);
    EXPECT_TRUE(decision && decision->runs());
    const auto& adapter = **adapters::find_adapter("qwen");
    auto injected =
        adapter.inject_endpoint(decision->invocation(), {"http://127.0.0.1:4242", "/h", "/w"});
    EXPECT_TRUE(injected);
    return injected ? *injected : adapters::EndpointInjection{};
}

const Strings k_auth{"qwen",
                     "--auth-type",
                     "openai",
                     "--openai-base-url",
                     "http://127.0.0.1:4242/v1",
                     "--openai-api-key",
                     k_key};

TEST(Qwen, EndpointInjectionAddsOpenAiFlagsAndTheProbeModel) {
    EXPECT_EQ((*adapters::find_adapter("qwen"))->protocol(), adapters::WireProtocol::openai_chat);
    const auto fresh = inject(dispatch(Mode::plan));
    Invocation want = qwen({"plan"}, k_read_only, {});
    want.argv = k_auth;
    want.argv.insert(want.argv.end(),
                     {"-m", "sonata-probe-model", "--approval-mode", "plan", "--bare"});
    EXPECT_EQ(fresh.invocation, want) << show(fresh.invocation);
    EXPECT_EQ(
        files_of(fresh),
        (std::vector<std::pair<std::string, std::string>>{
            {"/h/.qwen/settings.json",
             R"({"general":{"enableAutoUpdate":false},)"
             R"("privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}})"}}));

    const auto resumed = inject(resumed_plan());
    want.argv = k_auth;
    want.argv.insert(want.argv.end(), {"--approval-mode", "plan", "--bare", "-m",
                                       "sonata-probe-model", "--resume", "sess-1"});
    want.relies_on.emplace_back("resume-keeps-mode");
    EXPECT_EQ(resumed.invocation, want) << show(resumed.invocation);
}

TEST(Qwen, ToolVocabularyIsWhatItOffered) {
    const auto tools = (*adapters::find_adapter("qwen"))->tools();
    EXPECT_EQ(tools.write, Strings{"write_file"});
    EXPECT_EQ(std::tie(tools.write_path_field, tools.write_content_field, tools.shell_command_field,
                       tools.delegate_prompt_field),
              std::make_tuple(std::string("file_path"), std::string("content"),
                              std::string("command"), std::string("prompt")));
    EXPECT_TRUE(tools.write_path_absolute);
    EXPECT_EQ(tools.shell, Strings{"run_shell_command"});
    EXPECT_EQ(tools.delegate, Strings{"agent"});
    EXPECT_EQ(tools.mode_switch, Strings{"exit_plan_mode"});
}

} // namespace adapter_qwen_test
} // namespace sonata::testing
