// The codex mode table, cell by cell, as whole invocations: sandbox per mode, the TUI for default,
// the `sandbox` option (narrowing, widening, invalid), resume forms and endpoint injection.
#include <algorithm>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "adapters/support/planner.hpp"
#include "tests/support/mode_table.hpp"
#include "tests/support/plan_helpers.hpp"

namespace sonata::testing {
namespace adapter_codex_test {

using Strings = std::vector<std::string>;

const Strings k_unset{"IS_SANDBOX"};
const Strings k_read_only{"write-withheld", "shell-write-withheld", "delegation-escape",
                          "self-promotion", "hostile-workspace",    "mcp-reachability",
                          "tool-census"};
const Strings k_workspace{"outside-workspace-write", "hostile-workspace", "tool-census"};
const Strings k_tui_workspace{
    "rm-prompt",   "delegation-escape", "self-promotion",         "hostile-workspace",
    "tool-census", "trust-dialog",      "outside-workspace-write"};
const std::string k_tui_note = "interactive TUI in tmux: approval prompts surface as PAUSED; its "
                               "stdout must stay attached to the pane";
const std::string k_exec_write_note =
    "exec asks nothing: commands run unasked inside the workspace-write sandbox";

const std::string k_ignore_user_config_note =
    "--ignore-user-config: ~/.codex/config.toml is not read (a project trusted there would load "
    "its own config); give providers with args = [\"-c\", …]";

/// An exec invocation: `argv` as the table writes it, with `--ignore-user-config` (and its note)
/// added before `--sandbox` under every sandbox but danger-full-access, as the mapping adds it.
Invocation exec(Strings argv, Strings relies, Strings notes = {}) {
    const auto sandbox = std::find(argv.begin(), argv.end(), "--sandbox");
    if (sandbox != argv.end() && sandbox + 1 != argv.end() &&
        *(sandbox + 1) != "danger-full-access") {
        argv.insert(sandbox, "--ignore-user-config");
        notes.push_back(k_ignore_user_config_note);
    }
    return Invocation{.argv = std::move(argv),
                      .env = {},
                      .env_unset = k_unset,
                      .path_first = {},
                      .cwd = {},
                      .prompt = PromptChannel::argument,
                      .interactive = false,
                      .report = ReportSource::stdout_text,
                      .relies_on = std::move(relies),
                      .notes = std::move(notes)};
}

Invocation tui(Strings argv, Strings relies) {
    return Invocation{.argv = std::move(argv),
                      .env = {},
                      .env_unset = k_unset,
                      .path_first = {},
                      .cwd = {},
                      .prompt = PromptChannel::tmux_keys,
                      .interactive = true,
                      .report = ReportSource::pane_text,
                      .relies_on = std::move(relies),
                      .notes = {k_tui_note}};
}

Invocation run(const PlanCase& plan_case) {
    auto decision = decide_case(plan_case);
    if (!decision) {
        ADD_FAILURE() << "decide failed: " << decision.error().message;
        return {};
    }
    if (!decision->runs()) {
        ADD_FAILURE() << "refused: " << show(decision->refusal());
        return {};
    }
    return decision->invocation();
}

Error error_of(const PlanCase& plan_case) {
    auto decision = decide_case(plan_case);
    if (decision) {
        ADD_FAILURE() << "expected an error, got a decision";
        return {};
    }
    return decision.error();
}

struct Cell {
    std::string name;
    PlanCase input;
    Invocation want;
};

class CodexCell : public ::testing::TestWithParam<Cell> {};

TEST_P(CodexCell, WholeInvocation) {
    const Invocation got = run(GetParam().input);
    EXPECT_EQ(got, GetParam().want) << "got:\n" << show(got) << "want:\n" << show(GetParam().want);
}

PlanCase codex(Mode parent, RoleKind role = RoleKind::write,
               std::map<std::string, std::string> options = {}) {
    return plan_case("codex", parent, role, std::move(options));
}

const std::string k_on_request = R"(approval_policy="on-request")";

INSTANTIATE_TEST_SUITE_P(
    Table, CodexCell,
    ::testing::Values(Cell{"plan", codex(Mode::plan),
                           exec({"codex", "exec", "--sandbox", "read-only"}, k_read_only)},
                      Cell{"read_only_role_in_bypass",
                           codex(Mode::bypass_permissions, RoleKind::read_only),
                           exec({"codex", "exec", "--sandbox", "read-only"}, k_read_only)},
                      Cell{"default", codex(Mode::default_mode),
                           tui({"codex", "-c", k_on_request, "--sandbox", "workspace-write", "-c",
                                "sandbox_workspace_write.exclude_tmpdir_env_var=true", "-c",
                                "sandbox_workspace_write.exclude_slash_tmp=true"},
                               k_tui_workspace)},
                      Cell{"acceptEdits", codex(Mode::accept_edits),
                           exec({"codex", "exec", "--sandbox", "workspace-write", "-c",
                                 "sandbox_workspace_write.exclude_tmpdir_env_var=true", "-c",
                                 "sandbox_workspace_write.exclude_slash_tmp=true"},
                                guarded(k_workspace), {k_exec_write_note})},
                      Cell{"bypassPermissions", codex(Mode::bypass_permissions),
                           exec({"codex", "exec", "--sandbox", "danger-full-access"}, {})}),
    [](const auto& cell) { return cell.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Options, CodexCell,
    ::testing::Values(
        Cell{"bypass_narrowed_to_workspace_write",
             codex(Mode::bypass_permissions, RoleKind::write, {{"sandbox", "workspace-write"}}),
             exec({"codex", "exec", "--sandbox", "workspace-write", "-c",
                   "sandbox_workspace_write.exclude_tmpdir_env_var=true", "-c",
                   "sandbox_workspace_write.exclude_slash_tmp=true"},
                  k_workspace, {k_exec_write_note})},
        Cell{"bypass_narrowed_to_read_only",
             codex(Mode::bypass_permissions, RoleKind::write, {{"sandbox", "read-only"}}),
             exec({"codex", "exec", "--sandbox", "read-only"}, k_read_only)},
        Cell{"accept_edits_same_sandbox",
             codex(Mode::accept_edits, RoleKind::write, {{"sandbox", "workspace-write"}}),
             exec({"codex", "exec", "--sandbox", "workspace-write", "-c",
                   "sandbox_workspace_write.exclude_tmpdir_env_var=true", "-c",
                   "sandbox_workspace_write.exclude_slash_tmp=true"},
                  guarded(k_workspace), {k_exec_write_note})},
        Cell{"default_narrowed_to_read_only",
             codex(Mode::default_mode, RoleKind::write, {{"sandbox", "read-only"}}),
             tui({"codex", "-c", k_on_request, "--sandbox", "read-only"},
                 {"rm-prompt", "delegation-escape", "self-promotion", "hostile-workspace",
                  "tool-census", "trust-dialog", "write-withheld", "shell-write-withheld",
                  "mcp-reachability"})},
        Cell{"plan_same_sandbox", codex(Mode::plan, RoleKind::write, {{"sandbox", "read-only"}}),
             exec({"codex", "exec", "--sandbox", "read-only"}, k_read_only)},
        Cell{"bypass_without_bypass",
             codex(Mode::bypass_permissions, RoleKind::write,
                   {{"dangerously_skip_permissions", "false"}}),
             exec({"codex", "exec", "--sandbox", "workspace-write", "-c",
                   "sandbox_workspace_write.exclude_tmpdir_env_var=true", "-c",
                   "sandbox_workspace_write.exclude_slash_tmp=true"},
                  k_workspace,
                  {"dangerously_skip_permissions=false: --sandbox workspace-write instead of "
                   "danger-full-access",
                   k_exec_write_note})},
        Cell{
            "accept_edits_without_bypass_unchanged",
            codex(Mode::accept_edits, RoleKind::write, {{"dangerously_skip_permissions", "false"}}),
            exec({"codex", "exec", "--sandbox", "workspace-write", "-c",
                  "sandbox_workspace_write.exclude_tmpdir_env_var=true", "-c",
                  "sandbox_workspace_write.exclude_slash_tmp=true"},
                 guarded(k_workspace), {k_exec_write_note})}),
    [](const auto& cell) { return cell.param.name; });

PlanCase with_resume(PlanCase c, std::string model = {}) {
    c.resume = "0199a-session";
    c.model = std::move(model);
    return c;
}

Strings plus_resume(Strings relies) {
    relies.emplace_back("resume-keeps-mode");
    return relies;
}

INSTANTIATE_TEST_SUITE_P(
    Resume, CodexCell,
    ::testing::Values(
        Cell{"plan", with_resume(codex(Mode::plan)),
             exec({"codex", "exec", "--sandbox", "read-only", "resume", "0199a-session"},
                  plus_resume(k_read_only))},
        Cell{"default_tui", with_resume(codex(Mode::default_mode)),
             tui({"codex", "-c", k_on_request, "--sandbox", "workspace-write", "-c",
                  "sandbox_workspace_write.exclude_tmpdir_env_var=true", "-c",
                  "sandbox_workspace_write.exclude_slash_tmp=true", "resume", "0199a-session"},
                 plus_resume(k_tui_workspace))},
        Cell{"accept_edits_with_model", with_resume(codex(Mode::accept_edits), "gpt-5.1-codex"),
             exec({"codex", "exec", "--sandbox", "workspace-write", "-c",
                   "sandbox_workspace_write.exclude_tmpdir_env_var=true", "-c",
                   "sandbox_workspace_write.exclude_slash_tmp=true", "-m", "gpt-5.1-codex",
                   "resume", "0199a-session"},
                  guarded(plus_resume(k_workspace)), {k_exec_write_note})},
        Cell{"bypass", with_resume(codex(Mode::bypass_permissions)),
             exec({"codex", "exec", "--sandbox", "danger-full-access", "resume", "0199a-session"},
                  {"resume-keeps-mode"})}),
    [](const auto& cell) { return cell.param.name; });

TEST(CodexAdapter, ModelIsPassedWithDashM) {
    PlanCase c = codex(Mode::plan);
    c.model = "o4-mini";
    EXPECT_EQ(run(c).argv, (Strings{"codex", "exec", "--ignore-user-config", "--sandbox",
                                    "read-only", "-m", "o4-mini"}));
}

TEST(CodexAdapter, WideningSandboxIsAnErrorNamingTheOption) {
    const Error plan =
        error_of(codex(Mode::plan, RoleKind::write, {{"sandbox", "workspace-write"}}));
    EXPECT_EQ(plan.code, ExitCode::usage);
    EXPECT_EQ(plan.message,
              "option sandbox=workspace-write would widen what this mode allows, and options may "
              "only narrow: codex in plan mode gets at most --sandbox read-only");

    const Error edits =
        error_of(codex(Mode::accept_edits, RoleKind::write, {{"sandbox", "danger-full-access"}}));
    EXPECT_EQ(edits.message,
              "option sandbox=danger-full-access would widen what this mode allows, and options "
              "may only narrow: codex in acceptEdits mode gets at most --sandbox workspace-write");

    const Error no_bypass = error_of(
        codex(Mode::bypass_permissions, RoleKind::write,
              {{"sandbox", "danger-full-access"}, {"dangerously_skip_permissions", "false"}}));
    EXPECT_EQ(no_bypass.message,
              "option sandbox=danger-full-access would widen what this mode allows, and "
              "options may only narrow: codex in bypassPermissions mode gets at most "
              "--sandbox workspace-write");

    // A read-only role runs as plan whatever the parent, so the option is judged against plan.
    const Error role = error_of(
        codex(Mode::bypass_permissions, RoleKind::read_only, {{"sandbox", "workspace-write"}}));
    EXPECT_EQ(role.message, plan.message);
}

TEST(CodexAdapter, InvalidSandboxValueIsAnError) {
    const Error bad =
        error_of(codex(Mode::bypass_permissions, RoleKind::write, {{"sandbox", "full"}}));
    EXPECT_EQ(bad.code, ExitCode::usage);
    EXPECT_EQ(bad.message, "option sandbox has invalid value 'full'; valid values: read-only, "
                           "workspace-write, danger-full-access");
    const Error typo = error_of(codex(Mode::plan, RoleKind::write, {{"sandbox", "read_only"}}));
    EXPECT_EQ(typo.message,
              "option sandbox has invalid value 'read_only' (did you mean 'read-only'?); valid "
              "values: read-only, workspace-write, danger-full-access");
    // The cuekit spelling `sandbox=true` (agy's) is not a codex value either.
    EXPECT_EQ(error_of(codex(Mode::plan, RoleKind::write, {{"sandbox", "true"}})).code,
              ExitCode::usage);
}

TEST(CodexAdapter, ForbiddenFlagsPerMode) {
    auto adapter = adapters::find_adapter("codex");
    ASSERT_TRUE(adapter);
    const Strings always{"--dangerously-bypass-approvals-and-sandbox", "--full-auto", "--yolo",
                         "--ask-for-approval", "-a"};
    Strings confined = always;
    confined.emplace_back("--add-dir");
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::plan), confined);
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::default_mode), confined);
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::accept_edits), confined);
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::bypass_permissions), always);
}

TEST(CodexAdapter, ConfigArgsCannotBypassInAnyMode) {
    for (Mode mode :
         {Mode::plan, Mode::default_mode, Mode::accept_edits, Mode::bypass_permissions}) {
        for (const char* flag :
             {"--dangerously-bypass-approvals-and-sandbox", "--full-auto", "--yolo"}) {
            PlanCase c = codex(mode);
            c.extra_args = {flag};
            const Error error = error_of(c);
            EXPECT_EQ(error.code, ExitCode::config) << flag << " in " << to_string(mode);
            EXPECT_EQ(error.message, "flag '" + std::string(flag) + "' is forbidden for codex in " +
                                         std::string(to_string(mode)) + " mode (config)");
        }
    }
}

adapters::EndpointSpec probe_endpoint() {
    adapters::EndpointSpec ep;
    ep.base_url = "http://127.0.0.1:40123";
    ep.home = "/run/home";
    ep.workspace = "/run/ws";
    return ep;
}

const std::string k_provider =
    R"(model_providers.probe={name="probe",base_url="http://127.0.0.1:40123/v1",)"
    R"(env_key="PROBE_KEY",wire_api="responses"})";

TEST(CodexAdapter, EndpointInjectionForExecPutsProviderAfterExec) {
    auto adapter = adapters::find_adapter("codex");
    ASSERT_TRUE(adapter);
    PlanCase c = codex(Mode::accept_edits);
    c.model = "gpt-5.1-codex";
    c.resume = "sid";
    const Invocation planned = run(c);
    auto injected = (*adapter)->inject_endpoint(planned, probe_endpoint());
    ASSERT_TRUE(injected) << injected.error().message;
    Invocation want = planned;
    want.argv = {"codex",
                 "exec",
                 "-c",
                 "model_provider=probe",
                 "-c",
                 k_provider,
                 "--ignore-user-config",
                 "--sandbox",
                 "workspace-write",
                 "-c",
                 "sandbox_workspace_write.exclude_tmpdir_env_var=true",
                 "-c",
                 "sandbox_workspace_write.exclude_slash_tmp=true",
                 "-m",
                 "sonata-probe-model",
                 "resume",
                 "sid"};
    want.env = {{"PROBE_KEY", "sonata-probe-key-0000000000000000"},
                {"CODEX_HOME", "/run/home/.codex"}};
    EXPECT_EQ(injected->invocation, want) << show(injected->invocation);
    ASSERT_EQ(injected->files.size(), 1U);
    EXPECT_EQ(injected->files[0].path, "/run/home/.codex/sonata-probe-home.txt");
    EXPECT_EQ(injected->files[0].content,
              "CODEX_HOME of one sonata probe run: every setting comes from the command line.\n");
}

TEST(CodexAdapter, EndpointInjectionForTheTuiAddsTheModel) {
    auto adapter = adapters::find_adapter("codex");
    ASSERT_TRUE(adapter);
    const Invocation planned = run(codex(Mode::default_mode));
    auto injected = (*adapter)->inject_endpoint(planned, probe_endpoint());
    ASSERT_TRUE(injected) << injected.error().message;
    EXPECT_EQ(injected->invocation.argv,
              (Strings{"codex", "-c", "model_provider=probe", "-c", k_provider, "-m",
                       "sonata-probe-model", "-c", k_on_request, "--sandbox", "workspace-write",
                       "-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true", "-c",
                       "sandbox_workspace_write.exclude_slash_tmp=true"}));
    EXPECT_TRUE(injected->invocation.interactive);
}

TEST(CodexAdapter, ProtocolAndToolVocabulary) {
    auto adapter = adapters::find_adapter("codex");
    ASSERT_TRUE(adapter);
    EXPECT_EQ((*adapter)->protocol(), adapters::WireProtocol::openai_responses);
    const auto tools = (*adapter)->tools();
    EXPECT_EQ(tools.write, (Strings{"apply_patch"}));
    EXPECT_EQ(tools.write_path_field, "");
    EXPECT_EQ(tools.write_content_field, "input");
    EXPECT_FALSE(tools.write_path_absolute);
    EXPECT_EQ(tools.shell, (Strings{"exec_command"}));
    EXPECT_EQ(tools.shell_command_field, "cmd");
    EXPECT_EQ(tools.delegate, (Strings{"spawn_agent", "multi_agent_v1.spawn_agent"}));
    EXPECT_EQ(tools.delegate_prompt_field, "message");
    EXPECT_EQ(tools.mode_switch, Strings{});
    EXPECT_EQ((*adapter)->accepted_options(), (Strings{"sandbox"}));
    EXPECT_EQ((*adapter)->permission_env(), Strings{});
}

} // namespace adapter_codex_test
} // namespace sonata::testing
