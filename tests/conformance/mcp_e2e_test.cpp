// The real Claude Code as the parent, hermetic: the pinned claude runs headless against the
// scripted model server with `sonata mcp` as its MCP server and sonata's hook installed by
// `sonata init`; its scripted model calls the dispatch tool, sonata dispatches the pinned pi
// against the same server, pi's report comes back in claude's tool result, and a dispatch the gate
// refuses comes back as a tool error naming the alternatives. The plugin in plugin/ passes `claude
// plugin validate`.
#include <filesystem>
#include <iostream>
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/claude_parent.hpp"

namespace sonata {
namespace {

using json = nlohmann::json;
using testing::child_report_script;
using testing::dispatch_call;
using testing::ParentRun;

constexpr const char* k_marker = "SONATA-E2E-CHILD";
constexpr const char* k_token = "sonata-e2e-report-4711";

class McpEndToEnd : public testing::ClaudeParentFixture {};

TEST_F(McpEndToEnd, ClaudeDispatchesPiThroughSonatasMcpToolsAndGetsItsReport) {
    const json script = child_report_script(
        {dispatch_call({{"harness", "pi"},
                        {"role", "review"},
                        {"task", std::string("Review this repository. ") + k_marker}}),
         dispatch_call({{"harness", "pi"}, {"role", "write"}, {"task", "Change it."}})},
        k_marker, k_token);
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
    const json script =
        child_report_script({{{"intent", "call_tool"},
                              {"name", "mcp__plugin_sonata_sonata__dispatch"},
                              {"args",
                               {{"harness", "pi"},
                                {"role", "review"},
                                {"task", std::string("Review this repository. ") + k_marker}}}}},
                            k_marker, k_token);
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
