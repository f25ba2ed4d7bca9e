// The supervisor's state machine and report rules on a fake runner (tests/support/fake_runner) and
// a fake host (fake_run_host.hpp): how each way a harness can end becomes a state, a report source
// and a degradation, what the harness is started with, the bounded log, and the watchdog, kill,
// cancel and slot paths, none of which forks here. The integration tier runs the same through the
// real binary and real processes (tests/integration/dispatch_test.cpp).
#include <filesystem>

#include <gtest/gtest.h>

#include "dispatch/caller/run.hpp"
#include "dispatch/receipt.hpp"
#include "dispatch/supervisor/supervise.hpp"
#include "tests/support/fake_runner.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"
#include "tests/unit/fake_run_host.hpp"

namespace sonata::dispatch {
namespace {

using testing::FakeRunHost;
using testing::FakeRunner;
using testing::read_text;

class Supervisor : public ::testing::Test {
protected:
    testing::ScratchDir m_dir;
    std::string m_work = m_dir.make_dir("work");
    FakeRunHost m_host;
    RunLimits m_limits{std::chrono::seconds(60), std::chrono::seconds(60)};

    /// A run of a write (or read-only) role prepared as dispatch prepares it (within m_limits),
    /// supervised with `script` on m_host.
    Receipt supervise_with(FakeRunner::Script script, RoleKind role_kind = RoleKind::write,
                           std::size_t log_cap = 1U << 20U,
                           const std::string& harness_report = {}) {
        Invocation inv;
        inv.argv = {"/opt/harness", "-p"};
        inv.prompt = PromptChannel::argument;
        inv.env = {{"PLANNED", "1"}};
        inv.env_unset = {"IS_SANDBOX"};
        Decision decision;
        decision.harness = "grok";
        decision.outcome = inv;
        Receipt receipt;
        receipt.harness = "grok";
        receipt.version = "1.0.0";
        receipt.mode = role_kind == RoleKind::write ? "acceptEdits" : "plan";
        receipt.role = role_kind == RoleKind::write ? "code" : "review";
        receipt.role_kind = role_kind;
        RunLimits limits = m_limits;
        limits.log_cap = log_cap;
        const StartRequest request{decision,         receipt, "the task",
                                   m_work,           {},      m_dir.path() + "/runs",
                                   "/unused/sonata", limits};
        auto dir = prepare_run(request);
        EXPECT_TRUE(dir) << dir.error().message;
        m_run = *dir;
        if (!harness_report.empty()) testing::write_text(m_run + "/report.md", harness_report);
        m_runner = std::make_unique<FakeRunner>(std::move(script));
        EXPECT_EQ(supervise(m_run, *m_runner, m_host), 0);
        auto done = load_receipt(m_run);
        EXPECT_TRUE(done) << done.error().message;
        return *done;
    }

    static FakeRunner::Script exits(int code, std::vector<std::string> chunks = {}) {
        FakeRunner::Script script;
        script.chunks = std::move(chunks);
        script.result.exit_code = code;
        return script;
    }

    static std::vector<std::string> outcome(const Receipt& r) {
        return {std::string(to_string(r.state)), std::string(to_string(r.report_source)),
                r.degraded ? "degraded" : "whole", r.degraded_reason};
    }

    std::string provenance(const Receipt& r, int exit) const {
        return "\n---\nsonata run " + r.id + " · role " + r.role + " · grok@1.0.0 · mode " +
               r.mode + " · exit " + std::to_string(exit) + "\n";
    }

    std::string m_run;
    std::unique_ptr<FakeRunner> m_runner;
};

// A supervisor that cannot take its run's orders records nothing in the run, and says why in its
// own log (its stderr is supervisor.log), which is all a run read `lost` for it leaves.
TEST_F(Supervisor, OrdersItCannotReadAreNamedInItsLog) {
    (void)supervise_with(exits(0));
    testing::write_text(m_run + "/plan.json", "{\"harness\": 1}");
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(supervise(m_run, *m_runner, m_host), to_int(ExitCode::bad_data));
    const std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find("sonata supervise " + m_run + ": " + m_run + "/plan.json: not a run plan"),
              std::string::npos)
        << said;
}

TEST_F(Supervisor, TheHarnessGetsThePlannedArgvEnvironmentAndPrompt) {
    const Receipt r = supervise_with(exits(0, {"ok\n"}));
    ASSERT_EQ(m_runner->requests().size(), 1U);
    const ProcessRequest& request = m_runner->requests().front();
    EXPECT_EQ(request.argv, (std::vector<std::string>{"/opt/harness", "-p",
                                                      read_text(m_run + "/instructions.md")}));
    EXPECT_EQ(request.env.at("PLANNED"), "1");
    EXPECT_EQ(request.env.count("IS_SANDBOX"), 0U);
    EXPECT_EQ(request.cwd, m_work);
    EXPECT_EQ(request.stdin_data, std::nullopt);
    EXPECT_EQ(request.timeout, std::chrono::seconds(60));
    EXPECT_EQ(r.harness_pgid, 2'000'000'000);
    EXPECT_EQ(r.argv, (std::vector<std::string>{"/opt/harness", "-p", "<instructions.md>"}));
    EXPECT_EQ(r.env_set, std::vector<std::string>{"PLANNED"});
}

TEST_F(Supervisor, EachEndingHasItsStateReportAndDegradation) {
    EXPECT_EQ(outcome(supervise_with(exits(0, {"all ", "done\n"}))),
              (std::vector<std::string>{"done", "final-message", "whole", ""}));
    EXPECT_EQ(read_text(m_run + "/report.md"), "all done\n" + provenance(*load_receipt(m_run), 0));
    EXPECT_EQ(read_text(m_run + "/harness.log"), "all done\n");
    EXPECT_EQ(read_text(m_run + "/exit"), "done 0\n");

    EXPECT_EQ(outcome(supervise_with(exits(0, {"answer\n"}), RoleKind::read_only)),
              (std::vector<std::string>{"done", "terminal-output", "whole", ""}));
    EXPECT_EQ(outcome(supervise_with(exits(0, {"log line\n"}), RoleKind::write, 1U << 20U,
                                     "my report\n")),
              (std::vector<std::string>{"done", "report.md", "whole", ""}));
    EXPECT_EQ(read_text(m_run + "/report.md"), "my report\n" + provenance(*load_receipt(m_run), 0));

    FakeRunner::Script crash = exits(139, {"boom\n"});
    crash.result.term_signal = 11;
    EXPECT_EQ(outcome(supervise_with(crash)),
              (std::vector<std::string>{"failed", "final-message", "degraded",
                                        "crashed: killed by signal 11"}));
    EXPECT_EQ(outcome(supervise_with(exits(2))),
              (std::vector<std::string>{"failed", "none", "degraded", "exited 2"}));
    EXPECT_EQ(
        outcome(supervise_with(exits(0))),
        (std::vector<std::string>{
            "failed", "none", "degraded",
            "exited 0 without a report or any output: the model may never have been reached"}));
    FakeRunner::Script slow = exits(143, {"partial\n"});
    slow.result.timed_out = true;
    slow.result.term_signal = 15;
    EXPECT_EQ(outcome(supervise_with(slow)),
              (std::vector<std::string>{"timed-out", "final-message", "degraded",
                                        "timed out; the harness's process group was killed"}));
    FakeRunner::Script missing;
    missing.cannot_start = true;
    EXPECT_EQ(outcome(supervise_with(missing)),
              (std::vector<std::string>{"failed", "none", "degraded",
                                        "cannot start '/opt/harness': not found"}));
    EXPECT_EQ(read_text(m_run + "/exit"), "failed -\n");
}

TEST_F(Supervisor, TheLogStopsAtItsCapWithOneNote) {
    const Receipt r = supervise_with(exits(0, {"0123456", "789abc", "def"}), RoleKind::write, 10);
    EXPECT_TRUE(r.log_capped);
    EXPECT_EQ(read_text(m_run + "/harness.log"),
              "0123456789\n[sonata: harness.log reached its cap of 10 bytes; the rest of the "
              "output was dropped]\n");
    EXPECT_EQ(read_text(m_run + "/report.md"), "0123456789abcdef\n" + provenance(r, 0))
        << "the report is not capped by the log";
}

TEST_F(Supervisor, AWriteRoleThatChangedNothingIsNotedAndOneThatDidListsItsFiles) {
    EXPECT_EQ(supervise_with(exits(0, {"ok\n"})).note,
              "a write role whose run changed nothing in the workspace");
    testing::write_text(m_work + "/old.txt", "old");
    testing::write_text(m_work + "/.sonata/ignored", "x");
    FakeRunner::Script edits = exits(0, {"edited\n"});
    edits.effect = [this] {
        testing::write_text(m_work + "/new.txt", "new");
        testing::write_text(m_work + "/old.txt", "changed, and longer");
        testing::write_text(m_work + "/.sonata/ignored", "changed too");
    };
    const Receipt r = supervise_with(edits);
    EXPECT_EQ(r.files_changed, (std::vector<std::string>{"created new.txt", "changed old.txt"}));
    EXPECT_EQ(r.note, "");
}

/// Thrown from the harness's run: the supervisor dies there, as a SIGKILL would end it.
struct SupervisorDied {};

TEST_F(Supervisor, TheWatchdogMarksTheRunLostAndKillsItsGroupWhenTheSupervisorDies) {
    FakeRunner::Script dies = exits(0);
    dies.effect = [] { throw SupervisorDied{}; };
    EXPECT_THROW(supervise_with(dies), SupervisorDied);
    const auto r = load_receipt(m_run);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(outcome(*r), (std::vector<std::string>{
                               "lost", "", "degraded",
                               "the supervisor ended without recording the run's end (it died, "
                               "or its run directory could not be written); its harness was "
                               "killed"}));
    EXPECT_EQ(m_host.calls,
              (std::vector<std::string>{"start watchdog", "watchdog: the supervisor is gone",
                                        "kill group 2000000000 of run " + r->id}));
    EXPECT_FALSE(std::filesystem::exists(m_run + "/exit"));
}

TEST_F(Supervisor, ARunAtItsTimeoutIsTimedOutAndWhatItLeftRunningIsKilled) {
    m_host.leftovers = 2;
    FakeRunner::Script slow = exits(143, {"partial\n"});
    slow.result.timed_out = true;
    slow.result.term_signal = 15;
    const Receipt r = supervise_with(slow);
    EXPECT_EQ(m_runner->requests().front().timeout, std::chrono::seconds(60));
    EXPECT_EQ(outcome(r),
              (std::vector<std::string>{"timed-out", "final-message", "degraded",
                                        "timed out; the harness's process group was killed"}));
    EXPECT_EQ(r.note, "killed 2 process(es) the harness left running outside its process group");
    EXPECT_EQ(m_host.calls, (std::vector<std::string>{"start watchdog", "kill descendants but 4242",
                                                      "release watchdog"}))
        << "the watchdog is spared, then released once the run is final";
    EXPECT_EQ(read_text(m_run + "/exit"), "timed-out 143\n");
}

TEST_F(Supervisor, AStopSignalCancelsTheRun) {
    FakeRunner::Script stopped = exits(143, {"partial\n"});
    stopped.effect = [this] { m_host.stop = true; };
    stopped.result.cancelled = true;
    stopped.result.term_signal = 15;
    const Receipt r = supervise_with(stopped);
    EXPECT_EQ(m_runner->requests().front().cancel, &m_host.stop);
    EXPECT_EQ(outcome(r),
              (std::vector<std::string>{"cancelled", "final-message", "degraded", "cancelled"}));
    EXPECT_EQ(read_text(m_run + "/exit"), "cancelled 143\n");
}

TEST_F(Supervisor, AQueuedRunWaitsForASlotAndHoldsItWhileItRuns) {
    m_limits.max_concurrent = 2;
    m_limits.slots_dir = m_dir.path() + "/slots";
    m_host.slots = {std::nullopt, std::nullopt, 1};
    std::vector<std::string> seen;
    m_host.on_pause = [&] { seen.emplace_back(to_string(load_receipt(m_run)->state)); };
    const Receipt r = supervise_with(exits(0, {"ok\n"}));
    EXPECT_EQ(seen, (std::vector<std::string>{"queued", "queued"}));
    EXPECT_EQ(outcome(r), (std::vector<std::string>{"done", "final-message", "whole", ""}));
    EXPECT_EQ(r.queue_slot, 1);
    EXPECT_EQ(m_host.calls,
              (std::vector<std::string>{"start watchdog", "try slot", "pause", "try slot", "pause",
                                        "try slot", "give back slot 1", "kill descendants but 4242",
                                        "release watchdog"}));
}

TEST_F(Supervisor, ARunCancelledWhileQueuedNeverStarts) {
    m_limits.max_concurrent = 1;
    m_limits.slots_dir = m_dir.path() + "/slots";
    m_host.slots = {std::nullopt};
    m_host.on_pause = [this] { m_host.stop = true; };
    const Receipt r = supervise_with(exits(0, {"ok\n"}));
    EXPECT_TRUE(m_runner->requests().empty());
    EXPECT_EQ(outcome(r), (std::vector<std::string>{"cancelled", "none", "degraded", "cancelled"}));
    EXPECT_EQ(r.started_at, "");
    EXPECT_EQ(r.exit_code, std::nullopt);
    EXPECT_EQ(read_text(m_run + "/exit"), "cancelled -\n");
    EXPECT_EQ(m_host.calls,
              (std::vector<std::string>{"start watchdog", "try slot", "pause",
                                        "kill descendants but 4242", "release watchdog"}));
}

} // namespace
} // namespace sonata::dispatch
