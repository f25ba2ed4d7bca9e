// The real Claude Code as the parent, hermetic: the pinned claude runs headless against the
// scripted model server with `sonata mcp` as its MCP server and sonata's hook installed by
// `sonata init`; its scripted model calls the dispatch tool, sonata dispatches the pinned pi
// against the same server, pi's report comes back in claude's tool result, and a dispatch the gate
// refuses comes back as a tool error naming the alternatives. The plugin in plugin/ passes `claude
// plugin validate`.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "core/node_runtime.hpp"
#include "core/process.hpp"
#include "probes/model_server.hpp"
#include "probes/script.hpp"
#include "probes/workspace.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

using json = nlohmann::json;

constexpr const char* k_marker = "SONATA-E2E-CHILD";
constexpr const char* k_token = "sonata-e2e-report-4711";

/// What one parent run left: claude's result and the main conversation's tool results.
struct ParentRun {
    testing::SonataRun claude;
    std::vector<probes::ToolResultRecord> results; ///< claude's own conversation only.
    std::string recording;
    Environment env; ///< sonata's environment, for `sonata runs` afterwards.
    std::string workspace;
};

class McpEndToEnd : public ::testing::Test {
protected:
    void SetUp() override {
        const char* path = std::getenv("PATH");
        m_path = path != nullptr ? path : "/usr/bin:/bin";
        for (const char* name : {"claude", "pi", "reasonix"}) {
            if (!search_path(name, m_path)) {
                const std::string why = testing::missing_harness_skip_reason();
                if (why.empty()) FAIL() << name << " is not installed although npm answered";
                GTEST_SKIP() << name << " is not installed: " << why;
            }
        }
        m_claude = *search_path("claude", m_path);
    }

    /// Runs the pinned claude headless in `default` mode against `script`, in a scratch project
    /// where `sonata init --yes` installed the hook and registered `sonata mcp`, with `allowed`
    /// (sonata's MCP tools) allowed. pi and reasonix find the same model server in HOME, as a
    /// user's own config would point them at their provider.
    enum class Setup { project_init, global_init, plugin };

    /// `vocabulary`: the harness whose tool names the scripted intents resolve to (claude's own
    /// steps name their tools; a child's write or shell intent needs the child's names).
    void run_parent(const json& script, const std::string& allowed, ParentRun& out,
                    Setup setup = Setup::project_init, const std::string& vocabulary = "claude") {
        auto runner = make_system_runner();
        auto scratch = probes::Scratch::create(m_dir.path(), "", *runner);
        ASSERT_TRUE(scratch) << scratch.error().message;
        auto parsed = probes::parse_script(script.dump());
        ASSERT_TRUE(parsed) << parsed.error().message;
        const auto& claude = **adapters::find_adapter("claude");
        probes::ModelServer server(*parsed, (*adapters::find_adapter(vocabulary))->tools(),
                                   scratch->workspace());
        ASSERT_TRUE(server.start());
        adapters::EndpointSpec endpoint;
        endpoint.base_url = server.base_url();
        endpoint.home = scratch->home();
        endpoint.workspace = scratch->workspace();
        Invocation parent;
        parent.argv = {m_claude};
        auto injected = claude.inject_endpoint(parent, endpoint);
        ASSERT_TRUE(injected) << injected.error().message;
        ASSERT_TRUE(scratch->write_files(injected->files));
        Environment env = scratch->environment(current_environment());
        env["PATH"] = m_path;
        // The Node.js runtimes a user's own harness cache holds (pi 1.x needs Node.js 22): the
        // scratch HOME has none.
        if (const auto runtimes = harness_runtimes_dir(current_environment()); !runtimes.empty())
            env["SONATA_RUNTIMES_DIR"] = runtimes;
        for (const char* child : {"pi", "reasonix"}) {
            Invocation inv;
            inv.argv = {child};
            auto config = (*adapters::find_adapter(child))->inject_endpoint(inv, endpoint);
            ASSERT_TRUE(config) << config.error().message;
            ASSERT_TRUE(scratch->write_files(config->files));
            for (const auto& [key, value] : config->invocation.env)
                if (key != "REASONIX_HOME") env[key] = value; // reasonix reads ~/.reasonix
        }
        testing::write_text(
            scratch->home() + "/.pi/agent/settings.json",
            json{{"defaultProvider", "sonata-probe"}, {"defaultModel", endpoint.model}}.dump());
        Environment claude_env = env;
        for (const auto& [key, value] : injected->invocation.env)
            claude_env[key] = value;
        std::vector<std::string> argv = {m_claude,
                                         "-p",
                                         "Hand this to another agent.",
                                         "--permission-mode",
                                         "default",
                                         "--allowedTools=" + allowed};
        if (setup == Setup::plugin) {
            // The plugin from this repository's marketplace, as its README installs it: it
            // brings the hook and the MCP server, started as `sonata` from PATH.
            env["PATH"] = std::filesystem::path(SONATA_BIN).parent_path().string() + ":" + m_path;
            claude_env["PATH"] = env["PATH"];
            for (const std::vector<std::string>& step :
                 {std::vector<std::string>{m_claude, "plugin", "marketplace", "add",
                                           SONATA_SOURCE_DIR},
                  std::vector<std::string>{m_claude, "plugin", "install", "sonata@sonata"}}) {
                const auto r = testing::run_program(step, claude_env, scratch->workspace());
                ASSERT_EQ(r.exit_code, 0) << step[2] << ": " << r.out << r.err;
            }
            testing::write_text(scratch->workspace() + "/sonata.toml", "");
        } else if (setup == Setup::global_init) {
            // For every project: the hook in ~/.claude/settings.json, the server in ~/.claude.json
            // (Claude Code's user scope, beside what the endpoint injection wrote there).
            const auto init = testing::run_sonata({"init", "--scope", "global", "--yes"}, env,
                                                  scratch->workspace());
            ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
            testing::write_text(scratch->workspace() + "/sonata.toml", "");
        } else {
            // The hook, the MCP server and sonata.toml, as a user's `sonata init` installs them.
            const auto init = testing::run_sonata({"init", "--yes"}, env, scratch->workspace());
            ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
            // init registered `sonata mcp` in the project's .mcp.json; claude reads that only.
            argv.insert(argv.end(), {"--strict-mcp-config", "--mcp-config",
                                     scratch->workspace() + "/.mcp.json"});
        }
        out.claude = testing::run_program(argv, claude_env, scratch->workspace());
        for (const auto& result : server.tool_results())
            if (result.track.empty()) out.results.push_back(result);
        out.recording = probes::recording_to_json(server.recording(), server.tool_results());
        out.env = env;
        out.workspace = scratch->workspace();
        m_scratch.emplace(std::move(*scratch));
    }

    std::string m_path;
    std::string m_claude;
    testing::ScratchDir m_dir;
    std::optional<probes::Scratch> m_scratch;
};

json dispatch_call(const json& args) {
    return {{"intent", "call_tool"}, {"name", "mcp__sonata__dispatch"}, {"args", args}};
}

TEST_F(McpEndToEnd, ClaudeDispatchesPiThroughSonatasMcpToolsAndGetsItsReport) {
    const json script = {
        {"steps",
         {dispatch_call({{"harness", "pi"},
                         {"role", "review"},
                         {"task", std::string("Review this repository. ") + k_marker}}),
          dispatch_call({{"harness", "pi"}, {"role", "write"}, {"task", "Change it."}})}},
        {"final", "claude is done"},
        {"subagents", {{k_marker, {{"steps", json::array()}, {"final", k_token}}}}}};
    ParentRun run;
    run_parent(script, "mcp__sonata__dispatch", run);
    if (HasFatalFailure()) return;
    EXPECT_EQ(run.claude.exit_code, 0) << run.claude.out << run.claude.err;
    const auto& main = run.results;
    ASSERT_EQ(main.size(), 2U) << run.recording;
    // The report of pi's run, in claude's tool result, under the mode the hook recorded.
    EXPECT_NE(main[0].text.find(k_token), std::string::npos) << main[0].text;
    EXPECT_NE(main[0].text.find("pi@"), std::string::npos) << main[0].text;
    EXPECT_NE(main[0].text.find("parent mode: default (session "), std::string::npos)
        << main[0].text;
    EXPECT_NE(main[0].is_error, std::optional<bool>(true)) << main[0].text;
    // A dispatch pi cannot honour in this mode: a tool error that names the alternatives.
    EXPECT_EQ(main[1].is_error, std::optional<bool>(true)) << main[1].text;
    EXPECT_NE(main[1].text.find("refuse: pi has no approval system"), std::string::npos)
        << main[1].text;
    EXPECT_NE(main[1].text.find("instead: "), std::string::npos) << main[1].text;
    // pi's run is on record in the project, done.
    const auto runs = testing::run_sonata({"runs"}, run.env, run.workspace);
    EXPECT_NE(runs.out.find("  done  pi@"), std::string::npos) << runs.out << runs.err;
    std::cout << "[ e2e ] claude -> sonata mcp -> pi: " << main[0].text.substr(0, 160) << "\n";
}

TEST_F(McpEndToEnd, ThePluginInstalledFromTheMarketplaceDispatchesToo) {
    const json script = {
        {"steps",
         {{{"intent", "call_tool"},
           {"name", "mcp__plugin_sonata_sonata__dispatch"},
           {"args",
            {{"harness", "pi"},
             {"role", "review"},
             {"task", std::string("Review this repository. ") + k_marker}}}}}},
        {"final", "claude is done"},
        {"subagents", {{k_marker, {{"steps", json::array()}, {"final", k_token}}}}}};
    ParentRun run;
    run_parent(script, "mcp__plugin_sonata_sonata__dispatch", run, Setup::plugin);
    if (HasFatalFailure()) return;
    EXPECT_EQ(run.claude.exit_code, 0) << run.claude.out << run.claude.err;
    ASSERT_EQ(run.results.size(), 1U) << run.recording;
    EXPECT_NE(run.results[0].text.find(k_token), std::string::npos) << run.results[0].text;
    // The plugin's hook recorded the session before its MCP tool ran.
    EXPECT_NE(run.results[0].text.find("parent mode: default (session "), std::string::npos)
        << run.results[0].text;
    const auto doctor = testing::run_sonata({"doctor"}, run.env, run.workspace);
    EXPECT_NE(doctor.out.find("ok       mcp: `sonata mcp` is registered in the sonata plugin"),
              std::string::npos)
        << doctor.out;
}

TEST_F(McpEndToEnd, APausedChildComesBackPausedAndApproveContinuesIt) {
    // reasonix's TUI (its default mapping) asks before a write; claude's scripted model
    // answers the card through the approve tool, with the run id the dispatch result named.
    constexpr const char* marker = "SONATA-E2E-ASKS";
    const json script = {
        {"steps",
         {dispatch_call({{"harness", "reasonix"},
                         {"role", "code"},
                         {"task", std::string("Create the marker file. ") + marker}}),
          {{"intent", "call_tool"},
           {"name", "mcp__sonata__approve"},
           {"args", {{"id", "{{result:run ([0-9a-z-]+): reasonix@}}"}, {"answer", "yes"}}}}}},
        {"final", "claude is done"},
        {"subagents",
         {{marker,
           // reasonix asks before any write in its default posture; its file tool, unlike its
           // shell, needs no bubblewrap once approved.
           {{"steps",
             {{{"intent", "write_file"}, {"path", "approved-by-claude"}, {"content", "yes\n"}}}},
            {"final", k_token}}}}}};
    ParentRun run;
    run_parent(script, "mcp__sonata__dispatch,mcp__sonata__approve", run, Setup::global_init,
               "reasonix");
    if (HasFatalFailure()) return;
    EXPECT_EQ(run.claude.exit_code, 0) << run.claude.out << run.claude.err;
    const auto& main = run.results;
    ASSERT_EQ(main.size(), 2U) << run.recording;
    EXPECT_NE(main[0].text.find("paused"), std::string::npos) << main[0].text;
    EXPECT_NE(main[0].text.find("Answer with the approve tool"), std::string::npos) << main[0].text;
    EXPECT_NE(main[1].text.find("answered yes"), std::string::npos) << main[1].text;
    EXPECT_NE(main[1].text.find(k_token), std::string::npos) << main[1].text;
    EXPECT_TRUE(std::filesystem::exists(run.workspace + "/approved-by-claude"))
        << "approve yes ran the command";
    // The receipt: one card, answered yes, by the approve call.
    const auto runs = testing::run_sonata({"runs", "--json"}, run.env, run.workspace);
    const auto receipts = json::parse(runs.out, nullptr, false);
    ASSERT_TRUE(receipts.is_array() && receipts.size() == 1U) << runs.out << runs.err;
    EXPECT_EQ(receipts[0]["state"], "done");
    ASSERT_EQ(receipts[0]["approvals"].size(), 1U) << receipts[0].dump();
    EXPECT_EQ(receipts[0]["approvals"][0]["answer"], "yes");
    std::cout << "[ e2e ] claude -> sonata mcp -> reasonix (paused, approved): "
              << main[1].text.substr(0, 160) << "\n";
}

TEST_F(McpEndToEnd, ThePluginPassesClaudesValidator) {
    const std::string root = SONATA_SOURCE_DIR;
    Environment env{{"HOME", m_dir.make_dir("home")}, {"PATH", m_path}, {"LANG", "C.UTF-8"}};
    for (const std::string& dir : {root + "/plugin", root}) {
        const auto run = testing::run_program({m_claude, "plugin", "validate", dir}, env, root);
        EXPECT_EQ(run.exit_code, 0) << dir << ":\n" << run.out << run.err;
        EXPECT_NE(run.out.find("Validation passed"), std::string::npos) << run.out;
    }
}

} // namespace
} // namespace sonata
