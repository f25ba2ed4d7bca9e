// The opencode mode table for both lines (1.18 and 2.x), cell by cell, as whole invocations with
// their environments; version selection, the no-bypass option, resume and endpoint injection.
#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "adapters/support/opencode_v2.hpp"
#include "core/fs.hpp"
#include "tests/support/mode_table.hpp"
#include "tests/support/plan_helpers.hpp"

namespace sonata::testing {
namespace adapter_opencode_test {

using Strings = std::vector<std::string>;
using Env = std::map<std::string, std::string>;

const Strings k_unset_all{"IS_SANDBOX",      "OPENCODE_CONFIG_CONTENT", "OPENCODE_PERMISSION",
                          "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR",     "OPENCODE_DB"};
const Strings k_unset_but_config{"IS_SANDBOX", "OPENCODE_PERMISSION", "OPENCODE_CONFIG",
                                 "OPENCODE_CONFIG_DIR", "OPENCODE_DB"};
// 2.x sets its database (sonata's), so the caller's is replaced rather than unset.
const Strings k_unset_all_v2{"IS_SANDBOX", "OPENCODE_CONFIG_CONTENT", "OPENCODE_PERMISSION",
                             "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR"};
const Strings k_unset_but_config_v2{"IS_SANDBOX", "OPENCODE_PERMISSION", "OPENCODE_CONFIG",
                                    "OPENCODE_CONFIG_DIR"};
const std::string k_v1_plan_json =
    R"({"agent":{"plan":{"permission":{"*":"deny","read":"allow","grep":"allow","glob":"allow"}}},)"
    R"("snapshot":false})";
const Strings k_read_only{"write-withheld", "shell-write-withheld", "delegation-escape",
                          "self-promotion", "hostile-workspace",    "mcp-reachability",
                          "tool-census"};
const Strings k_workspace{"outside-workspace-write", "hostile-workspace", "tool-census"};
const Strings k_injected_edits{"outside-workspace-write", "hostile-workspace", "tool-census",
                               "rm-prompt", "delegation-escape"};
const std::string k_no_sandbox = "no sandbox: shell commands run unasked";
const std::string k_edits_note =
    "writes outside the workspace are auto-rejected, and the run ends there";
const std::string k_injected_note = "tool permission rules of an injected agent, not an OS sandbox";
const std::string k_plan_agent_json =
    adapters::opencode_v2::agent_config("sonata-plan", {"read", "grep", "glob"});
const std::string k_edit_agent_json =
    adapters::opencode_v2::agent_config("sonata-edit", {"read", "grep", "glob", "edit"});
const std::string k_snapshot_off = R"({"snapshot":false})";

/// A headless `run` reporting its JSON events on stdout, the message as its last argument.
Invocation run_invocation(Strings argv, Env env, Strings unset, Strings relies, Strings notes) {
    return Invocation{.argv = std::move(argv),
                      .env = std::move(env),
                      .env_unset = std::move(unset),
                      .path_first = {},
                      .cwd = {},
                      .prompt = PromptChannel::argument,
                      .interactive = false,
                      .report = ReportSource::structured_stdout,
                      .relies_on = std::move(relies),
                      .notes = std::move(notes)};
}

// Every mapping keeps opencode from loading the repository's own config, turns its workspace
// snapshots and file watcher off (a mapping without an agent of its own sets a config for that
// alone, so the caller's config is unset however `unset` reads), and reads its JSON events
// (`--format json`, before the `--` that ends the options).
Invocation headless(Strings argv, Env env, Strings unset, Strings relies, Strings notes) {
    env["OPENCODE_DISABLE_PROJECT_CONFIG"] = "1";
    env["OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER"] = "1";
    env["OPENCODE_DISABLE_FILEWATCHER"] = "1";
    if (env.emplace("OPENCODE_CONFIG_CONTENT", k_snapshot_off).second)
        std::erase(unset, "OPENCODE_CONFIG_CONTENT");
    argv.insert(argv.end() - 1, {"--format", "json"});
    return run_invocation(std::move(argv), std::move(env), std::move(unset), std::move(relies),
                          std::move(notes));
}

// 2.x: its own server and sonata's database, no `snapshot` key, and no `--` (after one it reads
// the message twice).
Invocation headless_v2(Strings argv, Env env, Strings unset, Strings relies, Strings notes) {
    env["OPENCODE_DISABLE_PROJECT_CONFIG"] = "1";
    env["OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER"] = "1";
    env["OPENCODE_DISABLE_FILEWATCHER"] = "1";
    env["OPENCODE_DB"] = "sonata-dispatch.db";
    argv.insert(argv.end(), {"--format", "json"});
    return run_invocation(std::move(argv), std::move(env), std::move(unset), std::move(relies),
                          std::move(notes));
}

PlanCase opencode(std::string version, Mode parent, RoleKind role = RoleKind::write,
                  std::map<std::string, std::string> options = {}) {
    PlanCase c = plan_case("opencode", parent, role, std::move(options));
    c.version = std::move(version);
    return c;
}

Result<Decision> decide_ok(const PlanCase& c) {
    auto decision = decide_case(c);
    if (!decision) ADD_FAILURE() << "decide failed: " << decision.error().message;
    return decision;
}

struct Cell {
    std::string name;
    PlanCase input;
    Invocation want;
};

class OpenCodeCell : public ::testing::TestWithParam<Cell> {};

TEST_P(OpenCodeCell, WholeInvocation) {
    auto decision = decide_ok(GetParam().input);
    ASSERT_TRUE(decision);
    ASSERT_TRUE(decision->runs()) << show(decision->refusal());
    EXPECT_EQ(decision->invocation(), GetParam().want) << "got:\n"
                                                       << show(decision->invocation()) << "want:\n"
                                                       << show(GetParam().want);
}

const std::string k_v1 = "1.18.33";
const std::string k_v2 = "2.1.2";

INSTANTIATE_TEST_SUITE_P(
    Line1_18, OpenCodeCell,
    ::testing::Values(
        Cell{"plan", opencode(k_v1, Mode::plan),
             headless({"opencode", "run", "--agent", "plan", "--"},
                      {{"OPENCODE_CONFIG_CONTENT", k_v1_plan_json}}, k_unset_but_config,
                      k_read_only, {})},
        Cell{"read_only_role_in_bypass",
             opencode(k_v1, Mode::bypass_permissions, RoleKind::read_only),
             headless({"opencode", "run", "--agent", "plan", "--"},
                      {{"OPENCODE_CONFIG_CONTENT", k_v1_plan_json}}, k_unset_but_config,
                      k_read_only, {})},
        Cell{"acceptEdits", opencode(k_v1, Mode::accept_edits),
             headless({"opencode", "run", "--agent", "build", "--"}, {}, k_unset_all,
                      guarded(k_workspace), {k_edits_note, k_no_sandbox})},
        Cell{"bypassPermissions", opencode(k_v1, Mode::bypass_permissions),
             headless({"opencode", "run", "--agent", "build", "--auto", "--"}, {}, k_unset_all, {},
                      {k_no_sandbox})},
        Cell{"acceptEdits_without_bypass",
             opencode(k_v1, Mode::accept_edits, RoleKind::write,
                      {{"dangerously_skip_permissions", "false"}}),
             headless({"opencode", "run", "--agent", "build", "--"}, {}, k_unset_all,
                      guarded(k_workspace), {k_edits_note, k_no_sandbox})},
        Cell{"bypass_without_bypass",
             opencode(k_v1, Mode::bypass_permissions, RoleKind::write,
                      {{"dangerously_skip_permissions", "false"}}),
             headless(
                 {"opencode", "run", "--agent", "build", "--"}, {}, k_unset_all, k_workspace,
                 {"dangerously_skip_permissions=false: no --auto; actions that would be asked are "
                  "auto-rejected",
                  k_no_sandbox})}),
    [](const auto& cell) { return cell.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Line2, OpenCodeCell,
    ::testing::Values(
        Cell{"plan", opencode(k_v2, Mode::plan),
             headless_v2({"opencode", "run", "--standalone", "--agent", "sonata-plan"},
                         {{"OPENCODE_CONFIG_CONTENT", k_plan_agent_json}}, k_unset_but_config_v2,
                         k_read_only, {k_injected_note})},
        Cell{"read_only_role_in_accept_edits",
             opencode(k_v2, Mode::accept_edits, RoleKind::read_only),
             headless_v2({"opencode", "run", "--standalone", "--agent", "sonata-plan"},
                         {{"OPENCODE_CONFIG_CONTENT", k_plan_agent_json}}, k_unset_but_config_v2,
                         k_read_only, {k_injected_note})},
        Cell{"acceptEdits", opencode(k_v2, Mode::accept_edits),
             headless_v2({"opencode", "run", "--standalone", "--agent", "sonata-edit"},
                         {{"OPENCODE_CONFIG_CONTENT", k_edit_agent_json}}, k_unset_but_config_v2,
                         guarded(k_injected_edits), {k_injected_note})},
        Cell{"bypassPermissions", opencode(k_v2, Mode::bypass_permissions),
             headless_v2({"opencode", "run", "--standalone", "--auto"}, {}, k_unset_all_v2, {},
                         {k_no_sandbox})},
        Cell{"bypass_without_bypass",
             opencode(k_v2, Mode::bypass_permissions, RoleKind::write,
                      {{"dangerously_skip_permissions", "false"}}),
             headless_v2({"opencode", "run", "--standalone", "--agent", "sonata-edit"},
                         {{"OPENCODE_CONFIG_CONTENT", k_edit_agent_json}}, k_unset_but_config_v2,
                         k_injected_edits,
                         {"dangerously_skip_permissions=false: runs as acceptEdits (injected "
                          "agent, no --auto)",
                          k_injected_note})},
        Cell{"later_major", opencode("3.1.0", Mode::bypass_permissions),
             headless_v2({"opencode", "run", "--standalone", "--auto"}, {}, k_unset_all_v2, {},
                         {k_no_sandbox})}),
    [](const auto& cell) { return cell.param.name; });

INSTANTIATE_TEST_SUITE_P(
    VersionFallback, OpenCodeCell,
    ::testing::Values(
        Cell{"unknown_version", opencode("", Mode::plan),
             headless({"opencode", "run", "--agent", "plan", "--"},
                      {{"OPENCODE_CONFIG_CONTENT", k_v1_plan_json}}, k_unset_but_config,
                      k_read_only, {"opencode version unknown: using the 1.18 mapping"})},
        Cell{"unparseable_version", opencode("nightly", Mode::accept_edits),
             headless({"opencode", "run", "--agent", "build", "--"}, {}, k_unset_all,
                      guarded(k_workspace),
                      {"opencode version unknown: using the 1.18 mapping", k_edits_note,
                       k_no_sandbox})},
        Cell{"pre_1_version", opencode("0.15.2", Mode::plan),
             headless({"opencode", "run", "--agent", "plan", "--"},
                      {{"OPENCODE_CONFIG_CONTENT", k_v1_plan_json}}, k_unset_but_config,
                      k_read_only, {"opencode 0.15.2 predates 1.x: using the 1.18 mapping"})},
        Cell{"other_1_x_version", opencode("1.2.0", Mode::plan),
             headless({"opencode", "run", "--agent", "plan", "--"},
                      {{"OPENCODE_CONFIG_CONTENT", k_v1_plan_json}}, k_unset_but_config,
                      k_read_only, {})}),
    [](const auto& cell) { return cell.param.name; });

PlanCase resumed(PlanCase c, std::string model = {}) {
    c.resume = "ses_8f2a";
    c.model = std::move(model);
    return c;
}

Strings plus_resume(Strings relies) {
    relies.emplace_back("resume-keeps-mode");
    return relies;
}

INSTANTIATE_TEST_SUITE_P(
    ResumeAndModel, OpenCodeCell,
    ::testing::Values(
        Cell{"v1_plan_resume", resumed(opencode(k_v1, Mode::plan)),
             headless({"opencode", "run", "--agent", "plan", "--session", "ses_8f2a", "--"},
                      {{"OPENCODE_CONFIG_CONTENT", k_v1_plan_json}}, k_unset_but_config,
                      plus_resume(k_read_only), {})},
        Cell{"v1_edits_resume_with_model",
             resumed(opencode(k_v1, Mode::accept_edits), "openai/gpt-5"),
             headless({"opencode", "run", "--agent", "build", "--model", "openai/gpt-5",
                       "--session", "ses_8f2a", "--"},
                      {}, k_unset_all, guarded(plus_resume(k_workspace)),
                      {k_edits_note, k_no_sandbox})},
        Cell{"v2_plan_resume_reinjects_agent", resumed(opencode(k_v2, Mode::plan)),
             headless_v2({"opencode", "run", "--standalone", "--agent", "sonata-plan", "--session",
                          "ses_8f2a"},
                         {{"OPENCODE_CONFIG_CONTENT", k_plan_agent_json}}, k_unset_but_config_v2,
                         plus_resume(k_read_only), {k_injected_note})},
        Cell{"v2_bypass_resume", resumed(opencode(k_v2, Mode::bypass_permissions)),
             headless_v2({"opencode", "run", "--standalone", "--auto", "--session", "ses_8f2a"}, {},
                         k_unset_all_v2, {"resume-keeps-mode"}, {k_no_sandbox})}),
    [](const auto& cell) { return cell.param.name; });

const Refusal k_default_refusal{
    "opencode run has no approval UI: with permissions unset it runs commands unasked, and with "
    "\"ask\" "
    "rules it auto-rejects them, so \"ask me first\" cannot be honoured",
    {"dispatch in acceptEdits or bypassPermissions mode",
     "use harness codex, whose interactive TUI asks before acting",
     "use a read-only role (it runs as plan)"}};

TEST(OpenCodeAdapter, DefaultIsRefusedForWriteRolesOnBothLines) {
    for (const std::string& version : {k_v1, k_v2, std::string{}}) {
        auto decision = decide_ok(opencode(version, Mode::default_mode));
        ASSERT_TRUE(decision);
        ASSERT_FALSE(decision->runs()) << version;
        EXPECT_EQ(decision->refusal(), k_default_refusal) << show(decision->refusal());
        EXPECT_EQ(decision->effective_mode, Mode::default_mode);
    }
}

TEST(OpenCodeAdapter, DefaultParentWithReadOnlyRoleRunsAsPlan) {
    auto decision = decide_ok(opencode(k_v1, Mode::default_mode, RoleKind::read_only));
    ASSERT_TRUE(decision && decision->runs());
    EXPECT_EQ(decision->invocation(), headless({"opencode", "run", "--agent", "plan", "--"},
                                               {{"OPENCODE_CONFIG_CONTENT", k_v1_plan_json}},
                                               k_unset_but_config, k_read_only, {}));
}

TEST(OpenCodeAdapter, ForbiddenFlagsPerMode) {
    auto adapter = adapters::find_adapter("opencode");
    ASSERT_TRUE(adapter);
    const Strings always{
        "--dangerously-skip-permissions", "--yolo", "--attach", "--server", "--continue", "-c"};
    Strings no_auto = always;
    no_auto.emplace_back("--auto");
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::plan), no_auto);
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::default_mode), no_auto);
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::accept_edits), always);
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::bypass_permissions), always);
}

TEST(OpenCodeAdapter, ConfigArgsCannotAutoApproveInPlan) {
    PlanCase c = opencode(k_v1, Mode::plan);
    c.extra_args = {"--auto"};
    auto decision = decide_case(c);
    ASSERT_FALSE(decision);
    EXPECT_EQ(decision.error().code, ExitCode::config);
    EXPECT_EQ(decision.error().message,
              "flag '--auto' is forbidden for opencode in plan mode (config)");
}

TEST(OpenCodeAdapter, ConfigArgsGoBeforeTheMessageSeparator) {
    PlanCase c = opencode(k_v1, Mode::plan);
    c.extra_args = {"--log-level", "WARN"};
    auto decision = decide_ok(c);
    ASSERT_TRUE(decision && decision->runs());
    EXPECT_EQ(decision->invocation().argv,
              (Strings{"opencode", "run", "--agent", "plan", "--format", "json", "--log-level",
                       "WARN", "--"}));
    EXPECT_EQ(decision->invocation().env.at("OPENCODE_CONFIG_CONTENT"), k_v1_plan_json);
}

adapters::EndpointSpec probe_endpoint() {
    adapters::EndpointSpec ep;
    ep.base_url = "http://127.0.0.1:40124";
    ep.home = "/run/home";
    ep.workspace = "/run/ws";
    return ep;
}

const std::string k_provider_json =
    R"("provider":{"sonata-probe":{"npm":"@ai-sdk/openai-compatible","name":"sonata probe","options":)"
    R"({"baseURL":"http://127.0.0.1:40124/v1","apiKey":"sonata-probe-key-0000000000000000"},"models":)"
    R"({"sonata-probe-model":{"name":"sonata-probe-model","tool_call":true}}}},)"
    R"("model":"sonata-probe/sonata-probe-model","small_model":"sonata-probe/sonata-probe-model",)"
    R"("autoupdate":false,"share":"disabled")";

TEST(OpenCodeAdapter, EndpointInjectionOn1_18SetsTheConfigAndStopsUnsettingIt) {
    auto adapter = adapters::find_adapter("opencode");
    ASSERT_TRUE(adapter);
    PlanCase c = opencode(k_v1, Mode::accept_edits);
    c.model = "openai/gpt-5";
    auto decision = decide_ok(c);
    ASSERT_TRUE(decision && decision->runs());
    auto injected = (*adapter)->inject_endpoint(decision->invocation(), probe_endpoint());
    ASSERT_TRUE(injected) << injected.error().message;
    const Invocation want = headless(
        {"opencode", "run", "--agent", "build", "--model", "sonata-probe/sonata-probe-model", "--"},
        {{"OPENCODE_CONFIG_CONTENT", R"({"snapshot":false,)" + k_provider_json + "}"},
         {"OPENCODE_DISABLE_MODELS_FETCH", "1"},
         {"OPENCODE_DISABLE_AUTOUPDATE", "1"},
         {"XDG_DATA_HOME", "/run/home/.local/share"}},
        k_unset_but_config, guarded(k_workspace), {k_edits_note, k_no_sandbox});
    EXPECT_EQ(injected->invocation, want) << show(injected->invocation);
    EXPECT_TRUE(injected->files.empty());
}

TEST(OpenCodeAdapter, EndpointInjectionOn2xMergesTheProviderIntoTheInjectedAgent) {
    auto adapter = adapters::find_adapter("opencode");
    ASSERT_TRUE(adapter);
    auto decision = decide_ok(opencode(k_v2, Mode::plan));
    ASSERT_TRUE(decision && decision->runs());
    auto injected = (*adapter)->inject_endpoint(decision->invocation(), probe_endpoint());
    ASSERT_TRUE(injected) << injected.error().message;
    const std::string merged =
        k_plan_agent_json.substr(0, k_plan_agent_json.size() - 1) + "," + k_provider_json + "}";
    const Invocation want =
        headless_v2({"opencode", "run", "--standalone", "--agent", "sonata-plan"},
                    {{"OPENCODE_CONFIG_CONTENT", merged},
                     {"OPENCODE_DISABLE_MODELS_FETCH", "1"},
                     {"OPENCODE_DISABLE_AUTOUPDATE", "1"},
                     {"XDG_DATA_HOME", "/run/home/.local/share"}},
                    k_unset_but_config_v2, k_read_only, {k_injected_note});
    EXPECT_EQ(injected->invocation, want) << show(injected->invocation);
}

TEST(OpenCodeAdapter, EndpointInjectionOn1_18PlanKeepsTheDenyMapBesideTheProvider) {
    auto adapter = adapters::find_adapter("opencode");
    ASSERT_TRUE(adapter);
    auto decision = decide_ok(opencode(k_v1, Mode::plan));
    ASSERT_TRUE(decision && decision->runs());
    auto injected = (*adapter)->inject_endpoint(decision->invocation(), probe_endpoint());
    ASSERT_TRUE(injected) << injected.error().message;
    const std::string merged =
        k_v1_plan_json.substr(0, k_v1_plan_json.size() - 1) + "," + k_provider_json + "}";
    EXPECT_EQ(injected->invocation.env.at("OPENCODE_CONFIG_CONTENT"), merged);
}

TEST(OpenCodeAdapter, ProjectMcpAndSessionId) {
    const auto& adapter = **adapters::find_adapter("opencode");
    const auto mcp = adapter.project_mcp("/w", {"/bin/srv", "--touch", "/o/c"});
    ASSERT_TRUE(mcp);
    EXPECT_EQ(mcp->tool_name, "sonata-canary_touch");
    ASSERT_EQ(mcp->files.size(), 1U);
    EXPECT_EQ(mcp->files[0].path, "/w/opencode.json");
    EXPECT_EQ(adapter.session_id("", "INFO service=session id=ses_3f1aBc9 created\nses_zz",
                                 "/nowhere", {}),
              "ses_3f1aBc9");
    EXPECT_EQ(adapter.session_id("", "", "/nowhere", {}), "");
    EXPECT_EQ(adapter.hostile_files("/w", "/o/canary").size(), 2U);
}

TEST(OpenCodeAdapter, ProtocolAndToolVocabulary) {
    auto adapter = adapters::find_adapter("opencode");
    ASSERT_TRUE(adapter);
    EXPECT_EQ((*adapter)->protocol(), adapters::WireProtocol::openai_chat);
    const auto tools = (*adapter)->tools();
    EXPECT_EQ(tools.write, (Strings{"write"}));
    EXPECT_EQ(tools.write_path_field, "filePath");
    EXPECT_EQ(tools.write_content_field, "content");
    EXPECT_TRUE(tools.write_path_absolute);
    EXPECT_EQ(tools.shell, (Strings{"bash", "shell"}));
    EXPECT_EQ(tools.shell_command_field, "command");
    EXPECT_EQ(tools.delegate, (Strings{"task", "subagent"}));
    EXPECT_EQ(tools.delegate_prompt_field, "prompt");
    EXPECT_EQ(tools.mode_switch, (Strings{"plan_exit"}));
    EXPECT_EQ((*adapter)->accepted_options(), Strings{});
    EXPECT_EQ((*adapter)->permission_env(),
              (Strings{"OPENCODE_CONFIG_CONTENT", "OPENCODE_PERMISSION", "OPENCODE_CONFIG",
                       "OPENCODE_CONFIG_DIR", "OPENCODE_DISABLE_PROJECT_CONFIG", "OPENCODE_DB"}));
}

} // namespace adapter_opencode_test
} // namespace sonata::testing

namespace sonata::testing {
namespace adapter_opencode_test {

/// A file captured from opencode 1.18.33 (fixtures/captured/opencode/1.18.33).
std::string captured_opencode(const std::string& name) {
    auto text = read_file_bounded(
        std::string(SONATA_SOURCE_DIR) + "/fixtures/captured/opencode/1.18.33/" + name, 1U << 20U);
    EXPECT_TRUE(text) << name;
    return text ? *text : std::string();
}

TEST(OpenCodeRunOutput, JsonEventsGiveTheSessionTheFinalTextAndTheTokens) {
    const auto& opencode = **adapters::find_adapter("opencode");
    const std::string out = captured_opencode("run-format-json.jsonl");
    EXPECT_EQ(opencode.session_id(out, "", "/nowhere", {}), "ses_dcaf5f948ffe36j79dEFh8gUsB");
    EXPECT_EQ(opencode.final_message(out), std::optional<std::string>("ALL DONE FINAL"));
    // Two steps of 12345 input tokens each; opencode priced the unknown model at 0, which is no
    // price at all: the cost stays unknown.
    EXPECT_EQ(opencode.run_cost(out, "", ""),
              (RunCost{std::nullopt, CostSource::unknown, 24690, 21}));
    EXPECT_EQ(opencode.final_message("not json\n"), std::nullopt);
    EXPECT_EQ(
        opencode.run_cost("{\"type\":\"step_finish\",\"part\":{\"tokens\":\"many\"}}\n", "", ""),
        RunCost{});
}

TEST(OpenCodeCompletion, TheExportProvesACompletedRunAndNamesWhatIsMissingOtherwise) {
    const auto& opencode = **adapters::find_adapter("opencode");
    const std::string task = "Do the task: write the files.";
    EXPECT_EQ(opencode.completion_export_args("ses_x", "1.18.33"),
              (std::vector<std::string>{"export", "ses_x"}));
    EXPECT_EQ(opencode.completion_export_args("ses_x", "2.1.2"),
              (std::vector<std::string>{"session", "export", "--standalone", "ses_x"}));
    const std::string completed = captured_opencode("export-completed.json");
    EXPECT_EQ(
        opencode.check_completion(completed, "ses_dcaf66542ffebmvy0zh5jULhVH", task, "1.18.33"),
        "");
    // A refused tool call does not stop the run from completing.
    EXPECT_EQ(opencode.check_completion(captured_opencode("export-denied.json"),
                                        "ses_dcaf5c7daffeVNn1zW1ham5r7n", task, "1.18.33"),
              "");
    EXPECT_EQ(opencode.check_completion(captured_opencode("export-interrupted.json"),
                                        "ses_dcaf56a6fffekHsPKlBBo1L4YU", task, "1.18.33"),
              "the last assistant message never completed (interrupted)");
    EXPECT_EQ(opencode.check_completion(completed, "ses_other", task, "1.18.33"),
              "the export is of session ses_dcaf66542ffebmvy0zh5jULhVH, not ses_other");
    EXPECT_EQ(opencode.check_completion(completed, "ses_dcaf66542ffebmvy0zh5jULhVH",
                                        "Another task altogether.", "1.18.33"),
              "the session's newest user turn is not this run's task");
    EXPECT_EQ(opencode.check_completion("", "ses_x", task, "1.18.33"),
              "opencode export printed no session");
    EXPECT_EQ(
        opencode.check_completion("{\"info\":{\"id\":7},\"messages\":[]}", "ses_x", task, "1.18.33")
            .rfind("the export is malformed", 0),
        0U);
    // The last assistant message stopping for a tool call, or without text, is not completion.
    std::string tool_calls = completed;
    const auto stop = tool_calls.rfind("\"finish\": \"stop\"");
    ASSERT_NE(stop, std::string::npos);
    tool_calls.replace(stop, 16, "\"finish\": \"length\"");
    EXPECT_EQ(
        opencode.check_completion(tool_calls, "ses_dcaf66542ffebmvy0zh5jULhVH", task, "1.18.33"),
        "the last assistant message finished with \"length\", not \"stop\"");
    std::string silent = completed;
    silent.replace(silent.find("\"ALL DONE FINAL\""), 16, "\"  \"");
    EXPECT_EQ(opencode.check_completion(silent, "ses_dcaf66542ffebmvy0zh5jULhVH", task, "1.18.33"),
              "the last assistant message has no text");
}

TEST(OpenCodeConcurrency, OneRunAtATimeUnlessConfigSaysOtherwise) {
    EXPECT_EQ((*adapters::find_adapter("opencode"))->default_max_concurrent(), 1);
    EXPECT_EQ((*adapters::find_adapter("codex"))->default_max_concurrent(), 0);
}

} // namespace adapter_opencode_test
} // namespace sonata::testing
