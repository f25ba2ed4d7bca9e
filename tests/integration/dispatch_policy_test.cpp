// Dispatch's policies around a run, through the real binary with the stand-in harness
// (tests/programs/dispatch_harness.cpp) under fixture-only adapters: a budget a harness cannot
// enforce, agy's one retry on infrastructure failures (and none otherwise), a ranked role moving
// on past a run that left no report, and `max_concurrent` queueing runs of one harness.
#include <algorithm>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "tests/support/dispatch_fixture.hpp"

namespace sonata {
namespace {

using json = nlohmann::json;
using testing::read_text;
using testing::SonataRun;
using testing::write_text;

class DispatchPolicy : public testing::DispatchFixture {
protected:
    const std::string m_stand_in = SONATA_DISPATCH_HARNESS;

    /// Every fixture-only harness is the stand-in; `extra` opens the machine config.
    void config(const std::string& extra = "") {
        use_stand_in({"grok", "muse", "agy"}, m_stand_in, extra);
    }

    SonataRun dispatch(const std::string& harness, const std::string& mode, const std::string& task,
                       const std::vector<std::string>& extra = {}) {
        return DispatchFixture::dispatch(harness, "code", mode, task, extra);
    }

    std::string run_dir(const json& r) const {
        return DispatchFixture::run_dir(r.at("id").get<std::string>());
    }
};

TEST_F(DispatchPolicy, ABudgetTheHarnessCannotEnforceIsWarnedAboutAndRecorded) {
    config();
    const auto run =
        dispatch("grok", "acceptEdits", "scenario: final budget", {"--max-budget-usd", "0.5"});
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const std::string warning = "grok cannot enforce --max-budget-usd 0.50: the run goes ahead "
                                "without a spending limit (budget = \"strict\" in config "
                                "refuses instead)";
    EXPECT_NE(run.err.find("sonata: warning: " + warning), std::string::npos) << run.err;
    const json r = receipt_of(run);
    EXPECT_EQ(r.at("max_budget_usd"), 0.5);
    EXPECT_EQ(r.at("budget_enforced"), false);
    // The stand-in reports no cost: unknown, never 0.
    EXPECT_EQ(r.at("cost"), (json{{"value", nullptr},
                                  {"source", "unknown"},
                                  {"input_tokens", nullptr},
                                  {"output_tokens", nullptr}}));
    EXPECT_NE(std::find(r.at("warnings").begin(), r.at("warnings").end(), warning),
              r.at("warnings").end());
}

TEST_F(DispatchPolicy, AStrictBudgetRefusesAHarnessThatCannotEnforceItAndStartsNothing) {
    config("budget = \"strict\"\n");
    const auto run =
        dispatch("grok", "acceptEdits", "scenario: final budget", {"--max-budget-usd", "0.5"});
    EXPECT_EQ(run.exit_code, 4) << run.err << run.out;
    EXPECT_NE(run.out.find("grok cannot enforce --max-budget-usd 0.50 and config sets budget = "
                           "\"strict\""),
              std::string::npos)
        << run.out;
    EXPECT_FALSE(std::filesystem::exists(m_project + "/.sonata/runs"));
    // Without a budget, strict changes nothing.
    EXPECT_EQ(dispatch("grok", "acceptEdits", "scenario: final nobudget").exit_code, 0);
}

TEST_F(DispatchPolicy, AgyIsRetriedOnceOnAnInfrastructureFailureAndSaysSo) {
    config();
    const auto run = dispatch("agy", "bypassPermissions", "scenario: infra-once AGAIN");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const json r = receipt_of(run);
    EXPECT_EQ(r.at("state"), "done");
    ASSERT_EQ(r.at("retries").size(), 1U) << r.dump(2);
    EXPECT_EQ(r.at("retries")[0].at("why"),
              "agy exited 1 on a network failure (\"econnreset\" in its output)");
    EXPECT_EQ(r.at("retries")[0].at("exit_code"), 1);
    EXPECT_NE(json::parse(run.out).at("report").get<std::string>().find("final answer AGAIN"),
              std::string::npos);
    EXPECT_NE(read_text(run_dir(r) + "/harness.log")
                  .find("[sonata: agy exited 1 on a network failure (\"econnreset\" in its "
                        "output); starting the run once more]"),
              std::string::npos);
}

TEST_F(DispatchPolicy, AgyIsRetriedOnlyOnceAndNeverOnATaskFailure) {
    config();
    const auto always = dispatch("agy", "bypassPermissions", "scenario: infra-always");
    EXPECT_EQ(always.exit_code, 8) << always.err << always.out;
    const json r = receipt_of(always);
    EXPECT_EQ(r.at("state"), "failed");
    EXPECT_EQ(r.at("degraded_reason"), "exited 1");
    EXPECT_EQ(r.at("retries").size(), 1U) << r.dump(2);

    const auto task = dispatch("agy", "bypassPermissions", "scenario: fail");
    EXPECT_EQ(task.exit_code, 8);
    EXPECT_EQ(receipt_of(task).at("retries"), json::array());

    // The same infrastructure failure under another harness is not retried: only agy's adapter
    // classifies its output.
    const auto grok = dispatch("grok", "acceptEdits", "scenario: infra-once GROK");
    EXPECT_EQ(grok.exit_code, 8);
    EXPECT_EQ(receipt_of(grok).at("retries"), json::array());
}

TEST_F(DispatchPolicy, ARankedRoleMovesOnPastARunThatEndedWithNoReport) {
    // muse runs first and prints nothing (exit 0, no report): a failed run whose harness is
    // gone, so grok may take the tree; the receipt names the run passed over.
    config("[roles.ranked]\nkind = \"write\"\nharnesses = [\"muse\", \"grok\"]\n");
    const auto run = sonata({"dispatch", "--role", "ranked", "--mode", "acceptEdits", "--task",
                             "scenario: silent-if --disable-approval SECOND", "--json"});
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const json r = receipt_of(run);
    EXPECT_EQ(r.at("harness"), "grok");
    ASSERT_EQ(r.at("attempts").size(), 1U) << r.dump(2);
    const json& muse = r.at("attempts")[0];
    EXPECT_EQ(muse.at("harness"), "muse");
    EXPECT_EQ(muse.at("why"), "ran and failed with no report (exited 0 without a report or any "
                              "output: the model may never have been reached)");
    const auto first = testing::run_sonata({"status", muse.at("run"), "--json"}, m_env, m_project);
    EXPECT_EQ(json::parse(first.out).at("state"), "failed") << first.out;
    EXPECT_NE(run.err.find("sonata: passed over muse (ran and failed"), std::string::npos);

    // A run that failed with output (a report of sorts) is not passed over: its failure is the
    // answer.
    const auto failing = sonata({"dispatch", "--role", "ranked", "--mode", "acceptEdits", "--task",
                                 "scenario: fail", "--json"});
    EXPECT_EQ(failing.exit_code, 8);
    EXPECT_EQ(receipt_of(failing).at("harness"), "muse");
    EXPECT_EQ(receipt_of(failing).at("attempts"), json::array());
}

TEST_F(DispatchPolicy, MaxConcurrentQueuesRunsOfOneHarnessAndStatusShowsQueued) {
    write_machine_config("[harnesses.grok]\npath = \"" + m_stand_in + "\"\nmax_concurrent = 1\n");
    std::vector<std::string> ids;
    for (const char* token : {"A", "B"}) {
        const auto run = sonata({"run", "--harness", "grok", "--role", "code", "--mode",
                                 "acceptEdits", "--task", std::string("scenario: hold ") + token});
        ASSERT_EQ(run.exit_code, 0) << run.err;
        ids.push_back(run.out.substr(0, run.out.find('\n')));
    }
    bool saw_queued = false;
    for (int i = 0; i < 100 && !saw_queued; ++i) {
        const auto status = sonata({"status", ids[1], "--json"});
        saw_queued = json::parse(status.out).at("state") == "queued";
        if (!saw_queued) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(saw_queued) << "the second run never read queued";
    long long began[2] = {0, 0};
    long long ended[2] = {0, 0};
    int slots[2] = {-2, -2};
    for (int k = 0; k < 2; ++k) {
        const auto waited = sonata({"wait", ids[k], "--json"});
        ASSERT_EQ(waited.exit_code, 0) << waited.err << waited.out;
        const json r = json::parse(waited.out).at("receipt");
        slots[k] = r.at("queue_slot");
        const std::string log = read_text(run_dir(r) + "/harness.log");
        began[k] = std::stoll(log.substr(log.find("began ") + 6));
        ended[k] = std::stoll(log.substr(log.find("ended ") + 6));
    }
    EXPECT_EQ(slots[0], 0);
    EXPECT_EQ(slots[1], 0);
    // One at a time: the second began after the first ended.
    EXPECT_GE(began[1], ended[0]);
}

TEST_F(DispatchPolicy, NothingTheHarnessStartedOutlivesItsRunEvenOutsideItsGroup) {
    config();
    const auto run = dispatch("grok", "acceptEdits", "scenario: detach LEFT");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const json r = receipt_of(run);
    const std::string log = read_text(run_dir(r) + "/harness.log");
    const int pid = std::stoi(log.substr(log.find("detached ") + 9));
    ASSERT_GT(pid, 0);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        const auto stat = read_file_bounded("/proc/" + std::to_string(pid) + "/stat", 4096);
        gone = !stat || stat->find(") Z ") != std::string::npos;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(gone) << "the detached child " << pid << " outlived its run";
    EXPECT_NE(r.at("note").get<std::string>().find(
                  "killed 1 process(es) the harness left running outside its process group"),
              std::string::npos)
        << r.at("note");
}

TEST_F(DispatchPolicy, AnOpencodeRunIsDoneOnlyWhenItsOwnExportShowsItCompleted) {
    // The stand-in speaks opencode's `run --format json` and `export` (the fixture convention for
    // the 2.x line no pin has); the pinned 1.18.33 is checked against the scripted model in the
    // conformance tier.
    config("[harnesses.opencode]\npath = \"" + m_stand_in + "\"\n");
    const auto ok = dispatch("opencode", "acceptEdits", "scenario: events done1");
    ASSERT_EQ(ok.exit_code, 0) << ok.err << ok.out;
    const json r = receipt_of(ok);
    EXPECT_EQ(r.at("completion"), "verified");
    EXPECT_EQ(r.at("harness_session"), "ses_done1");
    EXPECT_EQ(r.at("report_source"), "final-message");
    EXPECT_EQ(json::parse(ok.out).at("report").get<std::string>().rfind("final answer done1\n", 0),
              0U);
    EXPECT_EQ(r.at("cost"), (json{{"value", nullptr},
                                  {"source", "unknown"},
                                  {"input_tokens", 10},
                                  {"output_tokens", 2}}));
    EXPECT_EQ(r.at("queue_slot"), 0) << "opencode runs one at a time by default";

    const auto cut = dispatch("opencode", "acceptEdits", "scenario: events interrupted1");
    EXPECT_EQ(cut.exit_code, 8) << cut.err << cut.out;
    const json c = receipt_of(cut);
    EXPECT_EQ(c.at("exit_code"), 0);
    EXPECT_EQ(c.at("state"), "failed");
    EXPECT_EQ(c.at("completion"),
              "failed: the last assistant message never completed (interrupted)");
    EXPECT_EQ(c.at("degraded_reason"),
              "opencode exited 0 but its own record of the session says the run did not "
              "complete: the last assistant message never completed (interrupted)");
}

TEST_F(DispatchPolicy, MaxConcurrentMustBeASmallWholeNumber) {
    write_text(m_project + "/sonata.toml", "[harnesses.grok]\nmax_concurrent = -1\n");
    const auto run = dispatch("grok", "acceptEdits", "scenario: final x");
    EXPECT_EQ(run.exit_code, 3);
    EXPECT_NE(run.err.find("sonata.toml:2:"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("'harnesses.grok.max_concurrent' must be a whole number from 0 (no "
                           "limit) to 64"),
              std::string::npos)
        << run.err;
}

} // namespace
} // namespace sonata
