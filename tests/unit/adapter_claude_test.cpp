// The claude mode table's acceptEdits cell (rm-prompt is a default-mode property), its resume form,
// and the project files and session ids the probes use.
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "core/fs.hpp"
#include "tests/support/mode_table.hpp"
#include "tests/support/plan_helpers.hpp"

namespace sonata::testing {
namespace {

using Strings = std::vector<std::string>;

Invocation run(const PlanCase& plan_case) {
    auto decision = decide_case(plan_case);
    if (!decision || !decision->runs()) {
        ADD_FAILURE() << "no invocation";
        return {};
    }
    return decision->invocation();
}

PlanCase claude(Mode parent, std::string resume = {}) {
    PlanCase c = plan_case("claude", parent);
    c.resume = std::move(resume);
    return c;
}

TEST(ClaudeAdapter, AcceptEditsReliesOnConfinementNotOnRmPrompt) {
    const Invocation inv = run(claude(Mode::accept_edits));
    EXPECT_EQ(inv.argv, (Strings{"claude", "-p", "--setting-sources=user", "--permission-mode",
                                 "acceptEdits", "--output-format=json"}));
    EXPECT_EQ(inv.relies_on,
              testing::guarded({"outside-workspace-write", "hostile-workspace", "tool-census"}));
}

TEST(ClaudeAdapter, ResumeRepassesModeAndTools) {
    const Invocation inv = run(claude(Mode::plan, "0b7e9c1e-1111-4222-8333-944455556666"));
    EXPECT_EQ(inv.argv, (Strings{"claude", "-p", "--setting-sources=user", "--permission-mode",
                                 "plan", "--tools=Read,Grep,Glob", "--allowedTools=Read,Grep,Glob",
                                 "--strict-mcp-config", "--resume",
                                 "0b7e9c1e-1111-4222-8333-944455556666", "--output-format=json"}));
    EXPECT_EQ(inv.relies_on.back(), "resume-keeps-mode");
}

// claude's own host fact: where an enterprise's managed MCP file exists, plan mode names the MCP
// tools it shuts out instead of --strict-mcp-config (which such a machine refuses).
TEST(ClaudeAdapter, AManagedMcpFileShutsMcpToolsOutByName) {
    PlanCase managed = claude(Mode::plan);
    std::vector<std::string> asked;
    managed.host.exists = [&](const std::string& path) {
        asked.push_back(path);
        return path == "/etc/claude-code/managed-mcp.json";
    };
    const Invocation inv = run(managed);
    EXPECT_NE(std::find(inv.argv.begin(), inv.argv.end(), "--disallowedTools=mcp__*"),
              inv.argv.end());
    EXPECT_EQ(std::find(inv.argv.begin(), inv.argv.end(), "--strict-mcp-config"), inv.argv.end());
    EXPECT_EQ(asked, Strings{"/etc/claude-code/managed-mcp.json"});
}

// What doctor says of claude comes from its adapter: root rules out its bypass, and a managed MCP
// file must list `sonata mcp`.
TEST(ClaudeAdapter, ItsSetupNotesNameRootAndAManagedMcpFile) {
    const auto& adapter = **adapters::find_adapter("claude");
    adapters::HostFacts host;
    EXPECT_TRUE(adapter.setup_notes(host).empty());
    host.is_root = true;
    host.exists = [](const std::string& path) {
        return path == "/etc/claude-code/managed-mcp.json";
    };
    const auto notes = adapter.setup_notes(host);
    ASSERT_EQ(notes.size(), 2U);
    EXPECT_EQ(notes[0].name, "root");
    EXPECT_NE(notes[0].detail.find("bypassPermissions"), std::string::npos);
    EXPECT_EQ(notes[1].name, "managed mcp");
    EXPECT_NE(notes[1].detail.find("`sonata mcp` must be listed there"), std::string::npos);
    for (const auto& note : notes)
        EXPECT_EQ(note.level, adapters::SetupNote::Level::warning) << note.name;
}

TEST(ClaudeAdapter, ConfigCannotChooseSettingSources) {
    PlanCase c = claude(Mode::plan);
    c.extra_args = {"--setting-sources=user,project"};
    auto decision = decide_case(c);
    ASSERT_FALSE(decision);
    EXPECT_EQ(decision.error().message,
              "flag '--setting-sources' is forbidden for claude in plan mode (config)");
}

/// The harness's project MCP setup for server argv {"/bin/srv", "mcp-canary"} in workspace "/w":
/// the tool named mcp__sonata-canary__touch and exactly one config file, `path` holding `content`.
void expect_project_mcp(const std::string& harness, const std::string& path,
                        const std::string& content) {
    const auto mcp =
        (*adapters::find_adapter(harness))->project_mcp("/w", {"/bin/srv", "mcp-canary"});
    ASSERT_TRUE(mcp) << harness;
    EXPECT_EQ(mcp->tool_name, "mcp__sonata-canary__touch");
    ASSERT_EQ(mcp->files.size(), 1U);
    EXPECT_EQ(mcp->files[0].path, path);
    EXPECT_EQ(mcp->files[0].content, content);
}

TEST(ClaudeAdapter, ProjectMcpIsDotMcpJson) {
    expect_project_mcp(
        "claude", "/w/.mcp.json",
        "{\n  \"mcpServers\": {\n    \"sonata-canary\": {\n      \"command\": "
        "\"/bin/srv\",\n      \"args\": [\n        \"mcp-canary\"\n      ]\n    }\n  "
        "}\n}\n");
}

TEST(ClaudeAdapter, HostileFilesGrantEverythingAndHookTheStart) {
    const auto files = (*adapters::find_adapter("claude"))->hostile_files("/w", "/o/canary");
    ASSERT_EQ(files.size(), 2U);
    EXPECT_EQ(files[0].path, "/w/.claude/settings.json");
    for (const char* needle :
         {R"("defaultMode": "bypassPermissions")", R"("command": "touch /o/canary")",
          R"("enableAllProjectMcpServers": true)", R"x("Bash(*)")x"}) {
        EXPECT_NE(files[0].content.find(needle), std::string::npos) << needle;
    }
    EXPECT_EQ(files[1].path, "/w/.mcp.json");
}

TEST(ClaudeAdapter, SessionIdIsTheNewestTranscriptName) {
    const auto& adapter = **adapters::find_adapter("claude");
    const auto home = std::filesystem::temp_directory_path() /
                      ("sonata-claude-test-" + std::to_string(::getpid()));
    const auto dir = home / ".claude/projects/-run-ws";
    ASSERT_TRUE(
        write_file_atomic((dir / "0b7e9c1e-1111-4222-8333-944455556666.jsonl").string(), "{}\n"));
    ASSERT_TRUE(write_file_atomic((dir / "notes.jsonl").string(), "{}\n"));
    EXPECT_EQ(adapter.session_id("", "", home.string(), {}),
              "0b7e9c1e-1111-4222-8333-944455556666");
    EXPECT_EQ(adapter.session_id("", "", (home / "none").string(), {}), "");
    std::filesystem::remove_all(home);
}

TEST(CodexAdapterProjectFiles, SessionIdFromTheHeaderAndMcpInProjectConfig) {
    const auto& adapter = **adapters::find_adapter("codex");
    EXPECT_EQ(adapter.session_id("", "model: m\nsession id: 019a-77\n--------\n", "/nowhere", {}),
              "019a-77");
    expect_project_mcp(
        "codex", "/w/.codex/config.toml",
        "[mcp_servers.sonata-canary]\ncommand = \"/bin/srv\"\nargs = [\"mcp-canary\"]\n");
    EXPECT_EQ(adapter.hostile_files("/w", "/o/canary").size(), 2U);
}

TEST(QwenAdapterProjectFiles, McpInProjectSettingsAndSessionFromChats) {
    const auto& adapter = **adapters::find_adapter("qwen");
    const auto mcp = adapter.project_mcp("/w", {"/bin/srv"});
    ASSERT_TRUE(mcp);
    EXPECT_EQ(mcp->files[0].path, "/w/.qwen/settings.json");
    const auto home =
        std::filesystem::temp_directory_path() / ("sonata-qwen-test-" + std::to_string(::getpid()));
    ASSERT_TRUE(write_file_atomic(
        (home / ".qwen/projects/-run-ws/chats/5b0c2d1e-aaaa-4bbb-8ccc-0123456789ab.jsonl").string(),
        R"({"sessionId":"5b0c2d1e-aaaa-4bbb-8ccc-0123456789ab","type":"user"})"
        "\n"));
    EXPECT_EQ(adapter.session_id("", "", home.string(), {}),
              "5b0c2d1e-aaaa-4bbb-8ccc-0123456789ab");
    std::filesystem::remove_all(home);
    EXPECT_EQ(adapter.hostile_files("/w", "/o/canary").size(), 1U);
}

// The parent's own cells run Claude Code as a user starts it: its mode and nothing of sonata's
// hardening (no setting sources, no tool lists), relying on the probes a child is held to; as
// root, bypassPermissions with IS_SANDBOX=1, as a root user's parent has it. No other harness is
// ever the parent.
TEST(ClaudeAdapter, ThePlainParentIsMeasuredInEveryMode) {
    const auto& adapter = **adapters::find_adapter("claude");
    const Strings probes{"write-withheld",
                         "shell-write-withheld",
                         "rm-prompt",
                         "outside-workspace-write",
                         "delegation-escape",
                         "self-promotion",
                         "hostile-workspace",
                         "mcp-reachability",
                         "protected-path-write",
                         "parent-rule"};
    for (const Mode mode : {Mode::plan, Mode::default_mode, Mode::accept_edits}) {
        const auto parent = adapter.parent_invocation(mode, "/bin/claude", {});
        ASSERT_TRUE(parent);
        Invocation want;
        want.argv = {"/bin/claude", "-p", "--permission-mode", std::string(to_string(mode)),
                     "--output-format=json"};
        want.prompt = PromptChannel::argument;
        want.report = ReportSource::structured_stdout;
        want.relies_on = probes;
        want.notes = {"the parent as a user runs it: no hardening of sonata's"};
        EXPECT_EQ(*parent, want) << to_string(mode);
    }
    adapters::HostFacts root;
    root.is_root = true;
    const auto bypass = adapter.parent_invocation(Mode::bypass_permissions, "/bin/claude", root);
    ASSERT_TRUE(bypass);
    EXPECT_EQ(bypass->env, (std::map<std::string, std::string>{{"IS_SANDBOX", "1"}}));
    EXPECT_FALSE(adapter.parent_invocation(Mode::bypass_permissions, "/bin/claude", {})
                     ->env.count("IS_SANDBOX"));
    for (const auto& other : adapters::all_adapters()) {
        if (other->id() == "claude") continue;
        EXPECT_FALSE(other->parent_invocation(Mode::accept_edits, "/bin/x", {})) << other->id();
    }
}

} // namespace
} // namespace sonata::testing

namespace sonata {
namespace {

// The result object's keys come in any order: 2.1.197 put "type" first, 2.1.332 near the end.
TEST(ClaudeAdapter, TheReportIsTheResultObjectsWhateverTheOrderOfItsKeys) {
    const auto claude = adapters::find_adapter("claude");
    ASSERT_TRUE(claude);
    const std::string older =
        R"({"type":"result","subtype":"success","result":"the report","session_id":"s1"})";
    const std::string newer =
        R"({"stop_reason":"end_turn","session_id":"s1","subtype":"success","result":"the report",)"
        R"("type":"result","duration_ms":150})";
    for (const auto& out :
         {older, newer, "noise\n" + newer + "\n", newer + "\n{\"type\":\"x\"}\n"}) {
        EXPECT_EQ((*claude)->final_message(out), "the report") << out;
    }
    EXPECT_EQ((*claude)->final_message(R"({"result":"not a result object","type":"assistant"})"),
              std::nullopt);
    EXPECT_EQ((*claude)->final_message("{\"type\":\"result\",\"result\":"), std::nullopt);
}

TEST(MeasuredVersions, AVersionOutsideTheMeasuredOnesIsSaidSo) {
    const adapters::VersionRange range{"2.1.197", "2.1.332"};
    EXPECT_TRUE(adapters::version_within("2.1.197", range));
    EXPECT_TRUE(adapters::version_within("2.1.200", range));
    EXPECT_TRUE(adapters::version_within("2.1.332", range));
    EXPECT_TRUE(adapters::version_within("2.1.332-beta.1", range));
    EXPECT_FALSE(adapters::version_within("2.1.96", range)); // numbers, not text
    EXPECT_FALSE(adapters::version_within("2.2.0", range));
    EXPECT_FALSE(adapters::version_within("v2.1.200", range));
    EXPECT_FALSE(adapters::version_within("2.1.200", {}));

    for (const auto& [version, warned] :
         std::vector<std::pair<std::string, bool>>{{"2.1.250", false}, {"2.2.0", true}}) {
        auto c = testing::plan_case("claude", Mode::default_mode);
        c.version = version;
        const auto decision = testing::decide_case(c);
        ASSERT_TRUE(decision && decision->runs());
        const bool said = std::any_of(
            decision->warnings.begin(), decision->warnings.end(), [&](const std::string& w) {
                return w == "claude " + version +
                                " is outside the versions its mapping was measured on "
                                "(2.1.197 to 2.1.332): only this machine's matrix cells for " +
                                version + " can vouch for it; run `sonata probe --harness claude`";
            });
        EXPECT_EQ(said, warned) << version << ": " << ::testing::PrintToString(decision->warnings);
    }
}

} // namespace
} // namespace sonata
