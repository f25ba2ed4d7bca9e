// The gemini mode table cell by cell (whole invocations), the `approval_mode` option (narrowing,
// widening, invalid), its forbidden flags, resume form and endpoint injection.
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "core/config.hpp"
#include "core/fs.hpp"
#include "core/process.hpp"
#include "tests/support/mode_table.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata::testing {
namespace adapter_gemini_test {

using Strings = std::vector<std::string>;
using Options = std::map<std::string, std::string>;

// GEMINI_CLI_TRUSTED_FOLDERS_PATH is not among them: the mapping sets it.
const Strings k_unset{"IS_SANDBOX",
                      "GEMINI_CLI_TRUST_WORKSPACE",
                      "GEMINI_SANDBOX",
                      "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
                      "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
                      "GEMINI_CLI_HOME"};
const Strings k_read_only{"write-withheld", "shell-write-withheld", "delegation-escape",
                          "self-promotion", "hostile-workspace",    "mcp-reachability",
                          "tool-census"};
const Strings k_asks{"rm-prompt", "delegation-escape", "self-promotion", "hostile-workspace",
                     "tool-census"};
const Strings k_edits{"outside-workspace-write", "hostile-workspace", "tool-census", "rm-prompt"};
const std::string k_trust =
    "--skip-trust: the workspace is trusted for this run, so its own settings, "
    "extensions and MCP servers load";
const std::string k_default_note =
    "headless: actions that need approval are withheld or refused, not asked";
const std::string k_edit_note =
    "headless: edits run unasked; commands that need approval are withheld or "
    "refused, not asked";

// The policy file's place when no support dir is given: the machine dir of sonata's environment.
std::string policy_path() {
    return machine_dir(current_environment()) + "/support/gemini-deny-mode-switch.toml";
}

// The empty trusted-folders file every invocation names, so that no folder the user trusted is.
std::string trusted_folders_path() {
    return machine_dir(current_environment()) + "/support/gemini-trusted-folders.json";
}

const std::string k_policy =
    "# Written by sonata: gemini's own mode switches stay off below yolo.\n"
    "[[rule]]\ntoolName = \"exit_plan_mode\"\ndecision = \"deny\"\npriority = 999\n\n"
    "[[rule]]\ntoolName = \"enter_plan_mode\"\ndecision = \"deny\"\npriority = 999\n";

Invocation gemini(const std::string& tier, Strings relies, Strings notes) {
    Invocation inv;
    inv.argv = {"gemini", "--approval-mode", tier, "--skip-trust"};
    if (tier != "yolo") inv.argv.insert(inv.argv.end(), {"--policy", policy_path()});
    inv.env = {{"GEMINI_CLI_TRUSTED_FOLDERS_PATH", trusted_folders_path()}};
    inv.env_unset = k_unset;
    inv.prompt = PromptChannel::stdin_pipe;
    inv.relies_on = std::move(relies);
    inv.notes = std::move(notes);
    return inv;
}

PlanCase dispatch(Mode parent, Options options = {}, RoleKind role = RoleKind::write) {
    return plan_case("gemini", parent, role, std::move(options));
}

PlanCase resumed_plan() {
    PlanCase plan = dispatch(Mode::plan);
    plan.resume = "sess-1";
    plan.model = "gemini-3.8-flash";
    return plan;
}

Invocation resumed_plan_invocation() {
    Invocation inv = gemini("plan", k_read_only, {k_trust});
    inv.argv.insert(inv.argv.end(), {"-m", "gemini-3.8-flash", "--resume", "sess-1"});
    inv.relies_on.emplace_back("resume-keeps-mode");
    return inv;
}

const std::vector<TableCell> k_cells{
    {"plan", dispatch(Mode::plan), Mode::plan, gemini("plan", k_read_only, {k_trust})},
    {"read_only_role_in_bypass", dispatch(Mode::bypass_permissions, {}, RoleKind::read_only),
     Mode::plan, gemini("plan", k_read_only, {k_trust})},
    {"default_refuses_headless", dispatch(Mode::default_mode), Mode::default_mode,
     gemini("default", k_asks, {k_default_note, k_trust})},
    {"accept_edits", dispatch(Mode::accept_edits), Mode::accept_edits,
     gemini("auto_edit", guarded(k_edits), {k_edit_note, k_trust})},
    {"bypass", dispatch(Mode::bypass_permissions), Mode::bypass_permissions,
     gemini("yolo", {}, {k_trust})},
    {"bypass_without_bypass",
     dispatch(Mode::bypass_permissions, {{"dangerously_skip_permissions", "false"}}),
     Mode::bypass_permissions,
     gemini("auto_edit", k_edits,
            {"dangerously_skip_permissions=false: --approval-mode auto_edit instead of yolo",
             k_edit_note, k_trust})},
    {"option_equal_to_the_tier", dispatch(Mode::accept_edits, {{"approval_mode", "auto_edit"}}),
     Mode::accept_edits, gemini("auto_edit", guarded(k_edits), {k_edit_note, k_trust})},
    {"option_narrows_bypass_to_plan",
     dispatch(Mode::bypass_permissions, {{"approval_mode", "plan"}}), Mode::bypass_permissions,
     gemini("plan", k_read_only, {"approval_mode=plan: narrower than yolo", k_trust})},
    {"option_narrows_edits_to_default",
     dispatch(Mode::accept_edits, {{"approval_mode", "default"}}), Mode::accept_edits,
     gemini("default", guarded(k_asks),
            {"approval_mode=default: narrower than auto_edit", k_default_note, k_trust})},
    {"plan_resumed_with_model", resumed_plan(), Mode::plan, resumed_plan_invocation()},
};

class GeminiTable : public ::testing::TestWithParam<TableCell> {};

TEST_P(GeminiTable, DecidesTheWholeInvocation) { expect_cell(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Gemini, GeminiTable, ::testing::ValuesIn(k_cells), cell_name);

std::string widening(const std::string& value, const std::string& why) {
    return "option approval_mode=" + value +
           " would widen what this mode allows, and options may only narrow: " + why;
}

TEST(Gemini, AWiderApprovalModeIsAnErrorNamingTheOption) {
    const Error edits = decide_error(dispatch(Mode::accept_edits, {{"approval_mode", "yolo"}}));
    EXPECT_EQ(edits.code, ExitCode::usage);
    EXPECT_EQ(
        edits.message,
        widening("yolo", "gemini in acceptEdits mode gets at most --approval-mode auto_edit"));

    const Error no_bypass = decide_error(
        dispatch(Mode::bypass_permissions,
                 {{"approval_mode", "yolo"}, {"dangerously_skip_permissions", "false"}}));
    EXPECT_EQ(no_bypass.message,
              widening("yolo",
                       "gemini in bypassPermissions mode gets at most --approval-mode auto_edit"));

    const Error read_only = decide_error(
        dispatch(Mode::bypass_permissions, {{"approval_mode", "default"}}, RoleKind::read_only));
    EXPECT_EQ(read_only.message,
              widening("default", "gemini in plan mode gets at most --approval-mode plan"));
}

TEST(Gemini, AnUnknownApprovalModeIsAnErrorWithASuggestion) {
    const Error error =
        decide_error(dispatch(Mode::accept_edits, {{"approval_mode", "auto-edit"}}));
    EXPECT_EQ(error.code, ExitCode::usage);
    EXPECT_EQ(error.message,
              "option approval_mode has invalid value 'auto-edit' (did you mean 'auto_edit'?); "
              "valid values: plan, default, auto_edit, yolo");
}

TEST(Gemini, YoloFlagsAreForbiddenInEveryMode) {
    EXPECT_EQ(extra_args_error(dispatch(Mode::bypass_permissions), {"-y"}).message,
              "flag '-y' is forbidden for gemini in bypassPermissions mode (config)");
    EXPECT_EQ(extra_args_error(dispatch(Mode::plan), {"--yolo"}).message,
              "flag '--yolo' is forbidden for gemini in plan mode (config)");
    EXPECT_EQ(
        extra_args_error(dispatch(Mode::accept_edits), {"--allowed-tools", "run_shell_command"})
            .message,
        "flag '--allowed-tools' is forbidden for gemini in acceptEdits mode (config)");
}

TEST(Gemini, PolicyFlagIsReservedForTheMappingAndItsFileIsWritten) {
    EXPECT_EQ(extra_args_error(dispatch(Mode::plan), {"--policy", "/x/allow.toml"}).message,
              "flag '--policy' is forbidden for gemini in plan mode (config)");
    testing::ScratchDir dir;
    PlanCase plan = dispatch(Mode::plan);
    plan.support_dir = dir.path() + "/support";
    const auto decision = decide_case(plan);
    ASSERT_TRUE(decision && decision->runs());
    const std::string policy = plan.support_dir + "/gemini-deny-mode-switch.toml";
    const auto& argv = decision->invocation().argv;
    EXPECT_NE(std::find(argv.begin(), argv.end(), policy), argv.end())
        << show(decision->invocation());
    auto written = read_file_bounded(policy, 4096);
    ASSERT_TRUE(written) << written.error().message;
    EXPECT_EQ(*written, k_policy);
    // Without a support dir the planner names the file and writes nothing.
    ASSERT_TRUE(decide_case(dispatch(Mode::plan)));
    const auto& adapter = **adapters::find_adapter("gemini");
    EXPECT_EQ(files_of(adapters::EndpointInjection{{}, adapter.support_files("/s")}),
              (std::vector<std::pair<std::string, std::string>>{
                  {"/s/gemini-deny-mode-switch.toml", k_policy},
                  {"/s/gemini-trusted-folders.json", "{}\n"}}));
}

TEST(Gemini, ProjectFilesAndSessionIds) {
    const auto& adapter = **adapters::find_adapter("gemini");
    const auto mcp = adapter.project_mcp("/w", {"/bin/srv", "--touch", "/o/c"});
    ASSERT_TRUE(mcp);
    EXPECT_EQ(mcp->tool_name, "mcp_sonata-canary_touch");
    ASSERT_EQ(mcp->files.size(), 1U);
    EXPECT_EQ(mcp->files[0].path, "/w/.gemini/settings.json");
    EXPECT_EQ(
        mcp->files[0].content,
        "{\n  \"mcpServers\": {\n    \"sonata-canary\": {\n      \"command\": \"/bin/srv\",\n"
        "      \"args\": [\n        \"--touch\",\n        \"/o/c\"\n      ]\n    }\n  }\n}\n");
    const auto hostile = adapter.hostile_files("/w", "/o/canary");
    ASSERT_EQ(hostile.size(), 3U);
    EXPECT_EQ(hostile[0].path, "/w/.gemini/settings.json");
    EXPECT_NE(hostile[0].content.find(R"("command": "touch /o/canary")"), std::string::npos);

    const auto home = std::filesystem::temp_directory_path() /
                      ("sonata-gemini-test-" + std::to_string(::getpid()));
    const auto chats = home / ".gemini/tmp/ws/chats";
    ASSERT_TRUE(
        write_file_atomic((chats / "session-2026-11-30T01-00-abcd.json").string(),
                          R"({"sessionId":"0b7e9c1e-1111-4222-8333-944455556666","messages":[]})"));
    EXPECT_EQ(adapter.session_id("", "", home.string(), {}),
              "0b7e9c1e-1111-4222-8333-944455556666");
    EXPECT_EQ(adapter.session_id("", "", (home / "none").string(), {}), "");
    std::filesystem::remove_all(home);
}

TEST(Gemini, EndpointInjectionPointsAtTheServerWithApiKeyAuth) {
    auto decision = decide_case(dispatch(Mode::plan));
    ASSERT_TRUE(decision && decision->runs());
    const auto& adapter = **adapters::find_adapter("gemini");
    EXPECT_EQ(adapter.protocol(), adapters::WireProtocol::gemini);
    auto injected =
        adapter.inject_endpoint(decision->invocation(), {"http://127.0.0.1:4242", "/h", "/w"});
    ASSERT_TRUE(injected) << injected.error().message;
    Invocation want = gemini("plan", k_read_only, {k_trust});
    want.env.insert({{"GEMINI_API_KEY", "sonata-probe-key-0000000000000000"},
                     {"GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:4242"}});
    EXPECT_EQ(injected->invocation, want) << show(injected->invocation);
    EXPECT_EQ(
        files_of(*injected),
        (std::vector<std::pair<std::string, std::string>>{
            {"/h/.gemini/settings.json",
             R"({"security":{"auth":{"selectedType":"gemini-api-key"}},)"
             R"("telemetry":{"enabled":false},"privacy":{"usageStatisticsEnabled":false},)"
             R"("general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false}})"}}));
}

TEST(Gemini, ToolVocabularyIsWhatItOffered) {
    const auto tools = (*adapters::find_adapter("gemini"))->tools();
    EXPECT_EQ(tools.write, Strings{"write_file"});
    EXPECT_EQ(std::tie(tools.write_path_field, tools.write_content_field, tools.shell_command_field,
                       tools.delegate_prompt_field),
              std::make_tuple(std::string("file_path"), std::string("content"),
                              std::string("command"), std::string("prompt")));
    EXPECT_TRUE(tools.write_path_absolute);
    EXPECT_EQ(tools.shell, Strings{"run_shell_command"});
    EXPECT_EQ(tools.delegate, Strings{"invoke_agent"});
    EXPECT_EQ(tools.mode_switch, (Strings{"exit_plan_mode"}));
    EXPECT_EQ(tools.mode_enter, (Strings{"enter_plan_mode"}));
}

} // namespace adapter_gemini_test
} // namespace sonata::testing
