// The real Claude Code as the parent in its interactive TUI, the front end that runs long MCP
// calls as tasks, hermetic: the pinned claude runs in a private tmux session against the scripted
// model server with `sonata mcp` as its MCP server and sonata's hook installed by `sonata init`.
// A dispatch whose run takes minutes comes back at once as a task naming the run, claude polls it,
// and the report reaches the model's context when the run ends; a run paused at an approval card
// is a form in claude's TUI whose answer approves it; with tasks turned off the call waits as
// before and its result names the run. A task claude's TaskStop stops cancels its run;
// a session whose terminal closed while its task ran, resumed with `claude --resume`, polls the
// task again and gets the report. Claude exits on /exit leaving nothing running.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/claude_parent.hpp"

namespace sonata {
namespace mcp_tui_e2e_test {

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

    /// Seconds from one receipt time ("2026-07-28T10:00:00Z") to another; -1 when one is not one.
    static long long seconds_between(const std::string& from, const std::string& to) {
        const auto parse = [](const std::string& text) -> std::optional<std::time_t> {
            std::tm utc{};
            std::istringstream in(text);
            in >> std::get_time(&utc, "%Y-%m-%dT%H:%M:%SZ");
            if (in.fail()) return std::nullopt;
            return ::timegm(&utc);
        };
        const auto a = parse(from);
        const auto b = parse(to);
        return a && b ? static_cast<long long>(*b - *a) : -1;
    }

    /// Whether a process named `name` (its comm) works under `root` now.
    static bool runs_under(const std::string& root, const std::string& name) {
        const auto found = testing::processes_working_under(root);
        return std::any_of(found.begin(), found.end(), [&](const std::string& entry) {
            std::ifstream comm("/proc/" + entry.substr(0, entry.find(' ')) + "/comm");
            std::string comm_name;
            return std::getline(comm, comm_name) && comm_name == name;
        });
    }

    /// Whether claude keeps session `id` (its transcript under `home`'s ~/.claude/projects).
    static bool claude_kept_session(const std::string& home, const std::string& id) {
        std::error_code ec;
        for (const auto& project :
             std::filesystem::directory_iterator(home + "/.claude/projects", ec))
            if (std::filesystem::exists(project.path() / (id + ".jsonl"))) return true;
        return false;
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

TEST_F(McpTuiEndToEnd, ATaskStoppedInClaudeCancelsItsRunAndLeavesNothingRunning) {
    // pi's run would take 150 s; claude's model waits 10 s on it (the run is under way, its sleep
    // running), then stops the task with claude's own TaskStop and the id the placeholder named.
    json s = script("write", json::array({{{"intent", "shell"}, {"command", "sleep 150"}}}));
    s["steps"].push_back(
        {{"intent", "call_tool"},
         {"name", "mcp__sonata__wait"},
         {"args",
          {{"id", "{{result:started server-side task ([0-9a-f-]+)}}"}, {"window_seconds", 10}}}});
    s["steps"].push_back({{"intent", "call_tool"},
                          {"name", "TaskStop"},
                          {"args", {{"task_id", "{{result:in the background as task (\\w+)}}"}}}});
    testing::TuiParent parent;
    parent.mode = "acceptEdits";
    bool sleep_seen = false; // the run's sleep, where the check that nothing is left looks
    parent.finished = [&](const probes::ModelServer& server) {
        sleep_seen = sleep_seen || runs_under(m_dir.path(), "sleep");
        return server.main_finished();
    };
    testing::ParentRun run;
    const auto start = std::chrono::steady_clock::now();
    run_parent_tui(s, "mcp__sonata__dispatch,mcp__sonata__wait,TaskStop", run, parent,
                   testing::ParentSetup::project_init, "pi");
    if (HasFatalFailure()) return;
    const auto took = since(start);
    EXPECT_EQ(run.claude.exit_code, 0) << run.claude.out;
    ASSERT_EQ(run.results.size(), 3U) << run.recording << "\n" << run.claude.out;
    std::smatch task;
    ASSERT_TRUE(std::regex_search(run.results[0].text, task,
                                  std::regex("started server-side task ([0-9a-f-]+), running in "
                                             "the background as task (\\w+)")))
        << run.results[0].text;
    const std::string id = task[1].str();
    EXPECT_NE(run.results[1].text.find("\"state\":\"running\""), std::string::npos)
        << run.results[1].text;
    EXPECT_NE(run.results[2].text.find("Task " + task[2].str() + " ("), std::string::npos)
        << run.results[2].text;
    EXPECT_NE(run.results[2].text.find("is stopped"), std::string::npos) << run.results[2].text;
    EXPECT_TRUE(sleep_seen) << "pi's sleep ran under the scratch directory";
    // claude's tasks/cancel cancelled the run (the model never called sonata's cancel tool): its
    // receipt says so, and it ended long before its sleep would have.
    const auto status = testing::run_sonata({"status", id, "--json"}, run.env, run.workspace);
    const auto receipt = json::parse(status.out, nullptr, false);
    ASSERT_TRUE(receipt.is_object()) << status.out << status.err;
    EXPECT_EQ(receipt.value("state", ""), "cancelled") << status.out;
    const auto lasted =
        seconds_between(receipt.value("started_at", ""), receipt.value("ended_at", ""));
    EXPECT_LT(lasted, 60) << status.out;
    std::cout << "[ e2e ] claude TUI -> sonata mcp task -> pi, stopped by TaskStop after " << lasted
              << " s (" << took.count() << " s in all)\n";
}

TEST_F(McpTuiEndToEnd, AResumedSessionTakesTheTaskUpAndItsReportReachesTheModel) {
    // pi's run takes 45 s. claude's first session dispatches it and ends its turn, then its
    // terminal closes under it (/exit would offer to stop the task); the run goes on.
    const json steps = json::array({{{"intent", "shell"}, {"command", "sleep 45"}}});
    testing::TuiParent first;
    first.mode = "acceptEdits";
    first.end = testing::TuiEnd::close_terminal;
    first.next = testing::NextSession::follows;
    testing::ParentRun before;
    const auto start = std::chrono::steady_clock::now();
    run_parent_tui(script("write", steps), "mcp__sonata__dispatch", before, first,
                   testing::ParentSetup::project_init, "pi");
    if (HasFatalFailure()) return;
    ASSERT_EQ(before.results.size(), 1U) << before.recording << "\n" << before.claude.out;
    const std::string& placeholder = before.results[0].text;
    std::smatch task;
    std::smatch session;
    ASSERT_TRUE(
        std::regex_search(placeholder, task, std::regex("started server-side task ([0-9a-f-]+)")))
        << placeholder;
    ASSERT_TRUE(std::regex_search(placeholder, session,
                                  std::regex("\\(session ([0-9a-f-]+), recorded by the hook")))
        << placeholder;
    EXPECT_EQ(placeholder.find(k_token), std::string::npos) << "not before the run ended";
    // The session the hook recorded is the one claude keeps, and the run outlived the session.
    EXPECT_TRUE(claude_kept_session(before.env.at("HOME"), session[1].str())) << session[1];
    const auto status =
        testing::run_sonata({"status", task[1].str(), "--json"}, before.env, before.workspace);
    EXPECT_EQ(json::parse(status.out, nullptr, false).value("state", ""), "running")
        << status.out << status.err;
    // `claude --resume` of that session, nothing typed: claude polls the task again, and the
    // run's report reaches the model when the run ends.
    testing::TuiParent resumed;
    resumed.args = {"--resume", session[1].str()};
    resumed.prompt = "";
    resumed.finished = [](const probes::ModelServer& server) {
        return testing::main_saw(server, k_token);
    };
    testing::ParentRun after;
    continue_parent_tui(resumed, after);
    if (HasFatalFailure()) return;
    const auto took = since(start);
    EXPECT_EQ(after.claude.exit_code, 0) << after.claude.out;
    EXPECT_GE(took.count(), 45);
    const auto runs = testing::run_sonata({"runs"}, after.env, after.workspace);
    EXPECT_NE(runs.out.find(task[1].str() + "  done  pi@"), std::string::npos)
        << runs.out << runs.err;
    std::cout << "[ e2e ] claude TUI task, session closed and resumed -> pi's report, 45 s ("
              << took.count() << " s)\n";
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

} // namespace mcp_tui_e2e_test
} // namespace sonata
