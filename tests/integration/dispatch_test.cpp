// `sonata dispatch`, `run`, `status`, `wait`, `log`, `cancel` and `runs` through the real binary,
// with a stand-in harness (tests/programs/dispatch_harness.cpp) under grok's headless mappings:
// every scenario ends in the state and report the run lifecycle promises, the whole receipt is
// checked, and nothing the run started is left running — also when the supervisor is killed.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "core/proc_stat.hpp"
#include "core/process.hpp"
#include "core/result.hpp"
#include "tests/support/dispatch_fixture.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::run_sonata;
using testing::SonataRun;
using testing::write_text;

class Dispatch : public testing::DispatchFixture {
protected:
    void SetUp() override { config(""); }

    /// grok is the stand-in, and `extra` follows its table in the machine config.
    void config(const std::string& extra) {
        write_machine_config("[harnesses.grok]\npath = \"" + std::string(SONATA_DISPATCH_HARNESS) +
                             "\"\n" + extra);
    }

    SonataRun dispatch(const std::string& task, const std::string& role = "code",
                       const std::vector<std::string>& extra = {}) {
        return DispatchFixture::dispatch("grok", role, "acceptEdits", task, extra);
    }

    /// The receipt's fields that depend on the scenario, as one value.
    static json outcome(const json& r) {
        return {{"state", r.at("state")},
                {"exit_code", r.at("exit_code")},
                {"term_signal", r.at("term_signal")},
                {"timed_out", r.at("timed_out")},
                {"report_source", r.at("report_source")},
                {"degraded", r.at("degraded")},
                {"degraded_reason", r.at("degraded_reason")}};
    }

    static json outcome_of(const char* state, json exit_code, int sig, bool timed_out,
                           const char* source, bool degraded, const char* reason) {
        return {{"state", state},           {"exit_code", exit_code},  {"term_signal", sig},
                {"timed_out", timed_out},   {"report_source", source}, {"degraded", degraded},
                {"degraded_reason", reason}};
    }

    /// Waits (at most 5 s) until the run's harness has printed something.
    void await_output(const std::string& id) {
        for (int i = 0; i < 100 && (!fs::exists(run_dir(id) + "/harness.log") ||
                                    read_text(run_dir(id) + "/harness.log").empty());
             ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
};

TEST_F(Dispatch, AReportWrittenByTheHarnessComesBackWithItsProvenance) {
    const auto run = dispatch("scenario: report TOKEN-7");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const json r = receipt_of(run);
    EXPECT_EQ(outcome(r), outcome_of("done", 0, 0, false, "report.md", false, ""));
    const std::string id = r.at("id");
    EXPECT_EQ(json::parse(run.out).at("report"),
              "report TOKEN-7\n\n---\nsonata run " + id +
                  " · role code · grok@1.0.0 · mode acceptEdits · exit 0\n");
    EXPECT_EQ(r.at("harness"), "grok");
    EXPECT_EQ(r.at("version"), "1.0.0");
    EXPECT_EQ(r.at("mode"), "acceptEdits");
    EXPECT_EQ(r.at("role_kind"), "write");
    EXPECT_EQ(r.at("parent_mode_source"), "--mode");
    EXPECT_EQ(r.at("argv").back(), "<instructions.md>");
    EXPECT_EQ(r.at("cwd"), m_project);
    EXPECT_FALSE(r.at("relied_on").empty());
    for (const auto& p : r.at("relied_on"))
        EXPECT_EQ(p.at("verdict"), "unmeasured") << p.dump();
    EXPECT_EQ(r.at("note"), "a write role whose run changed nothing in the workspace");
    EXPECT_EQ(read_text(run_dir(id) + "/exit"), "done 0\n");
    EXPECT_EQ(read_text(run_dir(id) + "/harness.log"), "done\n");
    EXPECT_NE(read_text(run_dir(id) + "/instructions.md").find("scenario: report TOKEN-7"),
              std::string::npos);
    EXPECT_FALSE(fs::exists(run_dir(id) + "/pgid"));
    EXPECT_NE(run.err.find("sonata: warning: "), std::string::npos)
        << "unmeasured properties are warned about";
    expect_nothing_left();
}

TEST_F(Dispatch, ResumeContinuesTheRunsSessionNeverWiderThanThatRun) {
    const auto first = dispatch("scenario: session one");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const std::string id = receipt_of(first).at("id");
    EXPECT_EQ(receipt_of(first).at("harness_session"), "sess-one");

    // Asked wider than the run it continues: it stays acceptEdits, and says why.
    auto resumed = sonata({"dispatch", "--resume", id, "--mode", "bypassPermissions", "--task",
                           "scenario: session two", "--json"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
    json r = receipt_of(resumed);
    EXPECT_EQ(r.at("resumed_from"), id);
    EXPECT_EQ(r.at("harness"), "grok");
    EXPECT_EQ(r.at("role"), "code");
    EXPECT_EQ(r.at("mode"), "acceptEdits");
    EXPECT_EQ(r.at("parent_mode_source"), "resuming run " + id + " (acceptEdits)");
    const auto argv = r.at("argv").get<std::vector<std::string>>();
    const auto flag = std::find(argv.begin(), argv.end(), "--resume");
    ASSERT_NE(flag, argv.end());
    ASSERT_NE(flag + 1, argv.end());
    EXPECT_EQ(*(flag + 1), "sess-one");
    EXPECT_NE(json::parse(resumed.out).at("report").get<std::string>().find("resumed sess-one"),
              std::string::npos);
    EXPECT_NE(resumed.err.find("is capped at acceptEdits"), std::string::npos) << resumed.err;

    // Asked narrower: narrower it is.
    resumed = sonata({"dispatch", "--resume", id, "--mode", "plan", "--task",
                      "scenario: session three", "--json"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_EQ(receipt_of(resumed).at("mode"), "plan");

    // What cannot be resumed says why, and starts nothing.
    const auto runs_before = sonata({"runs"}).out;
    const auto no_session = dispatch("scenario: final x");
    const std::string plain = receipt_of(no_session).at("id");
    struct Bad {
        std::vector<std::string> args;
        std::string says;
    };
    for (const auto& bad : std::vector<Bad>{
             {{"--resume", plain}, "recorded no grok session id"},
             {{"--resume", id, "--harness", "codex"}, "ran grok: --harness codex cannot continue"},
             {{"--resume", id, "--role", "review"}, "resume continues the run's own role"},
             {{"--resume", "../../etc"}, "run id"}}) {
        std::vector<std::string> args{"dispatch", "--task", "scenario: session four"};
        args.insert(args.end(), bad.args.begin(), bad.args.end());
        const auto run = sonata(args);
        EXPECT_EQ(run.exit_code, to_int(ExitCode::usage)) << run.err;
        EXPECT_NE(run.err.find(bad.says), std::string::npos) << run.err;
    }
    const auto runs_after = sonata({"runs"}).out;
    EXPECT_EQ(std::count(runs_after.begin(), runs_after.end(), '\n'),
              std::count(runs_before.begin(), runs_before.end(), '\n') + 1)
        << "only the plain run was added";
}

TEST_F(Dispatch, ARankedRoleFallsBackPastAHarnessTheGateRefusesAndSaysWhy) {
    // muse and grok are both the stand-in; this machine's matrix says muse's acceptEdits sandbox
    // lets writes out, so the gate refuses it and dispatch moves on to grok.
    const std::string stand_in = SONATA_DISPATCH_HARNESS;
    config("[harnesses.muse]\npath = \"" + stand_in +
           "\"\n[roles.ranked]\nkind = \"write\"\nharnesses = [\"muse\", \"grok\"]\n");
    const json evidence = {{"reason", "probe-outside.txt was written outside the workspace"},
                           {"files_changed", json::array()},
                           {"tool_calls", json::array()},
                           {"tool_results", json::array()},
                           {"tools_offered", json::array()},
                           {"exit_code", 0},
                           {"timed_out", false},
                           {"output_tail", ""},
                           {"duration_ms", 0}};
    const json matrix = {{"schema", 1},
                         {"sonata_version", ""},
                         {"machine", ""},
                         {"platform", ""},
                         {"created_at", ""},
                         {"cells",
                          {{{"harness", "muse"},
                            {"version", "1.0.0"},
                            {"probe", "outside-workspace-write"},
                            {"mode", "acceptEdits"},
                            {"role", "write"},
                            {"verdict", "violated"},
                            {"evidence", evidence}}}}};
    write_text(m_dir.path() + "/matrix.json", matrix.dump(2));
    const std::vector<std::string> args{"dispatch",
                                        "--role",
                                        "ranked",
                                        "--mode",
                                        "acceptEdits",
                                        "--task",
                                        "scenario: final ranked",
                                        "--matrix",
                                        m_dir.path() + "/matrix.json",
                                        "--json"};
    const auto run = sonata(args);
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const json r = receipt_of(run);
    EXPECT_EQ(r.at("harness"), "grok");
    ASSERT_EQ(r.at("attempts").size(), 1U) << r.dump();
    EXPECT_EQ(r.at("attempts")[0].at("harness"), "muse");
    EXPECT_NE(r.at("attempts")[0].at("why").get<std::string>().find(
                  "refused: probe outside-workspace-write measured 'violated'"),
              std::string::npos)
        << r.dump();
    EXPECT_NE(run.err.find("sonata: passed over muse (refused: "), std::string::npos) << run.err;

    // Every harness refused: the last refusal, and what was tried before it; nothing starts.
    config("[harnesses.muse]\npath = \"" + stand_in +
           "\"\n[roles.ranked]\nkind = \"write\"\nharnesses = [\"grok\", \"muse\"]\n");
    std::vector<std::string> refused = args;
    refused[4] = "default";
    const auto none = sonata(refused);
    EXPECT_EQ(none.exit_code, to_int(ExitCode::refused)) << none.err;
    EXPECT_NE(none.out.find("refuse: muse exec cannot raise an approval prompt"), std::string::npos)
        << none.out;
    EXPECT_NE(none.out.find("  also tried grok: refused: grok runs headless"), std::string::npos)
        << none.out;
}

TEST_F(Dispatch, AFinalMessageIsTheReportAndAReadOnlyRunsOutputIsItsReport) {
    auto run = dispatch("scenario: final TOKEN-8");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(outcome(receipt_of(run)),
              outcome_of("done", 0, 0, false, "final-message", false, ""));
    run = dispatch("scenario: final TOKEN-9", "review");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json r = receipt_of(run);
    EXPECT_EQ(outcome(r), outcome_of("done", 0, 0, false, "terminal-output", false, ""));
    EXPECT_EQ(r.at("mode"), "plan");
    EXPECT_EQ(
        json::parse(run.out).at("report").get<std::string>().rfind("final answer TOKEN-9\n", 0),
        0U);
}

TEST_F(Dispatch, ExitZeroIsNeverSuccessOnItsOwn) {
    const std::vector<std::pair<std::string, json>> cases{
        {"scenario: crash", outcome_of("failed", 139, 11, false, "final-message", true,
                                       "crashed: killed by signal 11")},
        {"scenario: silent",
         outcome_of(
             "failed", 0, 0, false, "none", true,
             "exited 0 without a report or any output: the model may never have been reached")},
        {"scenario: fail", outcome_of("failed", 3, 0, false, "final-message", true, "exited 3")},
    };
    for (const auto& [task, expected] : cases) {
        const auto run = dispatch(task);
        EXPECT_EQ(run.exit_code, to_int(ExitCode::run_failed)) << task;
        EXPECT_EQ(outcome(receipt_of(run)), expected) << task;
    }
    expect_nothing_left();
}

TEST_F(Dispatch, AHangingHarnessTimesOutAndItsWholeGroupIsKilled) {
    const auto run = dispatch("scenario: hang", "code", {"--timeout", "2"});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::run_failed)) << run.err;
    EXPECT_EQ(outcome(receipt_of(run)),
              outcome_of("timed-out", 143, 15, true, "final-message", true,
                         "timed out; the harness's process group was killed"));
    expect_nothing_left();
}

TEST_F(Dispatch, AFloodIsCappedInTheLogWithANote) {
    config("[dispatch]\nlog_cap_bytes = 65536\n");
    const auto run = dispatch("scenario: flood");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json r = receipt_of(run);
    EXPECT_TRUE(r.at("log_capped"));
    const std::string log = read_text(run_dir(r.at("id")) + "/harness.log");
    EXPECT_EQ(log.substr(0, 65536), std::string(1023, 'x') + "\n" + log.substr(1024, 65536 - 1024));
    EXPECT_EQ(log.substr(65536), "\n[sonata: harness.log reached its cap of 65536 bytes; the rest "
                                 "of the output was dropped]\n");
    const std::string report = read_text(run_dir(r.at("id")) + "/report.md");
    EXPECT_EQ(report.rfind("[sonata: the output's first ", 0), 0U) << report.substr(0, 100);
    EXPECT_NE(report.find("flood done\n\n---\nsonata run "), std::string::npos)
        << "the report keeps the end";
}

TEST_F(Dispatch, ASilentHarnessIsStalledThenFinishes) {
    config("[dispatch]\nstall_seconds = 1\n");
    const auto run = dispatch("scenario: slow");
    EXPECT_EQ(run.exit_code, to_int(ExitCode::run_stalled)) << run.err << run.out;
    const std::string id = receipt_of(run).at("id");
    EXPECT_EQ(receipt_of(run).at("state"), "stalled");
    const auto waited = sonata({"wait", id, "--json"});
    EXPECT_EQ(waited.exit_code, 0) << waited.err;
    EXPECT_EQ(receipt_of(waited).at("state"), "done");
}

TEST_F(Dispatch, RunReturnsAtOnceAndCancelKillsAHarnessThatIgnoresSigterm) {
    const auto started = sonata({"run", "--harness", "grok", "--role", "code", "--mode",
                                 "acceptEdits", "--task", "scenario: ignore-term"});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    const std::string id = started.out.substr(0, started.out.find('\n'));
    await_output(id);
    const auto cancelled = sonata({"cancel", id});
    EXPECT_EQ(cancelled.exit_code, 0) << cancelled.err;
    const auto status = sonata({"status", id, "--json"});
    const json r = json::parse(status.out);
    EXPECT_EQ(r.at("state"), "cancelled");
    EXPECT_EQ(r.at("term_signal"), 9) << "SIGTERM was ignored, so the grace ended in SIGKILL";
    EXPECT_EQ(sonata({"log", id}).out, "ignoring SIGTERM\n");
    expect_nothing_left();
}

TEST_F(Dispatch, ASupervisorKilledWithSigkillTakesItsHarnessWithItAndTheRunIsLost) {
    const auto started = sonata({"run", "--harness", "grok", "--role", "code", "--mode",
                                 "acceptEdits", "--task", "scenario: hang"});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    const std::string id = started.out.substr(0, started.out.find('\n'));
    json r;
    for (int i = 0; i < 100; ++i) {
        r = json::parse(sonata({"status", id, "--json"}).out);
        if (r.at("harness_pgid") != 0 && fs::exists(run_dir(id) + "/harness.log") &&
            !read_text(run_dir(id) + "/harness.log").empty()) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_NE(r.at("supervisor_pid"), 0);
    ASSERT_EQ(::kill(r.at("supervisor_pid").get<int>(), SIGKILL), 0);
    json after;
    for (int i = 0; i < 100; ++i) {
        after = json::parse(sonata({"status", id, "--json"}).out);
        if (after.at("state") == "lost") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(after.at("state"), "lost");
    EXPECT_TRUE(after.at("degraded"));
    EXPECT_EQ(sonata({"log", id}).out.rfind("pid ", 0), 0U) << "the log is kept";
    expect_nothing_left();
}

TEST_F(Dispatch, ARemovedRunDirectoryStopsItsHarness) {
    const auto started = sonata({"run", "--harness", "grok", "--role", "code", "--mode",
                                 "acceptEdits", "--task", "scenario: hang"});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    const std::string id = started.out.substr(0, started.out.find('\n'));
    for (int i = 0;
         i < 100 && json::parse(sonata({"status", id, "--json"}).out).at("harness_pgid") == 0;
         ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    fs::remove_all(run_dir(id));
    expect_nothing_left(); // the harness would otherwise hang until the timeout, unrecorded
    const auto status = sonata({"status", id});
    EXPECT_EQ(status.exit_code, to_int(ExitCode::bad_data)) << status.out;
    EXPECT_FALSE(fs::exists(run_dir(id))) << "nothing recreated it";
}

/// A tmpfs mounted on the runs root, which the test can make read-only; unmounted at the end.
class RunsMount {
public:
    explicit RunsMount(std::string path) : m_path(std::move(path)) {
        fs::create_directories(m_path);
        m_mounted = mount({"-t", "tmpfs", "-o", "size=16m", "tmpfs", m_path});
    }
    ~RunsMount() {
        if (m_mounted) mount({"-l", m_path}, "/bin/umount");
    }
    RunsMount(const RunsMount&) = delete;
    RunsMount& operator=(const RunsMount&) = delete;
    bool mounted() const { return m_mounted; }
    bool read_only() { return mount({"-o", "remount,ro", m_path}); }

private:
    static bool mount(std::vector<std::string> args, const std::string& tool = "/bin/mount") {
        auto runner = make_system_runner();
        ProcessRequest request;
        request.argv = {tool};
        request.argv.insert(request.argv.end(), args.begin(), args.end());
        request.timeout = std::chrono::seconds(10);
        auto result = runner->run(request);
        return result && result->exit_code == 0;
    }
    std::string m_path;
    bool m_mounted = false;
};

// (A runs root cannot become read-only while a supervisor holds harness.log open for writing: the
// remount fails with EBUSY. A receipt that cannot be written mid-run is the next test.)
TEST_F(Dispatch, AReadOnlyRunsRootStartsNothingAndSaysWhy) {
    RunsMount runs(m_project + "/.sonata/runs");
    if (!runs.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root (CAP_SYS_ADMIN)";
    ASSERT_TRUE(runs.read_only());
    const auto refused = dispatch("scenario: report RO");
    EXPECT_EQ(refused.exit_code, to_int(ExitCode::failure)) << refused.out;
    EXPECT_NE(refused.err.find("(Read-only file system)"), std::string::npos) << refused.err;
    expect_nothing_left();
}

TEST_F(Dispatch, ARunWhoseReceiptCannotBeWrittenIsStoppedAndItsLogKept) {
    config("[dispatch]\nstall_seconds = 1\n"); // the stall is the next change to record
    const auto started = sonata({"run", "--harness", "grok", "--role", "code", "--mode",
                                 "acceptEdits", "--task", "scenario: hang"});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    const std::string id = started.out.substr(0, started.out.find('\n'));
    await_output(id);
    // A directory in the receipt's place: renaming a new receipt onto it fails, even as root.
    fs::remove(run_dir(id) + "/receipt.json");
    fs::create_directories(run_dir(id) + "/receipt.json/in-the-way");
    expect_nothing_left(); // the harness would otherwise hang until the timeout, unrecorded
    EXPECT_EQ(sonata({"log", id}).out.rfind("pid ", 0), 0U) << "the log is kept";
    const auto status = sonata({"status", id});
    EXPECT_EQ(status.exit_code, to_int(ExitCode::bad_data)) << status.out;
}

TEST_F(Dispatch, HeadlessRunsHaveNoTuiToAttachToAndNoCardToApprove) {
    const std::string id = receipt_of(dispatch("scenario: final ATTACH")).at("id");
    const auto attached = sonata({"attach", id});
    EXPECT_EQ(attached.exit_code, to_int(ExitCode::usage));
    EXPECT_NE(attached.err.find("runs headless: there is no TUI"), std::string::npos)
        << attached.err;
    const auto approved = sonata({"approve", id, "--yes"});
    EXPECT_EQ(approved.exit_code, to_int(ExitCode::usage));
    EXPECT_NE(approved.err.find("not paused"), std::string::npos) << approved.err;
}

TEST_F(Dispatch, HarnessesThatSetupInstalledAreFoundInSonatasCache) {
    write_text(m_env.at("XDG_CONFIG_HOME") + "/sonata/config.toml", ""); // no path: looked for
    const std::vector<std::string> plan{"plan", "--harness", "grok",       "--role",
                                        "code", "--mode",    "acceptEdits"};
    EXPECT_NE(sonata(plan).out.find("grok is not installed here"), std::string::npos);
    const std::string bin = m_env.at("HOME") + "/.cache/sonata/harnesses/bin";
    fs::create_directories(m_env.at("HOME") + "/.cache/sonata/harnesses/bins/pins");
    fs::create_symlink(SONATA_DISPATCH_HARNESS,
                       m_env.at("HOME") + "/.cache/sonata/harnesses/bins/pins/grok");
    fs::create_directory_symlink("bins/pins", bin); // as scripts/install-harnesses links it
    const auto listed = json::parse(sonata({"harnesses", "--json"}).out);
    bool found = false;
    for (const auto& h : listed) {
        if (h.at("id") != "grok") continue;
        found = true;
        EXPECT_TRUE(h.at("installed")) << h.dump();
        EXPECT_EQ(h.at("path"), bin + "/grok");
        EXPECT_EQ(h.at("version"), "1.0.0");
    }
    EXPECT_TRUE(found);
    const auto planned = sonata(plan);
    EXPECT_EQ(planned.out.find("not installed"), std::string::npos) << planned.out;
    EXPECT_NE(planned.out.find("grok@1.0.0"), std::string::npos) << planned.out;
    const auto run = dispatch("scenario: final FROM-CACHE");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(receipt_of(run).at("argv").at(0), bin + "/grok");
}

TEST_F(Dispatch, APlantedReceiptNeverMakesSonataKillOrRunAnythingElse) {
    // A process of the user's in a group of its own, which a hostile repository's receipt names as
    // its harness and its tmux server, with the real start time copied in.
    auto runner = make_system_runner();
    const pid_t victim = ::fork();
    if (victim == 0) {
        ::setpgid(0, 0);
        ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::setpgid(victim, victim);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto fields = proc_stat_fields(victim);
    ASSERT_TRUE(fields && fields->size() > 19);
    const std::string id = "20260101-000000000-abcdef";
    const std::string dir = m_project + "/.sonata/runs/" + id;
    fs::create_directories(dir);
    const std::string started = receipt_of(dispatch("scenario: final PLANT")).dump();
    json planted = json::parse(started);
    planted["id"] = id;
    planted["state"] = "running";
    planted["supervisor_pid"] = 0; // no supervisor: after the start grace it reads lost
    planted["harness_pgid"] = victim;
    planted["tmux_server_pid"] = victim;
    planted["tmux_server_start"] = std::stoull((*fields)[19]);
    planted["tmux_socket"] = "/bin/sh";
    planted["interactive"] = true;
    write_text(dir + "/receipt.json", planted.dump());
    const auto old = fs::file_time_type::clock::now() - std::chrono::minutes(5);
    fs::last_write_time(dir + "/receipt.json", old);
    const auto status = sonata({"status", id, "--json"});
    EXPECT_EQ(json::parse(status.out).at("state"), "lost") << status.out;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(::waitpid(victim, nullptr, WNOHANG), 0) << "sonata killed a process not of the run";
    planted["state"] = "running";
    write_text(dir + "/receipt.json", planted.dump());
    const auto attached = sonata({"attach", id});
    EXPECT_EQ(attached.exit_code, to_int(ExitCode::failure));
    EXPECT_NE(attached.err.find("no tmux socket of yours"), std::string::npos) << attached.err;
    ::kill(victim, SIGKILL);
    ::waitpid(victim, nullptr, 0);
}

TEST_F(Dispatch, ARefusalStartsNothingAndSaysWhatPlanSays) {
    const auto planned =
        sonata({"plan", "--harness", "grok", "--role", "code", "--mode", "default"});
    ASSERT_EQ(planned.exit_code, to_int(ExitCode::refused));
    const auto run = sonata(
        {"dispatch", "--harness", "grok", "--role", "code", "--mode", "default", "--task", "x"});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::refused));
    EXPECT_EQ(run.out, planned.out);
    EXPECT_FALSE(fs::exists(m_project + "/.sonata/runs"));
}

TEST_F(Dispatch, TheTaskComesFromExactlyOnePlace) {
    write_text(m_dir.path() + "/task.md", "scenario: final FROM-FILE");
    auto run = sonata({"dispatch", "--harness", "grok", "--role", "review", "--task-file",
                       m_dir.path() + "/task.md", "--json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(
        json::parse(run.out).at("report").get<std::string>().rfind("final answer FROM-FILE", 0),
        0U);
    run = sonata({"dispatch", "--harness", "grok", "--role", "review", "-", "--json"},
                 "scenario: final FROM-STDIN");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(
        json::parse(run.out).at("report").get<std::string>().rfind("final answer FROM-STDIN", 0),
        0U);
    EXPECT_EQ(sonata({"dispatch", "--harness", "grok", "--role", "review", "--task", "a",
                      "--task-file", "b"})
                  .exit_code,
              to_int(ExitCode::usage));
    EXPECT_EQ(sonata({"dispatch", "--harness", "grok", "--role", "review"}).exit_code,
              to_int(ExitCode::usage));
}

TEST_F(Dispatch, HostileRunIdsAreUsageErrorsAndCorruptReceiptsBadData) {
    for (const std::string& id :
         std::vector<std::string>{"../../etc", "a/b", "A", std::string(65, 'a'), "x y"}) {
        EXPECT_EQ(sonata({"status", id}).exit_code, to_int(ExitCode::usage)) << id;
    }
    fs::create_directories(m_project + "/.sonata/runs/20260101-000000000-abcdef");
    write_text(m_project + "/.sonata/runs/20260101-000000000-abcdef/receipt.json", "{\"schema\":1");
    EXPECT_EQ(sonata({"status", "20260101-000000000-abcdef"}).exit_code,
              to_int(ExitCode::bad_data));
    EXPECT_EQ(sonata({"status", "20990101-000000000-abcdef"}).exit_code,
              to_int(ExitCode::bad_data));
}

TEST_F(Dispatch, ConcurrentRunsKeepTheirOwnDirectoriesAndReports) {
    std::vector<std::string> ids;
    for (int i = 0; i < 6; ++i) {
        const auto started =
            sonata({"run", "--harness", "grok", "--role", "code", "--mode", "acceptEdits", "--task",
                    "scenario: report R" + std::to_string(i)});
        ASSERT_EQ(started.exit_code, 0) << started.err;
        ids.push_back(started.out.substr(0, started.out.find('\n')));
    }
    for (int i = 0; i < 6; ++i) {
        const auto waited = sonata({"wait", ids[i], "--json"});
        ASSERT_EQ(waited.exit_code, 0) << waited.err;
        EXPECT_EQ(json::parse(waited.out)
                      .at("report")
                      .get<std::string>()
                      .rfind("report R" + std::to_string(i) + "\n", 0),
                  0U);
    }
    const auto listed = json::parse(sonata({"runs", "--json"}).out);
    ASSERT_EQ(listed.size(), 6U);
    std::set<std::string> unique;
    for (const auto& r : listed)
        unique.insert(r.at("id").get<std::string>());
    EXPECT_EQ(unique.size(), 6U);
    expect_nothing_left();
}

TEST_F(Dispatch, GcRemovesFinishedRunsOnlyAndOnlyOldEnoughOnes) {
    const std::string finished = receipt_of(dispatch("scenario: final GC")).at("id");
    const auto started = sonata({"run", "--harness", "grok", "--role", "code", "--mode",
                                 "acceptEdits", "--task", "scenario: hang"});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    const std::string running = started.out.substr(0, started.out.find('\n'));
    auto gc = sonata({"gc"});
    EXPECT_EQ(gc.out, "sonata gc: removed 0 finished run(s), kept 2\n")
        << "both are younger than 7 days";
    gc = sonata({"gc", "--older-than", "0s"});
    EXPECT_EQ(gc.out, "removed " + finished + "\nsonata gc: removed 1 finished run(s), kept 1\n");
    EXPECT_FALSE(fs::exists(run_dir(finished)));
    EXPECT_TRUE(fs::exists(run_dir(running))) << "a running run is never collected";
    for (const std::string bad : {"7w", "-1d", "soon", ""}) {
        EXPECT_EQ(sonata({"gc", "--older-than", bad}).exit_code, to_int(ExitCode::usage)) << bad;
    }
    EXPECT_EQ(sonata({"cancel", running}).exit_code, 0);
    expect_nothing_left();
}

} // namespace
} // namespace sonata
