// The system runner against real processes (sonata_test_child): argv, environment, cwd, stdin, exit
// codes kept apart from signals, timeouts that kill the whole group, output limits, leftovers.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "core/process.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata {
namespace {

using std::chrono::milliseconds;
using testing::ScratchDir;

const std::string k_child = SONATA_TEST_CHILD;

/// Everything in a ProcessResult but the pid and the duration, to compare whole results.
struct Outcome {
    int exit_code = -1;
    int term_signal = 0;
    bool timed_out = false;
    bool leftovers_killed = false;
    std::string out;
    std::string err;
    std::size_t out_bytes = 0;
    std::size_t err_bytes = 0;

    bool operator==(const Outcome&) const = default;
};

void PrintTo(const Outcome& o, std::ostream* os) {
    *os << "{exit " << o.exit_code << ", signal " << o.term_signal << ", timed_out " << o.timed_out
        << ", leftovers_killed " << o.leftovers_killed << ", out " << o.out_bytes << " bytes \""
        << o.out.substr(0, 200) << "\", err " << o.err_bytes << " bytes \"" << o.err.substr(0, 200)
        << "\"}";
}

Outcome outcome(const ProcessResult& r) {
    return {r.exit_code, r.term_signal, r.timed_out, r.leftovers_killed,
            r.out,       r.err,         r.out_bytes, r.err_bytes};
}

/// A clean exit with `code` that printed `out` and nothing on stderr.
Outcome exited(int code, const std::string& out = "", const std::string& err = "") {
    return {code, 0, false, false, out, err, out.size(), err.size()};
}

class ProcessTest : public ::testing::Test {
protected:
    ProcessRequest child(std::vector<std::string> args) const {
        ProcessRequest request;
        request.argv = {k_child};
        request.argv.insert(request.argv.end(), args.begin(), args.end());
        request.env = testing::hermetic_env(m_scratch);
        request.timeout = milliseconds(20'000);
        return request;
    }

    ProcessResult run(const ProcessRequest& request) {
        auto result = m_runner->run(request);
        if (!result) ADD_FAILURE() << "run failed: " << result.error().message;
        return result ? *result : ProcessResult{};
    }

    ScratchDir m_scratch;
    std::unique_ptr<ProcessRunner> m_runner = make_system_runner();
};

/// "who=N pgid=G" lines the child prints, as who → N.
std::map<std::string, int> printed_ids(const std::string& out) {
    std::map<std::string, int> ids;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        const auto eq = line.find('=');
        const auto space = line.find(' ');
        if (eq == std::string::npos || space == std::string::npos) continue;
        ids[line.substr(0, eq)] = std::stoi(line.substr(eq + 1, space - eq - 1));
    }
    return ids;
}

/// No process is left in the group (and none with that pid).
void expect_gone(int pid) {
    errno = 0;
    EXPECT_EQ(::kill(-pid, 0), -1) << "process group " << pid << " still exists";
    EXPECT_EQ(errno, ESRCH);
    errno = 0;
    EXPECT_EQ(::kill(pid, 0), -1) << "process " << pid << " still exists";
    EXPECT_EQ(errno, ESRCH);
}

std::string pattern_tail(std::size_t total, std::size_t size) {
    const std::string unit = "0123456789abcdef";
    std::string tail;
    for (std::size_t i = total - size; i < total; ++i)
        tail += unit[i % unit.size()];
    return tail;
}

TEST_F(ProcessTest, ArgvReachesTheChildVerbatim) {
    const std::vector<std::string> args = {"args", "two words", "", "$HOME", "semi;", "*", "'q'"};
    const auto result = run(child(args));
    std::string expected = k_child + "\n";
    for (const auto& arg : args)
        expected += arg + "\n";
    EXPECT_EQ(outcome(result), exited(0, expected));
    expect_gone(result.pid);
}

TEST_F(ProcessTest, BareNameIsLookedUpOnTheRequestPath) {
    auto request = child({"args", "x"});
    request.argv[0] = "sonata_test_child";
    request.env["PATH"] = "/nonexistent:" + std::filesystem::path(k_child).parent_path().string();
    EXPECT_EQ(outcome(run(request)), exited(0, "sonata_test_child\nargs\nx\n"));

    auto elsewhere = child({});
    elsewhere.argv = {"sh", "-c", "exit 0"}; // on the test's PATH, but not on the request's
    elsewhere.env["PATH"] = "/nonexistent";
    const auto missing = m_runner->run(elsewhere);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ExitCode::failure);
    EXPECT_EQ(missing.error().message, "cannot start 'sh': not found on its PATH");
}

TEST_F(ProcessTest, EnvironmentIsExactlyTheRequest) {
    auto request = child({"env"});
    request.env["EMPTY"] = "";
    request.env["TRICKY"] = "a=b c;d";
    std::string expected;
    for (const auto& [key, value] : request.env)
        expected += key + "=" + value + "\n";
    EXPECT_EQ(outcome(run(request)), exited(0, expected));
}

TEST_F(ProcessTest, WorkingDirectoryIsTheRequestsOrInherited) {
    auto request = child({"cwd"});
    request.cwd = m_scratch.make_dir("work dir");
    EXPECT_EQ(outcome(run(request)), exited(0, request.cwd + "\n"));

    request.cwd.clear();
    EXPECT_EQ(outcome(run(request)), exited(0, std::filesystem::current_path().string() + "\n"));
}

TEST_F(ProcessTest, ChildInheritsOnlyStdio) {
    auto request = child({"fds"});
    EXPECT_EQ(outcome(run(request)), exited(0, "0\n1\n2\n"));
    request.stdin_data = "";
    EXPECT_EQ(outcome(run(request)), exited(0, "0\n1\n2\n"));
}

TEST_F(ProcessTest, StdinIsFedThenClosedOrIsDevNull) {
    auto request = child({"stdin"});
    std::string data;
    for (int i = 0; data.size() < 3U * 1024U * 1024U; ++i) {
        data += "line " + std::to_string(i) + "\n";
    }
    request.stdin_data = data; // larger than a pipe buffer in both directions at once
    request.max_output_bytes = data.size();
    EXPECT_EQ(outcome(run(request)), exited(0, data));

    request.stdin_data.reset();
    EXPECT_EQ(outcome(run(request)), exited(0, ""));
}

TEST_F(ProcessTest, StdinToAChildThatNeverReadsIt) {
    auto request = child({"exit", "5"});
    request.stdin_data = std::string(8U * 1024U * 1024U, 'x');
    EXPECT_EQ(outcome(run(request)), exited(5));
}

TEST_F(ProcessTest, ExitCodesAndSignalsAreKeptApart) {
    EXPECT_EQ(outcome(run(child({"exit", "0"}))), exited(0));
    EXPECT_EQ(outcome(run(child({"exit", "9"}))), exited(9));
    EXPECT_EQ(outcome(run(child({"exit", "255"}))), exited(255));
    const auto killed_by = [](int sig) {
        return Outcome{128 + sig, sig, false, false, "", "", 0, 0};
    };
    EXPECT_EQ(outcome(run(child({"signal", "9"}))), killed_by(9));
    EXPECT_EQ(outcome(run(child({"signal", "15"}))), killed_by(15));
    EXPECT_EQ(outcome(run(child({"signal", "13"}))), killed_by(13));
}

TEST_F(ProcessTest, StdoutAndStderrAreSeparate) {
    EXPECT_EQ(outcome(run(child({"stderr", "oops"}))), exited(0, "out", "oops"));
}

TEST_F(ProcessTest, TimeoutTerminatesTheGroup) {
    auto request = child({"sleep"});
    request.timeout = milliseconds(300);
    const auto result = run(request);
    const std::string pid = std::to_string(result.pid);
    const std::string ids = "pid=" + pid + " pgid=" + pid;
    EXPECT_EQ(outcome(result), (Outcome{143, 15, true, false, ids + "\n", "", ids.size() + 1, 0}));
    EXPECT_GE(result.duration, milliseconds(300));
    EXPECT_LT(result.duration, milliseconds(300) + request.kill_grace);
    expect_gone(result.pid);
}

TEST_F(ProcessTest, IgnoredTermEscalatesToKillForTheWholeGroup) {
    auto request = child({"ignore-term", "fork"});
    request.timeout = milliseconds(300);
    request.kill_grace = milliseconds(300);
    const auto result = run(request);
    const auto ids = printed_ids(result.out);
    ASSERT_EQ(ids.size(), 2U) << result.out;
    EXPECT_EQ(ids.at("pid"), result.pid);
    EXPECT_EQ(outcome(result),
              (Outcome{137, 9, true, false, result.out, "", result.out.size(), 0}));
    EXPECT_GE(result.duration, milliseconds(600));
    EXPECT_LT(result.duration, milliseconds(600 + 1'000));
    expect_gone(result.pid);
    expect_gone(ids.at("grandchild"));
}

TEST_F(ProcessTest, GrandchildHoldingThePipeIsKilledAfterTheDrain) {
    auto request = child({"grandchild"});
    request.exit_drain = milliseconds(300);
    const auto result = run(request);
    const auto ids = printed_ids(result.out);
    ASSERT_EQ(ids.size(), 2U) << result.out;
    EXPECT_EQ(outcome(result), (Outcome{3, 0, false, true, result.out, "", result.out.size(), 0}));
    EXPECT_GE(result.duration, milliseconds(300));
    EXPECT_LT(result.duration, milliseconds(5'000));
    expect_gone(result.pid);
    expect_gone(ids.at("grandchild"));
}

TEST_F(ProcessTest, GrandchildHoldingThePipeNeverOutlastsTheTimeout) {
    auto request = child({"grandchild"});
    request.timeout = milliseconds(400);
    request.exit_drain = milliseconds(60'000);
    const auto result = run(request);
    EXPECT_EQ(outcome(result), (Outcome{3, 0, false, true, result.out, "", result.out.size(), 0}));
    EXPECT_GE(result.duration, milliseconds(400));
    EXPECT_LT(result.duration, milliseconds(400) + request.kill_grace);
    expect_gone(printed_ids(result.out).at("grandchild"));
}

TEST_F(ProcessTest, FloodKeepsTheTailAndCountsEverything) {
    auto request = child({"flood", "64"});
    request.max_output_bytes = 1U << 20U;
    std::size_t streamed = 0;
    request.on_output = [&](OutputStream stream, std::string_view chunk) {
        EXPECT_EQ(stream, OutputStream::out);
        streamed += chunk.size();
    };
    const std::size_t total = 64U << 20U;
    const auto result = run(request);
    EXPECT_EQ(outcome(result),
              (Outcome{0, 0, false, false, pattern_tail(total, 1U << 20U), "", total, 0}));
    EXPECT_EQ(streamed, total);
}

TEST_F(ProcessTest, EndlessFloodIsCutAtTheTimeoutInBoundedMemory) {
    auto request = child({"flood", "0"});
    request.timeout = milliseconds(1'000);
    request.max_output_bytes = 256U * 1024U;
    rusage before{};
    ::getrusage(RUSAGE_SELF, &before);
    const auto result = run(request);
    rusage after{};
    ::getrusage(RUSAGE_SELF, &after);
    EXPECT_TRUE(result.timed_out);
    EXPECT_EQ(result.exit_code, 128 + SIGTERM);
    EXPECT_GT(result.out_bytes, 16U * request.max_output_bytes); // it really flooded
    EXPECT_EQ(result.out, pattern_tail(result.out_bytes, request.max_output_bytes));
    EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 32L * 1024L) << "KiB of peak memory grew";
    expect_gone(result.pid);
}

TEST_F(ProcessTest, WhatCannotStartIsAnErrorNotACrash) {
    const auto expect_error = [&](const ProcessRequest& request, const std::string& message) {
        const auto result = m_runner->run(request);
        ASSERT_FALSE(result) << "ran with exit " << result->exit_code;
        EXPECT_EQ(result.error().code, ExitCode::failure);
        EXPECT_EQ(result.error().message, message);
    };
    auto request = child({});
    request.argv = {"/nonexistent/program", "x"};
    expect_error(request, "cannot start '/nonexistent/program': no executable file at "
                          "/nonexistent/program");

    const std::string text_file = m_scratch.path() + "/not-a-program";
    std::ofstream(text_file) << "#!/bin/sh\n";
    request.argv = {text_file};
    expect_error(request, "cannot start '" + text_file + "': no executable file at " + text_file);

    request.argv = {};
    expect_error(request, "cannot start a process: empty argv");

    request = child({"exit", "0"});
    request.cwd = m_scratch.path() + "/missing";
    expect_error(request, "cannot start '" + k_child + "': no directory at " + request.cwd);
}

TEST_F(ProcessTest, ParallelRunsDoNotMixTheirPipes) {
    std::vector<std::thread> threads;
    std::vector<int> failures(4, 0);
    for (std::size_t t = 0; t < failures.size(); ++t) {
        threads.emplace_back([&, t] {
            auto runner = make_system_runner();
            for (int i = 0; i < 10; ++i) {
                auto request = child({"stdin"});
                request.stdin_data = "thread " + std::to_string(t) + " run " + std::to_string(i);
                const auto result = runner->run(request);
                if (!result || result->out != *request.stdin_data || result->exit_code != 0) {
                    ++failures[t];
                }
            }
        });
    }
    for (auto& thread : threads)
        thread.join();
    EXPECT_EQ(failures, std::vector<int>(4, 0));
}

} // namespace
} // namespace sonata
