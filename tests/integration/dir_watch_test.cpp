// The watch a run's waiter sleeps on: an entry landing in the run directory wakes it; once it
// follows the supervisor, that process's end does instead (its end frees the run, and no watch
// on the directory sees it), once.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <memory>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "core/fs.hpp"
#include "core/run_host.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// A child that sleeps `ms` and exits.
int sleeping_child(int ms) {
    const int pid = ::fork();
    if (pid == 0) {
        ::usleep(static_cast<useconds_t>(ms) * 1000);
        ::_exit(0);
    }
    return pid;
}

/// A scratch directory and a watch on it.
class DirWatchTest : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_NE(watch, nullptr); }

    ScratchDir scratch;
    std::unique_ptr<DirWatch> watch = system_host().watch_dir(scratch.path());
};

/// How long a wait of `timeout` lasted.
Clock::duration timed_wait(DirWatch& watch, milliseconds timeout) {
    const auto started = Clock::now();
    watch.wait(timeout);
    return Clock::now() - started;
}

TEST_F(DirWatchTest, AnEntryLandingWakesAWaitUntilItFollowsAProcess) {
    ASSERT_TRUE(write_file_atomic(scratch.path() + "/receipt.json", "{}"));
    EXPECT_LT(timed_wait(*watch, milliseconds(60'000)), std::chrono::seconds(30));

    const int child = sleeping_child(60'000);
    ASSERT_GT(child, 0);
    watch->follow_exit(child);
    ASSERT_TRUE(write_file_atomic(scratch.path() + "/receipt.json", "{}"));
    EXPECT_GE(timed_wait(*watch, milliseconds(300)), milliseconds(300));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
}

TEST_F(DirWatchTest, TheEndOfTheProcessItFollowsWakesAWaitOnce) {
    const int child = sleeping_child(200);
    ASSERT_GT(child, 0);
    watch->follow_exit(child);

    // Woken by the child's end, not by the minute's timeout: the child has ended (a zombie here).
    EXPECT_LT(timed_wait(*watch, milliseconds(60'000)), std::chrono::seconds(30));
    int status = 0;
    EXPECT_EQ(::waitpid(child, &status, WNOHANG), child);

    // Its end woke one wait: the next one lasts its whole timeout.
    EXPECT_GE(timed_wait(*watch, milliseconds(300)), milliseconds(300));
}

TEST_F(DirWatchTest, AProcessFollowedAgainAfterItsEndDoesNotWakeAgain) {
    const int child = sleeping_child(0);
    ASSERT_GT(child, 0);
    watch->follow_exit(child);
    watch->wait(milliseconds(60'000));

    // Unreaped, the child still reads as ended: followed again, it would wake every wait at once
    // (a waiter that names its supervisor on each look would spin).
    watch->follow_exit(child);
    EXPECT_GE(timed_wait(*watch, milliseconds(300)), milliseconds(300));
    int status = 0;
    EXPECT_EQ(::waitpid(child, &status, 0), child);
}

} // namespace
} // namespace sonata::testing
