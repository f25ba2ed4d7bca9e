// The mode tables of pi and its named profiles (pi-<label>), cell by cell, as whole invocations;
// the refusal for default, resuming, the no-bypass option, profile naming and endpoint
// injection.
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "core/config.hpp"
#include "core/fs.hpp"
#include "core/process.hpp"
#include "tests/support/mode_table.hpp"
#include "tests/support/plan_helpers.hpp"

namespace sonata::testing {
namespace adapter_pi_test {

using Strings = std::vector<std::string>;

const Strings k_unset{"IS_SANDBOX"};
const Strings k_read_only{"write-withheld", "shell-write-withheld", "delegation-escape",
                          "self-promotion", "hostile-workspace",    "mcp-reachability",
                          "tool-census"};
const Strings k_workspace{"outside-workspace-write", "hostile-workspace", "tool-census"};
const Strings k_workspace_no_shell{"outside-workspace-write", "hostile-workspace", "tool-census",
                                   "rm-prompt"};
const std::string k_no_sandbox = "no sandbox: shell commands run unasked";
const std::string k_all_tools = "read,bash,edit,write,grep,find,ls";

/// Where a pi dispatch keeps its sessions: the support dir of sonata's machine dir.
std::string pi_sessions() { return machine_dir(current_environment()) + "/support/pi-sessions"; }

/// `pi -p --no-extensions --tools TOOLS --no-approve --session-dir <support>/pi-sessions` and
/// `more`: the argv of every pi mapping of a version that is unknown or 1.x.
Strings pi_argv(const std::string& tools, const Strings& more = {}) {
    Strings argv{"pi",  "-p",           "--no-extensions", "--tools",
                 tools, "--no-approve", "--session-dir",   pi_sessions()};
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
}

Invocation pi_run(Strings argv, Strings relies, Strings notes = {}) {
    return Invocation{.argv = std::move(argv),
                      .env = {{"PI_OFFLINE", "1"}},
                      .env_unset = k_unset,
                      .path_first = {},
                      .cwd = {},
                      .prompt = PromptChannel::argument,
                      .interactive = false,
                      .report = ReportSource::stdout_text,
                      .relies_on = std::move(relies),
                      .notes = std::move(notes)};
}

PlanCase pi(std::string harness, Mode parent, RoleKind role = RoleKind::write,
            std::map<std::string, std::string> options = {}) {
    return plan_case(std::move(harness), parent, role, std::move(options));
}

struct Cell {
    std::string name;
    PlanCase input;
    Invocation want;
};

class PiCell : public ::testing::TestWithParam<Cell> {};

TEST_P(PiCell, WholeInvocation) {
    auto decision = decide_case(GetParam().input);
    ASSERT_TRUE(decision) << decision.error().message;
    ASSERT_TRUE(decision->runs()) << show(decision->refusal());
    EXPECT_EQ(decision->invocation(), GetParam().want) << "got:\n"
                                                       << show(decision->invocation()) << "want:\n"
                                                       << show(GetParam().want);
    EXPECT_EQ(decision->harness, GetParam().input.harness);
}

const std::map<std::string, std::string> k_no_bypass{{"dangerously_skip_permissions", "false"}};

INSTANTIATE_TEST_SUITE_P(
    Pi, PiCell,
    ::testing::Values(
        Cell{"plan", pi("pi", Mode::plan), pi_run(pi_argv("read,grep,find,ls"), k_read_only)},
        Cell{"read_only_role_in_bypass", pi("pi", Mode::bypass_permissions, RoleKind::read_only),
             pi_run(pi_argv("read,grep,find,ls"), k_read_only)},
        Cell{"read_only_role_in_default", pi("pi", Mode::default_mode, RoleKind::read_only),
             pi_run(pi_argv("read,grep,find,ls"), k_read_only)},
        Cell{"acceptEdits", pi("pi", Mode::accept_edits),
             pi_run(pi_argv(k_all_tools), guarded(k_workspace), {k_no_sandbox})},
        Cell{"bypassPermissions", pi("pi", Mode::bypass_permissions),
             pi_run(pi_argv(k_all_tools), {}, {k_no_sandbox})},
        Cell{"bypass_without_bypass",
             pi("pi", Mode::bypass_permissions, RoleKind::write, k_no_bypass),
             pi_run(
                 pi_argv(k_all_tools), {},
                 {"dangerously_skip_permissions=false changes nothing: pi has no bypass flag, and "
                  "acceptEdits gets the same tools",
                  k_no_sandbox})}),
    [](const auto& cell) { return cell.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Profile, PiCell,
    ::testing::Values(
        Cell{"plan", pi("pi-review", Mode::plan),
             pi_run(pi_argv("read,grep,find,ls"), k_read_only)},
        Cell{"read_only_role_in_accept_edits",
             pi("pi-docs-2", Mode::accept_edits, RoleKind::read_only),
             pi_run(pi_argv("read,grep,find,ls"), k_read_only)},
        Cell{"acceptEdits", pi("pi-review", Mode::accept_edits),
             pi_run(pi_argv("read,grep,find,ls,edit,write"), guarded(k_workspace_no_shell))},
        Cell{"bypassPermissions", pi("pi-review", Mode::bypass_permissions),
             pi_run(pi_argv("read,bash,edit,write"), {}, {k_no_sandbox})},
        Cell{"bypass_without_bypass",
             pi("pi-review", Mode::bypass_permissions, RoleKind::write, k_no_bypass),
             pi_run(pi_argv("read,grep,find,ls,edit,write"), k_workspace_no_shell,
                    {"dangerously_skip_permissions=false: runs with the acceptEdits tools"})}),
    [](const auto& cell) { return cell.param.name; });

TEST(PiAdapter, ModelIsPassedOn) {
    PlanCase c = pi("pi", Mode::accept_edits);
    c.model = "anthropic/claude-sonnet-4-5";
    auto decision = decide_case(c);
    ASSERT_TRUE(decision && decision->runs());
    EXPECT_EQ(decision->invocation().argv,
              pi_argv(k_all_tools, {"--model", "anthropic/claude-sonnet-4-5"}));
}

Refusal default_refusal(const std::string& id) {
    return Refusal{
        id + " has no approval system (no permission prompts, no sandbox), so \"ask me first\" "
             "cannot be honoured",
        {"dispatch in acceptEdits or bypassPermissions mode",
         "use harness codex, whose interactive TUI asks before acting",
         "use a read-only role (it runs as plan)"}};
}

TEST(PiAdapter, DefaultIsRefusedForWriteRoles) {
    for (const std::string id : {"pi", "pi-review"}) {
        auto decision = decide_case(pi(id, Mode::default_mode));
        ASSERT_TRUE(decision) << decision.error().message;
        ASSERT_FALSE(decision->runs()) << id;
        EXPECT_EQ(decision->refusal(), default_refusal(id)) << show(decision->refusal());
    }
}

TEST(PiAdapter, ResumeRepassesTheToolList) {
    for (const std::string id : {"pi", "pi-review"}) {
        PlanCase c = pi(id, Mode::plan);
        c.resume = "a1b2c3";
        auto decision = decide_case(c);
        ASSERT_TRUE(decision && decision->runs()) << id;
        Strings relies = k_read_only;
        relies.emplace_back("resume-keeps-mode");
        EXPECT_EQ(decision->invocation(),
                  pi_run(pi_argv("read,grep,find,ls", {"--session", "a1b2c3"}), relies))
            << show(decision->invocation());
    }
}

TEST(PiAdapter, SessionIdIsTheNewestSessionFilesUuid) {
    const auto& adapter = **adapters::find_adapter("pi");
    const auto home =
        std::filesystem::temp_directory_path() / ("sonata-pi-test-" + std::to_string(::getpid()));
    const auto dir = home / ".pi/agent/sessions/--run-ws--";
    ASSERT_TRUE(write_file_atomic(
        (dir / "2026-11-30T01-00-00-000Z_5b0c2d1e-aaaa-4bbb-8ccc-0123456789ab.jsonl").string(),
        "{}\n"));
    EXPECT_EQ(adapter.session_id("", "", home.string(), {}),
              "5b0c2d1e-aaaa-4bbb-8ccc-0123456789ab");
    EXPECT_EQ(adapter.session_id("", "", (home / "none").string(), {}), "");
    std::filesystem::remove_all(home);
}

// A --session-dir is shared by every pi run of one support dir: the session is the newest file
// there whose header names the run's directory, so a concurrent run elsewhere is not taken.
TEST(PiAdapter, SessionIdInASessionDirIsTheNewestOfTheRunsDirectory) {
    const auto& adapter = **adapters::find_adapter("pi");
    const auto root =
        std::filesystem::temp_directory_path() / ("sonata-pi-dir-" + std::to_string(::getpid()));
    const auto dir = root / "support/pi-sessions";
    const auto work = root / "work";
    std::filesystem::create_directories(work);
    auto session = [&](const std::string& name, const std::string& cwd) {
        ASSERT_TRUE(write_file_atomic((dir / name).string(),
                                      R"({"type":"session","version":3,"id":"x","cwd":")" + cwd +
                                          "\"}\n{}\n"));
    };
    session("2026-12-04T01-00-00-000Z_11111111-aaaa-4bbb-8ccc-0123456789ab.jsonl", work.string());
    session("2026-12-04T01-00-01-000Z_22222222-aaaa-4bbb-8ccc-0123456789ab.jsonl", "/elsewhere");
    std::filesystem::last_write_time(
        dir / "2026-12-04T01-00-00-000Z_11111111-aaaa-4bbb-8ccc-0123456789ab.jsonl",
        std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
    Invocation ran;
    ran.argv = {"pi", "-p", "--session-dir", dir.string()};
    ran.cwd = work.string();
    EXPECT_EQ(adapter.session_id("", "", "/nowhere", ran), "11111111-aaaa-4bbb-8ccc-0123456789ab");
    ran.cwd = "/elsewhere";
    EXPECT_EQ(adapter.session_id("", "", "/nowhere", ran), "22222222-aaaa-4bbb-8ccc-0123456789ab");
    ran.cwd = (root / "other").string();
    EXPECT_EQ(adapter.session_id("", "", "/nowhere", ran), "");
    std::filesystem::remove_all(root);
}

// pi 0.x has no project trust and exits on --no-approve; 1.x and an unknown version get it.
TEST(PiAdapter, NoApproveOnlyWherePiKnowsIt) {
    PlanCase c = pi("pi", Mode::plan);
    c.version = "0.73.1";
    auto old = decide_case(c);
    ASSERT_TRUE(old && old->runs());
    EXPECT_EQ(old->invocation().argv,
              (Strings{"pi", "-p", "--no-extensions", "--tools", "read,grep,find,ls",
                       "--session-dir", pi_sessions()}));
    c.version = "1.6.0";
    auto now = decide_case(c);
    ASSERT_TRUE(now && now->runs());
    EXPECT_EQ(now->invocation().argv, pi_argv("read,grep,find,ls"));
}

TEST(PiAdapter, HostileFilesOpenEveryDoorOfATrustedProject) {
    const auto& adapter = **adapters::find_adapter("pi");
    const auto hostile = adapter.hostile_files("/w", "/o/canary");
    Strings paths;
    for (const auto& f : hostile)
        paths.push_back(f.path);
    EXPECT_EQ(paths, (Strings{"/w/.pi/extensions/project-helper.ts", "/w/.pi/settings.json",
                              "/w/.pi/SYSTEM.md", "/w/.pi/APPEND_SYSTEM.md",
                              "/w/.pi/skills/repo-helper/SKILL.md"}));
    EXPECT_NE(hostile[1].content.find(R"("sessionDir": "/o/canary-sessions")"), std::string::npos)
        << hostile[1].content;
    EXPECT_NE(hostile[1].content.find(
                  "\"npmCommand\": [\n    \"touch\",\n    \"/o/canary\",\n    \"--\"\n  ]"),
              std::string::npos)
        << hostile[1].content;
    for (std::size_t i = 2; i < hostile.size(); ++i)
        EXPECT_NE(hostile[i].content.find(adapters::k_repository_prompt_marker), std::string::npos);
    const auto user = adapter.hostile_user_files("/w");
    ASSERT_EQ(user.size(), 2U);
    EXPECT_EQ(user[0].path, ".pi/agent/trust.json");
    EXPECT_EQ(user[0].content, "{\n  \"/w\": true\n}\n");
    EXPECT_EQ(user[1].path, ".pi/agent/settings.json");
    const auto mcp = adapter.project_mcp("/w", {"/s", "mcp-canary"});
    ASSERT_TRUE(mcp);
    EXPECT_EQ(mcp->tool_name, "mcp__sonata_canary__touch");
    ASSERT_EQ(mcp->files.size(), 1U);
    EXPECT_EQ(mcp->files[0].path, "/w/.pi/mcp.json");
    ASSERT_EQ(mcp->user_files.size(), 3U);
    EXPECT_EQ(mcp->user_files[2].path, ".pi/agent/mcp.json");
}

TEST(PiAdapter, ProfilesAnswerForKebabLabelsOnly) {
    auto profile = adapters::find_adapter("pi-review");
    ASSERT_TRUE(profile);
    EXPECT_EQ((*profile)->id(), "pi-<label>");
    EXPECT_EQ((*profile)->executable_names(), (Strings{"pi"}));
    EXPECT_TRUE((*profile)->matches("pi-a"));
    EXPECT_TRUE((*profile)->matches("pi-code-review-2"));
    EXPECT_FALSE((*profile)->matches("pi"));
    EXPECT_FALSE((*profile)->matches("pi-"));
    EXPECT_FALSE((*profile)->matches("pi-Review"));
    EXPECT_FALSE((*profile)->matches("pi--x"));
    EXPECT_FALSE((*profile)->matches("pi-x-"));
    EXPECT_FALSE((*profile)->matches("pi-<label>"));
    EXPECT_FALSE((*profile)->matches("pix"));

    auto plain = adapters::find_adapter("pi");
    ASSERT_TRUE(plain);
    EXPECT_EQ((*plain)->id(), "pi");
    EXPECT_FALSE((*plain)->matches("pi-review"));
    EXPECT_FALSE(adapters::find_adapter("pi-Review"));
}

TEST(PiAdapter, ForbiddenFlagsPerMode) {
    auto adapter = adapters::find_adapter("pi");
    ASSERT_TRUE(adapter);
    const Strings always{"--continue",   "-c",     "--resume",  "-r",
                         "--session-id", "--fork", "--approve", "-a"};
    Strings plan = always;
    plan.insert(plan.end(), {"--extension", "-e"});
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::plan), plan);
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::accept_edits), always);
    EXPECT_EQ((*adapter)->forbidden_flags(Mode::bypass_permissions), always);
}

TEST(PiAdapter, ConfigArgsCannotResumeOrTrustTheWorkspace) {
    for (const char* flag : {"--continue", "--approve", "--session=abc"}) {
        PlanCase c = pi("pi-review", Mode::accept_edits);
        c.extra_args = {flag};
        auto decision = decide_case(c);
        ASSERT_FALSE(decision) << flag;
        EXPECT_EQ(decision.error().code, ExitCode::config);
    }
    PlanCase c = pi("pi", Mode::plan);
    c.extra_args = {"-e", "./tools.ts"};
    auto decision = decide_case(c);
    ASSERT_FALSE(decision);
    EXPECT_EQ(decision.error().message, "flag '-e' is forbidden for pi in plan mode (config)");
}

TEST(PiAdapter, UnknownOptionsAreErrors) {
    auto decision = decide_case(
        pi("pi-review", Mode::accept_edits, RoleKind::write, {{"sandbox", "read-only"}}));
    ASSERT_FALSE(decision);
    EXPECT_EQ(decision.error().code, ExitCode::usage);
    EXPECT_EQ(decision.error().message, "option 'sandbox' is not understood by harness "
                                        "'pi-review'; it accepts: dangerously_skip_permissions");
}

adapters::EndpointSpec probe_endpoint() {
    adapters::EndpointSpec ep;
    ep.base_url = "http://127.0.0.1:40125";
    ep.home = "/run/home";
    ep.workspace = "/run/ws";
    return ep;
}

const std::string k_models_json = R"({
  "providers": {
    "sonata-probe": {
      "baseUrl": "http://127.0.0.1:40125/v1",
      "api": "openai-completions",
      "apiKey": "sonata-probe-key-0000000000000000",
      "compat": {
        "supportsDeveloperRole": false,
        "supportsReasoningEffort": false
      },
      "models": [
        {
          "id": "sonata-probe-model"
        }
      ]
    }
  }
}
)";

TEST(PiAdapter, EndpointInjectionWritesModelsJsonAndSelectsTheProvider) {
    auto adapter = adapters::find_adapter("pi-review");
    ASSERT_TRUE(adapter);
    auto decision = decide_case(pi("pi-review", Mode::plan));
    ASSERT_TRUE(decision && decision->runs());
    auto injected = (*adapter)->inject_endpoint(decision->invocation(), probe_endpoint());
    ASSERT_TRUE(injected) << injected.error().message;
    Strings argv = pi_argv("read,grep,find,ls");
    argv.insert(argv.begin() + 1, {"--provider", "sonata-probe", "--model", "sonata-probe-model"});
    Invocation want = pi_run(argv, k_read_only);
    want.env = {{"PI_CODING_AGENT_DIR", "/run/home/.pi/agent"}, {"PI_OFFLINE", "1"}};
    EXPECT_EQ(injected->invocation, want) << show(injected->invocation);
    ASSERT_EQ(injected->files.size(), 1U);
    EXPECT_EQ(injected->files[0].path, "/run/home/.pi/agent/models.json");
    EXPECT_EQ(injected->files[0].content, k_models_json);
}

TEST(PiAdapter, EndpointInjectionReplacesAGivenModel) {
    auto adapter = adapters::find_adapter("pi");
    ASSERT_TRUE(adapter);
    PlanCase c = pi("pi", Mode::accept_edits);
    c.model = "gpt-5";
    auto decision = decide_case(c);
    ASSERT_TRUE(decision && decision->runs());
    auto injected = (*adapter)->inject_endpoint(decision->invocation(), probe_endpoint());
    ASSERT_TRUE(injected);
    EXPECT_EQ(injected->invocation.argv, pi_argv(k_all_tools, {"--provider", "sonata-probe",
                                                               "--model", "sonata-probe-model"}));
}

TEST(PiAdapter, ProtocolAndToolVocabulary) {
    for (const char* id : {"pi", "pi-review"}) {
        auto adapter = adapters::find_adapter(id);
        ASSERT_TRUE(adapter);
        EXPECT_EQ((*adapter)->protocol(), adapters::WireProtocol::openai_chat);
        const auto tools = (*adapter)->tools();
        EXPECT_EQ(tools.write, (Strings{"write"}));
        EXPECT_EQ(tools.write_path_field, "path");
        EXPECT_EQ(tools.write_content_field, "content");
        EXPECT_FALSE(tools.write_path_absolute);
        EXPECT_EQ(tools.shell, (Strings{"bash"}));
        EXPECT_EQ(tools.shell_command_field, "command");
        EXPECT_EQ(tools.delegate, Strings{});
        EXPECT_EQ(tools.mode_switch, Strings{});
        EXPECT_EQ((*adapter)->permission_env(), Strings{});
    }
}

} // namespace adapter_pi_test
} // namespace sonata::testing
