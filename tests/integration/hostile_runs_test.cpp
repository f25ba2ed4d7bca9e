// A run's directory and its harness are untrusted, tried as an attacker would against the real
// binary: a harness that approves its own card, forges its receipt and sentinel, swaps its run
// directory for a link or leaves a process behind in a session of its own with no run marker;
// run directories planted in a repository whose report links out, whose receipt names another
// user's process or holds terminal escapes; ids that are empty. Each case has one oracle: what
// the attack would have changed (a file, a live process, a printed secret) did not change.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "core/proc_tree.hpp"
#include "tests/support/dispatch_fixture.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::run_sonata;
using testing::SonataRun;
using testing::write_text;

/// A process of the test's own that a planted receipt names: `sleep 1000`.
class Victim {
public:
    Victim() : m_pid(::fork()) {
        if (m_pid == 0) {
            ::execl("/bin/sleep", "sleep", "1000", nullptr);
            ::_exit(127);
        }
    }
    ~Victim() {
        ::kill(m_pid, SIGKILL);
        ::waitpid(m_pid, nullptr, 0);
    }
    Victim(const Victim&) = delete;
    Victim& operator=(const Victim&) = delete;

    int pid() const { return m_pid; }
    bool alive() const { return ::waitpid(m_pid, nullptr, WNOHANG) == 0; }

private:
    pid_t m_pid;
};

bool running(int pid) { return pid > 0 && start_time_of(pid) != 0; }

class HostileRuns : public testing::DispatchFixture {
protected:
    void SetUp() override { // the stand-in as grok (headless) and reasonix (default: a TUI)
        use_stand_in({"grok", "reasonix"}, SONATA_DISPATCH_HARNESS);
        m_env["SONATA_TEST_BIN"] = SONATA_BIN;
    }

    SonataRun dispatch(const std::string& task) {
        return DispatchFixture::dispatch("grok", "code", "acceptEdits", task);
    }

    /// Waits until `ready` holds (at most 20 s).
    static void await(const std::function<bool()>& ready, const std::string& what) {
        for (int i = 0; i < 200 && !ready(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ASSERT_TRUE(ready()) << "never: " << what;
    }

    /// A run directory planted under `id`: a real finished run's receipt, changed by `change`.
    std::string plant(const std::string& id, const std::function<void(json&)>& change) {
        if (m_template.is_null()) {
            const auto run = dispatch("scenario: final TEMPLATE");
            EXPECT_EQ(run.exit_code, 0) << run.err;
            m_template = json::parse(run.out).at("receipt");
        }
        json receipt = m_template;
        receipt["id"] = id;
        change(receipt);
        write_text(run_dir(id) + "/receipt.json", receipt.dump(2));
        return run_dir(id);
    }

    json m_template;
};

// Cause 2: the card is answered only from outside the run.
TEST_F(HostileRuns, AHarnessCannotApproveItsOwnCard) {
    const std::string id = start("reasonix", "default", "scenario: tui-self-approve SELF");
    await([&] { return status(id).at("state") == "paused"; }, "the run shows its card");
    await([&] { return fs::exists(m_project + "/self-approve.txt"); }, "the harness tried");
    std::this_thread::sleep_for(std::chrono::seconds(1));
    EXPECT_NE(read_text(m_project + "/self-approve.txt"), "0\n")
        << "sonata approve, run by the harness, must fail";
    EXPECT_EQ(status(id).at("state"), "paused") << "the card is still waiting for the parent";
    EXPECT_FALSE(fs::exists(m_project + "/approved.txt"));

    const auto answered = sonata({"approve", id, "--no"});
    ASSERT_EQ(answered.exit_code, 0) << answered.err;
    const auto waited = sonata({"wait", id, "--json"});
    const json r = json::parse(waited.out).at("receipt");
    EXPECT_EQ(r.at("state"), "done") << waited.out;
    EXPECT_FALSE(fs::exists(m_project + "/approved.txt"));
    ASSERT_EQ(r.at("approvals").size(), 1U);
    EXPECT_EQ(r.at("approvals")[0].at("answer"), "no");
    const std::string by = r.at("approvals")[0].at("by");
    EXPECT_NE(by.find(std::string(SONATA_BIN) + " approve " + id + " --no"), std::string::npos)
        << "who approved is recorded: " << by;
}

// Cause 7: a forged receipt and sentinel do not end the dispatch or name its mode.
TEST_F(HostileRuns, AForgedReceiptAndSentinelDoNotEndTheDispatch) {
    const auto run = dispatch("scenario: forge FORGED");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const json out = json::parse(run.out);
    const json& r = out.at("receipt");
    EXPECT_EQ(r.at("mode"), "acceptEdits");
    EXPECT_EQ(r.at("state"), "done");
    EXPECT_NE(r.at("ended_at"), "2000-01-01T00:00:00Z") << "the supervisor's own end";
    const std::string report = out.at("report");
    const std::string provenance = "\n---\nsonata run " + r.at("id").get<std::string>() +
                                   " · role code · grok@1.0.0 · mode acceptEdits · exit 0\n";
    ASSERT_GE(report.size(), provenance.size());
    EXPECT_EQ(report.substr(report.size() - provenance.size()), provenance)
        << "the last word is the supervisor's: " << report;
    EXPECT_EQ(read_text(run_dir(r.at("id")) + "/exit"), "done 0\n");
}

// Cause 7: gc never removes a run a supervisor still holds, and cancel still stops it.
TEST_F(HostileRuns, GcAndCancelSeeARunWhoseHarnessForgedItsEnd) {
    const std::string id = start("grok", "acceptEdits", "scenario: forge-hang");
    await(
        [&] {
            return fs::exists(run_dir(id) + "/exit") &&
                   read_text(run_dir(id) + "/receipt.json").find("2000-01-01") != std::string::npos;
        },
        "the harness forged its end");
    const auto gc = sonata({"gc", "--older-than", "0s"});
    EXPECT_EQ(gc.exit_code, 0) << gc.err;
    EXPECT_TRUE(fs::exists(run_dir(id) + "/receipt.json")) << gc.out;
    const auto cancelled = sonata({"cancel", id});
    EXPECT_EQ(cancelled.exit_code, 0) << cancelled.err;
    EXPECT_EQ(status(id).at("state"), "cancelled") << "the supervisor's final receipt";
}

// Cause 7: a run directory swapped for a link is never written through.
TEST_F(HostileRuns, ARunDirectoryReplacedByALinkIsNeverWrittenThrough) {
    const auto run = dispatch("scenario: relink LINKED");
    const json r = json::parse(run.out).at("receipt");
    EXPECT_TRUE(fs::is_symlink(run_dir(r.at("id"))));
    EXPECT_EQ(testing::tree(m_project + "/decoy"), std::set<std::string>{})
        << "no receipt, report or sentinel through the link";
    const std::string moved = run_dir(r.at("id")) + ".moved";
    EXPECT_TRUE(fs::exists(moved + "/exit")) << "the supervisor wrote into its own directory";
    EXPECT_NE(read_text(moved + "/receipt.json").find("\"ended_at\""), std::string::npos);
}

// Cause 12: a descendant that left the group and the session and cleared its environment
// does not outlive the run.
TEST_F(HostileRuns, AnEscapedDescendantDoesNotOutliveTheRun) {
    const auto run = dispatch("scenario: escape GONE");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json r = json::parse(run.out).at("receipt");
    const std::string log = read_text(run_dir(r.at("id")) + "/harness.log");
    const auto at = log.find("escaped ");
    ASSERT_NE(at, std::string::npos) << log;
    const int escapee = std::stoi(log.substr(at + 8));
    ASSERT_GT(escapee, 0);
    const bool survived =
        running(escapee) && command_line_of(escapee) == std::vector<std::string>{"sleep", "1000"};
    if (survived) ::kill(escapee, SIGKILL);
    EXPECT_FALSE(survived) << "pid " << escapee << " outlived its run";
    EXPECT_NE(r.at("note").get<std::string>().find("killed 1 process(es)"), std::string::npos)
        << r.at("note");
}

// Cause 4: a report that links out of the run is not printed, by the CLI or the MCP server.
TEST_F(HostileRuns, WaitNeverPrintsAReportThatLinksOutOfTheRun) {
    write_text(m_dir.path() + "/secret.txt", "TOP-SECRET\n");
    const auto run = dispatch("scenario: report LINKS");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::string id = json::parse(run.out).at("receipt").at("id");
    fs::remove(run_dir(id) + "/report.md");
    fs::create_symlink(m_dir.path() + "/secret.txt", run_dir(id) + "/report.md");
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"wait", id}, {"wait", id, "--json"}}) {
        const auto waited = sonata(args);
        EXPECT_EQ(waited.out.find("TOP-SECRET"), std::string::npos) << waited.out;
    }
    const std::string answer = testing::mcp_call("wait", json{{"id", id}}.dump(), m_env, m_project);
    EXPECT_EQ(answer.find("TOP-SECRET"), std::string::npos) << answer;
    EXPECT_NE(answer.find(id), std::string::npos) << answer;
}

// Cause 5: cancel signals only a process that /proc shows supervising that run.
TEST_F(HostileRuns, CancelNeverSignalsAProcessAPlantedReceiptNames) {
    const Victim victim;
    const std::string id = "20990101-000000000-aaaaaa";
    plant(id, [&](json& r) {
        r["state"] = "running";
        r["ended_at"] = "";
        r["supervisor_pid"] = victim.pid();
        r["supervisor_start"] = start_time_of(victim.pid());
    });
    const auto cancelled = sonata({"cancel", id});
    EXPECT_EQ(cancelled.exit_code, 0) << cancelled.err;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(victim.alive()) << "the process the receipt named was signalled";
}

// Cause 5: status, wait and runs on a planted run whose supervisor is gone kill nothing that is
// not marked as that run's.
TEST_F(HostileRuns, ALostPlantedRunKillsNothingThatIsNotItsOwn) {
    const Victim victim;
    const std::string id = "20990101-000000000-bbbbbb";
    plant(id, [&](json& r) {
        r["state"] = "running";
        r["ended_at"] = "";
        r["supervisor_pid"] = 0x3ffffff0;
        r["supervisor_start"] = 1;
        r["harness_pgid"] = victim.pid();
        r["tmux_server_pid"] = victim.pid();
        r["tmux_server_start"] = start_time_of(victim.pid());
        r["tmux_socket"] = "/tmp/1000";
    });
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"status", id}, {"wait", id}, {"runs"}}) {
        sonata(args);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        EXPECT_TRUE(victim.alive()) << "killed by sonata " << args.front();
    }
    EXPECT_EQ(status(id).at("state"), "lost");
}

// Cause 6: the empty id names no run, least of all the newest.
TEST_F(HostileRuns, AnEmptyIdIsNotARunId) {
    const std::string id = start("grok", "acceptEdits", "scenario: hang");
    await([&] { return status(id).at("state") == "running"; }, "the run runs");
    for (const auto& args : std::vector<std::vector<std::string>>{{"cancel", ""},
                                                                  {"wait", "", "--timeout", "1"},
                                                                  {"log", ""},
                                                                  {"status", ""},
                                                                  {"approve", "", "--yes"}}) {
        const auto run = sonata(args);
        EXPECT_EQ(run.exit_code, 2) << args.front() << ": " << run.out << run.err;
        EXPECT_EQ(run.err, "sonata: error: run id '' is not a run id (1 to 64 of a-z 0-9 -)\n")
            << args.front();
    }
    const json answer =
        json::parse(testing::mcp_call("cancel", R"({"id":""})", m_env, m_project)).at("result");
    EXPECT_TRUE(answer.value("isError", false)) << answer.dump();
    EXPECT_EQ(status(id).at("state"), "running") << "nothing acted on the newest run";
    EXPECT_EQ(sonata({"cancel", id}).exit_code, 0);
}

// Cause 8: what a receipt holds reaches the terminal with its control characters escaped.
TEST_F(HostileRuns, PlantedReceiptTextReachesTheTerminalEscaped) {
    const std::string id = "20990101-000000000-cccccc";
    plant(id, [](json& r) {
        r["harness"] = "grok\x1b]0;owned\x07";
        r["degraded"] = true;
        r["degraded_reason"] = "\x1b[2J\x1b[Hall clear\xc2\x9b";
        r["note"] = "\r\x1b[1Aoverwritten";
    });
    for (const auto& args : std::vector<std::vector<std::string>>{{"status", id}, {"runs"}}) {
        const auto run = sonata(args);
        EXPECT_EQ(run.exit_code, 0) << run.err;
        for (const char c : {'\x1b', '\x07', '\r'})
            EXPECT_EQ(run.out.find(c), std::string::npos) << args.front() << ": " << run.out;
        EXPECT_NE(run.out.find(id + "  done  grok\\x1B]0;owned\\x07@1.0.0"), std::string::npos)
            << run.out;
    }
}

} // namespace
} // namespace sonata
