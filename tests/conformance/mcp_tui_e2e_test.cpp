// The real Claude Code as the parent in its interactive TUI (the front end whose MCP tool calls may
// run as tasks), hermetic: the pinned claude runs in a private tmux session against the scripted
// model server with `sonata mcp` as its MCP server and sonata's hook installed by `sonata init`;
// the prompt is typed, its scripted model calls the dispatch tool, sonata dispatches the pinned pi
// against the same server, pi's report comes back in claude's tool result, and claude exits on
// /exit leaving nothing running.
#include <chrono>
#include <iostream>
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/claude_parent.hpp"

namespace sonata {
namespace {

using json = nlohmann::json;

constexpr const char* k_marker = "SONATA-TUI-E2E-CHILD";
constexpr const char* k_token = "sonata-tui-e2e-report-5813";

class McpTuiEndToEnd : public testing::ClaudeParentFixture {};

TEST_F(McpTuiEndToEnd, ClaudesTuiDispatchesPiThroughSonatasMcpToolsAndGetsItsReport) {
    const json script = testing::child_report_script(
        json::array({testing::dispatch_call(
            {{"harness", "pi"},
             {"role", "review"},
             {"task", std::string("Review this repository. ") + k_marker}})}),
        k_marker, k_token);
    testing::ParentRun run;
    const auto start = std::chrono::steady_clock::now();
    run_parent_tui(script, "mcp__sonata__dispatch", run);
    if (HasFatalFailure()) return;
    const auto took =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start);
    EXPECT_EQ(run.claude.exit_code, 0) << run.claude.out;
    const auto& main = run.results;
    ASSERT_EQ(main.size(), 1U) << run.recording << "\n" << run.claude.out;
    // The report of pi's run, in claude's tool result, under the mode the hook recorded.
    EXPECT_NE(main[0].text.find(k_token), std::string::npos) << main[0].text;
    EXPECT_NE(main[0].text.find("pi@"), std::string::npos) << main[0].text;
    EXPECT_NE(main[0].text.find("parent mode: default (session "), std::string::npos)
        << main[0].text;
    EXPECT_NE(main[0].is_error, std::optional<bool>(true)) << main[0].text;
    // pi's run is on record in the project, done.
    const auto runs = testing::run_sonata({"runs"}, run.env, run.workspace);
    EXPECT_NE(runs.out.find("  done  pi@"), std::string::npos) << runs.out << runs.err;
    std::cout << "[ e2e ] claude TUI -> sonata mcp -> pi (" << took.count()
              << " s): " << main[0].text.substr(0, 160) << "\n";
}

} // namespace
} // namespace sonata
