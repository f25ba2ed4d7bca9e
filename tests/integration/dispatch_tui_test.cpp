// TUI dispatch through the real binary: a stand-in TUI (tests/programs/dispatch_harness.cpp on a
// terminal) under reasonix's default mapping, which runs in tmux. The supervisor answers the trust
// card, types the task, pauses the run at an approval card until `sonata approve`, quits the TUI
// once the report has landed or the turn is over, and leaves no process and no tmux server behind.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/proc_stat.hpp"
#include "core/tmux.hpp"
#include "tests/support/dispatch_fixture.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::run_sonata;
using testing::SonataRun;
using testing::write_text;

class TuiDispatch : public testing::DispatchFixture {
protected:
    void SetUp() override { use_stand_in({"reasonix"}, SONATA_DISPATCH_HARNESS); }

    SonataRun dispatch(const std::string& task) {
        return DispatchFixture::dispatch("reasonix", "code", "default", task);
    }

    std::string start(const std::string& task) {
        return DispatchFixture::start("reasonix", "default", task);
    }

    /// Nothing the run started runs, its private tmux server included.
    void expect_nothing_left(const json& receipt) {
        DispatchFixture::expect_nothing_left(receipt.at("tmux_server_pid").get<int>());
    }
};

TEST_F(TuiDispatch, AReportWrittenInTheTuiComesBackAndSonataQuitsTheTui) {
    const auto run = dispatch("scenario: tui-report TUI-1");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const json r = receipt_of(run);
    EXPECT_EQ(r.at("state"), "done");
    EXPECT_EQ(r.at("exit_code"), 0) << "C-d at the empty task prompt quit it";
    EXPECT_EQ(r.at("report_source"), "report.md");
    EXPECT_FALSE(r.at("degraded")) << r.at("degraded_reason");
    EXPECT_TRUE(r.at("interactive"));
    EXPECT_EQ(r.at("prompt_channel"), "tmux-keys");
    EXPECT_EQ(r.at("approvals"), json::array());
    EXPECT_EQ(r.at("tmux_socket").get<std::string>().front(), '/');
    const std::string id = r.at("id");
    EXPECT_EQ(json::parse(run.out).at("report"),
              "report TUI-1\n\n---\nsonata run " + id +
                  " · role code · reasonix@1.0.0 · mode default · exit 0\n");
    const std::string log = read_text(run_dir(id) + "/harness.log");
    EXPECT_NE(log.find("Read the file " + run_dir(id) + "/instructions.md"), std::string::npos)
        << "the task typed is one line naming the instructions: " << log;
    EXPECT_NE(log.find("wrote the report"), std::string::npos) << log;
    EXPECT_EQ(read_text(run_dir(id) + "/exit"), "done 0\n");
    expect_nothing_left(r);
}

TEST_F(TuiDispatch, WithoutAReportTheFinishedTurnsPaneIsTheReport) {
    const auto run = dispatch("scenario: tui-final TUI-2");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const json r = receipt_of(run);
    EXPECT_EQ(r.at("state"), "done");
    EXPECT_EQ(r.at("report_source"), "pane-text");
    EXPECT_FALSE(r.at("degraded")) << r.at("degraded_reason");
    EXPECT_NE(json::parse(run.out).at("report").get<std::string>().find("final answer TUI-2\n"),
              std::string::npos);
    expect_nothing_left(r);
}

TEST_F(TuiDispatch, AnApprovalCardPausesTheRunAndApproveYesLetsItGoOnOnce) {
    const auto paused = dispatch("scenario: tui-approve TUI-3");
    ASSERT_EQ(paused.exit_code, to_int(ExitCode::run_paused)) << paused.err << paused.out;
    const json p = receipt_of(paused);
    const std::string id = p.at("id");
    EXPECT_EQ(p.at("state"), "paused");
    EXPECT_NE(p.at("prompt").get<std::string>().find("Allow command `touch approved.txt`? [y/N]"),
              std::string::npos)
        << p.at("prompt");
    EXPECT_FALSE(fs::exists(m_project + "/approved.txt")) << "nothing was approved yet";
    const auto approved = sonata({"approve", id, "--yes"});
    ASSERT_EQ(approved.exit_code, 0) << approved.err;
    // The card stays up for a second after its key: it is the answered card, not a new one.
    const auto waited = sonata({"wait", id, "--json"});
    ASSERT_EQ(waited.exit_code, 0) << waited.err << waited.out;
    const json r = receipt_of(waited);
    EXPECT_EQ(r.at("state"), "done");
    ASSERT_EQ(r.at("approvals").size(), 1U) << r.at("approvals").dump();
    EXPECT_EQ(r.at("approvals")[0].at("answer"), "yes");
    EXPECT_EQ(r.at("approvals")[0].at("card"), p.at("prompt"));
    EXPECT_EQ(r.at("prompt"), "");
    EXPECT_EQ(json::parse(waited.out).at("report").get<std::string>().rfind("approved TUI-3\n", 0),
              0U);
    EXPECT_TRUE(fs::exists(m_project + "/approved.txt"));
    EXPECT_EQ(r.at("files_changed"), json::array({"created approved.txt"}));
    expect_nothing_left(r);
}

TEST_F(TuiDispatch, AnAnswerKeyTheTuiLostIsSentAgainAndTheCardIsAnsweredOnce) {
    // The stand-in loses the first key typed at its card, as a TUI under load can: the card
    // stays up unchanged, and the supervisor sends the answer again rather than wait forever.
    const auto paused = dispatch("scenario: tui-lost-key TUI-5");
    ASSERT_EQ(paused.exit_code, to_int(ExitCode::run_paused)) << paused.err << paused.out;
    const std::string id = receipt_of(paused).at("id");
    ASSERT_EQ(sonata({"approve", id, "--yes"}).exit_code, 0);
    const auto waited = sonata({"wait", id, "--json", "--timeout", "60"});
    ASSERT_EQ(waited.exit_code, 0) << waited.err << waited.out;
    const json r = receipt_of(waited);
    EXPECT_EQ(r.at("state"), "done");
    ASSERT_EQ(r.at("approvals").size(), 1U) << r.at("approvals").dump();
    EXPECT_EQ(r.at("approvals")[0].at("answer"), "yes");
    EXPECT_EQ(json::parse(waited.out).at("report").get<std::string>().rfind("approved TUI-5\n", 0),
              0U);
    EXPECT_TRUE(fs::exists(m_project + "/approved.txt"));
    expect_nothing_left(r);
}

TEST_F(TuiDispatch, EachNewCardPausesAgainAndApproveNoDeclinesIt) {
    const std::string id = start("scenario: tui-two-cards TUI-4");
    auto waited = sonata({"wait", id, "--json"});
    ASSERT_EQ(waited.exit_code, to_int(ExitCode::run_paused)) << waited.out;
    EXPECT_NE(receipt_of(waited).at("prompt").get<std::string>().find("touch approved.txt"),
              std::string::npos);
    ASSERT_EQ(sonata({"approve", id, "--yes"}).exit_code, 0);
    waited = sonata({"wait", id, "--json"});
    ASSERT_EQ(waited.exit_code, to_int(ExitCode::run_paused)) << waited.out;
    EXPECT_NE(receipt_of(waited).at("prompt").get<std::string>().find("Allow write `second.txt`?"),
              std::string::npos)
        << receipt_of(waited).at("prompt");
    ASSERT_EQ(sonata({"approve", id, "--no"}).exit_code, 0);
    waited = sonata({"wait", id, "--json"});
    ASSERT_EQ(waited.exit_code, 0) << waited.out;
    const json r = receipt_of(waited);
    ASSERT_EQ(r.at("approvals").size(), 2U);
    EXPECT_EQ(r.at("approvals")[0].at("answer"), "yes");
    EXPECT_EQ(r.at("approvals")[1].at("answer"), "no");
    EXPECT_EQ(
        json::parse(waited.out).at("report").get<std::string>().rfind("approved denied TUI-4\n", 0),
        0U);
    EXPECT_FALSE(fs::exists(m_project + "/second.txt"));
    const auto again = sonata({"approve", id, "--yes"});
    EXPECT_EQ(again.exit_code, to_int(ExitCode::usage)) << "a finished run shows no card";
    EXPECT_NE(again.err.find("is done, not paused"), std::string::npos) << again.err;
    EXPECT_EQ(sonata({"approve", id}).exit_code, to_int(ExitCode::usage));
    expect_nothing_left(r);
}

TEST_F(TuiDispatch, AHarnessThatExitsWhilePausedEndsTheRunFailed) {
    const std::string id = start("scenario: tui-exit-paused");
    const json r = await(id, [](const json& s) { return s.at("state") == "failed"; });
    EXPECT_EQ(r.at("exit_code"), 2);
    EXPECT_TRUE(r.at("degraded"));
    EXPECT_EQ(r.at("degraded_reason"), "exited 2");
    EXPECT_EQ(r.at("approvals"), json::array());
    expect_nothing_left(r);
}

TEST_F(TuiDispatch, CancelWhilePausedKillsTheTuiAndItsServer) {
    const std::string id = start("scenario: tui-approve TUI-5");
    await(id, [](const json& s) { return s.at("state") == "paused"; });
    ASSERT_EQ(sonata({"cancel", id}).exit_code, 0);
    const json r = status(id);
    EXPECT_EQ(r.at("state"), "cancelled");
    EXPECT_NE(read_text(run_dir(id) + "/harness.log").find("Allow command"), std::string::npos)
        << "the pane is kept in the log";
    expect_nothing_left(r);
}

TEST_F(TuiDispatch, AKilledTmuxServerFailsTheRunAndLeavesNothing) {
    const std::string id = start("scenario: tui-busy");
    const json running = await(id, [&](const json& s) {
        return s.at("tmux_server_pid") != 0 &&
               read_text(m_project + "/.sonata/runs/" + s.at("id").get<std::string>() +
                         "/receipt.json")
                       .find("\"state\": \"running\"") != std::string::npos;
    });
    std::this_thread::sleep_for(std::chrono::seconds(1)); // the task was typed
    ASSERT_EQ(::kill(running.at("tmux_server_pid").get<int>(), SIGKILL), 0);
    const json r = await(id, [](const json& s) { return s.at("state") == "failed"; });
    EXPECT_TRUE(r.at("degraded"));
    EXPECT_NE(r.at("degraded_reason").get<std::string>().find("tmux"), std::string::npos)
        << r.at("degraded_reason");
    expect_nothing_left(r);
}

TEST_F(TuiDispatch, ASupervisorKilledWithSigkillTakesTheTuiAndItsServerWithIt) {
    const std::string id = start("scenario: tui-busy");
    const json running = await(id, [](const json& s) { return s.at("tmux_server_pid") != 0; });
    ASSERT_EQ(::kill(running.at("supervisor_pid").get<int>(), SIGKILL), 0);
    const json r = await(id, [](const json& s) { return s.at("state") == "lost"; });
    EXPECT_TRUE(r.at("degraded"));
    expect_nothing_left(r);
}

TEST_F(TuiDispatch, ConcurrentTuiRunsNeverShareATmuxServerOrSocket) {
    std::vector<std::string> ids;
    for (int i = 0; i < 3; ++i)
        ids.push_back(start("scenario: tui-report C" + std::to_string(i)));
    std::set<int> servers;
    std::set<std::string> sockets;
    for (int i = 0; i < 3; ++i) {
        const auto waited = sonata({"wait", ids[i], "--json"});
        ASSERT_EQ(waited.exit_code, 0) << waited.err << waited.out;
        const json r = receipt_of(waited);
        EXPECT_EQ(json::parse(waited.out)
                      .at("report")
                      .get<std::string>()
                      .rfind("report C" + std::to_string(i) + "\n", 0),
                  0U);
        servers.insert(r.at("tmux_server_pid").get<int>());
        sockets.insert(r.at("tmux_socket").get<std::string>());
        expect_nothing_left(r);
    }
    EXPECT_EQ(servers.size(), 3U);
    EXPECT_EQ(sockets.size(), 3U);
}

TEST_F(TuiDispatch, AttachShowsTheRunningTuiAndRefusesAFinishedRun) {
    const std::string id = start("scenario: tui-busy");
    await(id, [](const json& s) { return !s.at("tmux_socket").get<std::string>().empty(); });
    auto runner = make_system_runner();
    TmuxSpec spec;
    spec.argv = {SONATA_BIN, "attach", id};
    spec.env = m_env;
    spec.cwd = m_project;
    spec.socket_dir = m_dir.path();
    auto viewer = TmuxSession::start(*runner, spec);
    ASSERT_TRUE(viewer) << viewer.error().message;
    auto seen = (*viewer)->wait_until(
        [](const std::string& screen) { return screen.find("working") != std::string::npos; },
        std::chrono::seconds(20));
    ASSERT_TRUE(seen);
    EXPECT_TRUE(seen->matched) << "the attached terminal shows the run's TUI:\n" << seen->screen;
    viewer->reset();
    ASSERT_EQ(sonata({"cancel", id}).exit_code, 0);
    const json r = status(id);
    EXPECT_EQ(r.at("state"), "cancelled");
    expect_nothing_left(r);
    const auto attached = sonata({"attach", id});
    EXPECT_EQ(attached.exit_code, to_int(ExitCode::usage));
    EXPECT_NE(attached.err.find("has ended (cancelled)"), std::string::npos) << attached.err;
}

} // namespace
} // namespace sonata
