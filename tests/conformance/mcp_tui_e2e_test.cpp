// The real Claude Code as the parent in its interactive TUI, the front end that runs long MCP
// calls as tasks, hermetic: the pinned claude runs in a private tmux session against the scripted
// model server with `sonata mcp` as its MCP server and sonata's hook installed by `sonata init`.
// A dispatch whose run takes minutes comes back at once as a task naming the run, claude polls it,
// and the report reaches the model's context when the run ends; a run paused at an approval card
// is a form in claude's TUI whose answer approves it; with tasks turned off the call waits as
// before and its result names the run. Claude exits on /exit leaving nothing running.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/claude_parent.hpp"

namespace sonata {
namespace {

using json = nlohmann::json;

constexpr const char* k_marker = "SONATA-TUI-E2E-CHILD";
constexpr const char* k_token = "sonata-tui-e2e-report-5813";

class McpTuiEndToEnd : public testing::ClaudeParentFixture {
protected:
    /// claude dispatches pi (role `role`) with `steps` of its own, and pi reports k_token.
    static json script(const std::string& role, const json& child_steps) {
        json s = testing::child_report_script(
            json::array({testing::dispatch_call(
                {{"harness", "pi"},
                 {"role", role},
                 {"task", std::string("Work on this repository. ") + k_marker}})}),
            k_marker, k_token);
        s["subagents"][k_marker]["steps"] = child_steps;
        s["watch"] = {k_token};
        return s;
    }

    static std::chrono::seconds since(std::chrono::steady_clock::time_point start) {
        return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                start);
    }
};

TEST_F(McpTuiEndToEnd, ALongDispatchIsATaskWhoseReportReachesTheModelWhenTheRunEnds) {
    // pi's run takes 150 s: longer than any client-side limit on a call that waits.
    const json steps = json::array({{{"intent", "shell"}, {"command", "sleep 150"}}});
    testing::TuiParent parent;
    parent.mode = "acceptEdits";
    parent.finished = [](const probes::ModelServer& server) {
        return testing::main_saw(server, k_token);
    };
    testing::ParentRun run;
    const auto start = std::chrono::steady_clock::now();
    run_parent_tui(script("write", steps), "mcp__sonata__dispatch", run, parent,
                   testing::ParentSetup::project_init, "pi");
    if (HasFatalFailure()) return;
    const auto took = since(start);
    EXPECT_EQ(run.claude.exit_code, 0) << run.claude.out;
    ASSERT_EQ(run.results.size(), 1U) << run.recording << "\n" << run.claude.out;
    // The call came back at once as a task named by the run's id, with sonata's note.
    const std::string& placeholder = run.results[0].text;
    std::smatch id;
    ASSERT_TRUE(
        std::regex_search(placeholder, id, std::regex("started server-side task ([0-9a-f-]+)")))
        << placeholder;
    EXPECT_NE(placeholder.find("run " + id[1].str() + ": pi@"), std::string::npos) << placeholder;
    EXPECT_NE(placeholder.find("in acceptEdits mode"), std::string::npos) << placeholder;
    EXPECT_EQ(placeholder.find(k_token), std::string::npos) << "not before the run ended";
    // The report reached the model after the run's 150 s, and the run is on record, done.
    EXPECT_GE(took.count(), 150);
    const auto runs = testing::run_sonata({"runs"}, run.env, run.workspace);
    EXPECT_NE(runs.out.find(id[1].str() + "  done  pi@"), std::string::npos)
        << runs.out << runs.err;
    std::cout << "[ e2e ] claude TUI -> sonata mcp task -> pi, 150 s (" << took.count()
              << " s): " << placeholder.substr(0, 120) << "\n";
}

TEST_F(McpTuiEndToEnd, WithTasksOffTheCallWaitsAndItsResultNamesTheRun) {
    testing::TuiParent parent;
    parent.env = {{"CLAUDE_CODE_DISABLE_MCP_TASKS", "1"}};
    testing::ParentRun run;
    const auto start = std::chrono::steady_clock::now();
    run_parent_tui(script("review", json::array()), "mcp__sonata__dispatch", run, parent);
    if (HasFatalFailure()) return;
    EXPECT_EQ(run.claude.exit_code, 0) << run.claude.out;
    const auto& main = run.results;
    ASSERT_EQ(main.size(), 1U) << run.recording << "\n" << run.claude.out;
    // The report of pi's run, in claude's tool result, under the mode the hook recorded.
    EXPECT_NE(main[0].text.find(k_token), std::string::npos) << main[0].text;
    EXPECT_TRUE(
        std::regex_search(main[0].text, std::regex("run [0-9]{8}-[0-9]{9}-[0-9a-f]{6}: pi@")))
        << main[0].text;
    EXPECT_NE(main[0].text.find("parent mode: default (session "), std::string::npos)
        << main[0].text;
    EXPECT_NE(main[0].is_error, std::optional<bool>(true)) << main[0].text;
    const auto runs = testing::run_sonata({"runs"}, run.env, run.workspace);
    EXPECT_NE(runs.out.find("  done  pi@"), std::string::npos) << runs.out << runs.err;
    std::cout << "[ e2e ] claude TUI, tasks off -> sonata mcp -> pi (" << since(start).count()
              << " s): " << main[0].text.substr(0, 120) << "\n";
}

TEST_F(McpTuiEndToEnd, APausedRunIsAFormTheUserAnswersAndItsReportFollows) {
    // reasonix's TUI (its default mapping) asks before a write: the task turns input_required,
    // claude shows the card as a form, the user answers yes, and the run goes on to its report.
    constexpr const char* marker = "SONATA-TUI-E2E-ASKS";
    const json s = {
        {"steps", json::array({testing::dispatch_call(
                      {{"harness", "reasonix"},
                       {"role", "code"},
                       {"task", std::string("Create the marker file. ") + marker}})})},
        {"final", "claude is done"},
        {"watch", {k_token}},
        {"subagents",
         {{marker,
           {{"steps",
             {{{"intent", "write_file"}, {"path", "approved-by-user"}, {"content", "yes\n"}}}},
            {"final", k_token}}}}}};
    testing::TuiParent parent;
    parent.finished = [](const probes::ModelServer& server) {
        return testing::main_saw(server, k_token);
    };
    // What a user does at claude's form: expand the answer, pick yes, move to Accept, press it.
    std::string form;
    parent.respond = [&form](const std::string& screen) -> std::vector<std::string> {
        if (screen.find("requests your input") == std::string::npos) return {};
        if (form.empty()) form = screen;
        if (screen.find("Allow it?: ▸ not set") != std::string::npos) return {"Right"};
        if (screen.find("❯ ◯ yes") != std::string::npos) return {"Space"};
        if (screen.find("✔ Allow it?: ▸ yes") != std::string::npos) return {"Down"};
        if (screen.find("❯ Accept") != std::string::npos) return {"Enter"};
        return {};
    };
    testing::ParentRun run;
    const auto start = std::chrono::steady_clock::now();
    run_parent_tui(s, "mcp__sonata__dispatch", run, parent, testing::ParentSetup::global_init,
                   "reasonix");
    if (HasFatalFailure()) return;
    EXPECT_EQ(run.claude.exit_code, 0) << run.claude.out;
    ASSERT_EQ(run.results.size(), 1U) << run.recording;
    std::smatch id;
    ASSERT_TRUE(std::regex_search(run.results[0].text, id,
                                  std::regex("started server-side task ([0-9a-f-]+)")))
        << run.results[0].text;
    EXPECT_NE(form.find("MCP server “sonata” requests your input"), std::string::npos) << form;
    EXPECT_NE(form.find("sonata run " + id[1].str() + " (reasonix) asks:"), std::string::npos)
        << form;
    EXPECT_TRUE(std::filesystem::exists(run.workspace + "/approved-by-user"))
        << "the form's yes approved the write";
    const auto runs = testing::run_sonata({"runs", "--json"}, run.env, run.workspace);
    const auto receipts = json::parse(runs.out, nullptr, false);
    ASSERT_TRUE(receipts.is_array() && receipts.size() == 1U) << runs.out << runs.err;
    EXPECT_EQ(receipts[0]["id"], id[1].str());
    EXPECT_EQ(receipts[0]["state"], "done");
    ASSERT_EQ(receipts[0]["approvals"].size(), 1U) << receipts[0].dump();
    EXPECT_EQ(receipts[0]["approvals"][0]["answer"], "yes");
    std::cout << "[ e2e ] claude TUI -> sonata mcp task -> reasonix, input_required answered in "
                 "claude's form ("
              << since(start).count() << " s)\n";
}

} // namespace
} // namespace sonata
