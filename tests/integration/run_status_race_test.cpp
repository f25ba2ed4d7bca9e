// A run's status read while its supervisor ends: the supervisor writes its final receipt before it
// lets go of the run directory's lock, so a status that reads the lock first and the receipt after
// never takes a run that just ended for one whose supervisor died.
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "dispatch/caller/run.hpp"
#include "dispatch/receipt.hpp"
#include "dispatch/run_dir.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata::testing {
namespace {

/// In a child: takes the run as its supervisor, says so on `ready`, then ends it `done` and exits
/// (which lets go of the lock).
[[noreturn]] void supervise_briefly(const std::string& path, dispatch::Receipt receipt, int ready) {
    auto dir = dispatch::RunDirectory::open(path);
    if (!dir || !dir->lock_as_supervisor()) ::_exit(1);
    receipt.supervisor_pid = static_cast<int>(::getpid());
    if (!dispatch::save_receipt(*dir, receipt)) ::_exit(1);
    const char byte = 1;
    if (::write(ready, &byte, 1) != 1) ::_exit(1);
    receipt.state = dispatch::RunState::done;
    ::_exit(dispatch::save_receipt(*dir, receipt) ? 0 : 1);
}

TEST(RunStatus, ARunThatEndsWhileItsStatusIsReadReadsDoneNeverLost) {
    ScratchDir scratch;
    for (int round = 0; round < 200; ++round) {
        const auto id = dispatch::create_run_dir(scratch.path());
        ASSERT_TRUE(id) << id.error().message;
        const std::string path = scratch.path() + "/" + *id;
        dispatch::Receipt receipt;
        receipt.id = *id;
        receipt.state = dispatch::RunState::running;
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) supervise_briefly(path, receipt, ready[1]);
        ::close(ready[1]);
        char byte = 0;
        ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the stand-in supervisor did not start";
        ::close(ready[0]);
        // Three readers poll it as waiting dispatches do, until it is final: more readers than
        // cores, so that one is preempted between its reads now and then, as under load.
        std::atomic<bool> lost{false};
        std::atomic<bool> unreadable{false};
        std::vector<std::thread> readers;
        for (int reader = 0; reader < 3; ++reader) {
            readers.emplace_back([&] {
                for (;;) {
                    const auto status = dispatch::run_status(path);
                    if (!status) unreadable = true;
                    if (status && status->state == dispatch::RunState::lost) lost = true;
                    if (!status || dispatch::is_final(status->state)) return;
                }
            });
        }
        for (auto& reader : readers)
            reader.join();
        ASSERT_FALSE(unreadable) << "round " << round << ": the run's status could not be read";
        ASSERT_FALSE(lost) << "round " << round << ": a run that ended read lost";
        int exit_status = 0;
        ASSERT_EQ(::waitpid(child, &exit_status, 0), child);
        EXPECT_TRUE(WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0);
        const auto last = dispatch::load_receipt(path);
        ASSERT_TRUE(last) << last.error().message;
        EXPECT_EQ(last->state, dispatch::RunState::done);
    }
}

} // namespace
} // namespace sonata::testing
