// The real Claude Code as the parent, hermetic: the pinned claude runs headless against the
// scripted model server with `sonata mcp` as its MCP server and sonata's hook installed by
// `sonata init`; its scripted model calls the dispatch tool, sonata dispatches the pinned pi
// against the same server, pi's report comes back in claude's tool result, and a dispatch the gate
// refuses comes back as a tool error naming the alternatives. The plugin in plugin/ passes `claude
// plugin validate`.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
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

class McpEndToEnd : public ::testing::Test {
protected:
    void SetUp() override {
        const char* path = std::getenv("PATH");
        m_path = path != nullptr ? path : "/usr/bin:/bin";
        for (const char* name : {"claude", "pi"}) {
            if (!search_path(name, m_path)) {
                const std::string why = testing::missing_harness_skip_reason();
                if (why.empty()) FAIL() << name << " is not installed although npm answered";
                GTEST_SKIP() << name << " is not installed: " << why;
            }
        }
        m_claude = *search_path("claude", m_path);
    }

    std::string m_path;
    std::string m_claude;
    testing::ScratchDir m_dir;
};

TEST_F(McpEndToEnd, ClaudeDispatchesPiThroughSonatasMcpToolsAndGetsItsReport) {
    auto runner = make_system_runner();
    auto scratch = probes::Scratch::create(m_dir.path(), "", *runner);
    ASSERT_TRUE(scratch) << scratch.error().message;
    const json script = {
        {"steps",
         {{{"intent", "call_tool"},
           {"name", "mcp__sonata__dispatch"},
           {"args",
            {{"harness", "pi"},
             {"role", "review"},
             {"task", std::string("Review this repository. ") + k_marker}}}},
          {{"intent", "call_tool"},
           {"name", "mcp__sonata__dispatch"},
           {"args", {{"harness", "pi"}, {"role", "write"}, {"task", "Change it."}}}}}},
        {"final", "claude is done"},
        {"subagents", {{k_marker, {{"steps", json::array()}, {"final", k_token}}}}}};
    auto parsed = probes::parse_script(script.dump());
    ASSERT_TRUE(parsed) << parsed.error().message;
    const auto& claude = **adapters::find_adapter("claude");
    probes::ModelServer server(*parsed, claude.tools(), scratch->workspace());
    ASSERT_TRUE(server.start());

    adapters::EndpointSpec endpoint;
    endpoint.base_url = server.base_url();
    endpoint.home = scratch->home();
    endpoint.workspace = scratch->workspace();
    // claude's endpoint, and pi's as its own config in HOME would have it.
    Invocation parent;
    parent.argv = {m_claude};
    auto injected = claude.inject_endpoint(parent, endpoint);
    ASSERT_TRUE(injected) << injected.error().message;
    ASSERT_TRUE(scratch->write_files(injected->files));
    Invocation child;
    child.argv = {"pi"};
    auto pi = (*adapters::find_adapter("pi"))->inject_endpoint(child, endpoint);
    ASSERT_TRUE(pi) << pi.error().message;
    ASSERT_TRUE(scratch->write_files(pi->files));
    testing::write_text(
        scratch->home() + "/.pi/agent/settings.json",
        json{{"defaultProvider", "sonata-probe"}, {"defaultModel", endpoint.model}}.dump());

    Environment env = scratch->environment(current_environment());
    env["PATH"] = m_path;
    for (const auto& [key, value] : pi->invocation.env)
        env[key] = value;
    // The hook and sonata.toml, as a user's `sonata init` installs them.
    const auto init = testing::run_sonata({"init", "--yes"}, env, scratch->workspace());
    ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
    const std::string mcp_config = scratch->root() + "/mcp.json";
    testing::write_text(
        mcp_config,
        json{{"mcpServers", {{"sonata", {{"command", SONATA_BIN}, {"args", {"mcp"}}}}}}}.dump());

    Environment claude_env = env;
    for (const auto& [key, value] : injected->invocation.env)
        claude_env[key] = value;
    const auto run =
        testing::run_program({m_claude, "-p", "Review the repository with another agent.",
                              "--permission-mode", "default", "--strict-mcp-config",
                              "--allowedTools=mcp__sonata__dispatch", "--mcp-config", mcp_config},
                             claude_env, scratch->workspace());
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;

    std::vector<probes::ToolResultRecord> main;
    for (const auto& result : server.tool_results())
        if (result.track.empty()) main.push_back(result);
    ASSERT_EQ(main.size(), 2U) << probes::recording_to_json(server.recording(),
                                                            server.tool_results());
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
    const auto runs = testing::run_sonata({"runs"}, env, scratch->workspace());
    EXPECT_NE(runs.out.find("  done  pi@"), std::string::npos) << runs.out << runs.err;
    std::cout << "[ e2e ] claude -> sonata mcp -> pi: " << main[0].text.substr(0, 160) << "\n";
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
