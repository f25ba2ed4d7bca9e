// Starting runs and reading them: the run directory and its detached supervisor (its body is in
// supervisor.cpp), and the read side every other command uses: status with `lost` detection, wait,
// cancel and approve. What a run directory holds is believed only as far as it can be checked: a
// run is live while its supervisor holds the directory's lock, a process is signalled only when
// /proc shows it is the run's supervisor, and an answer to a card goes to that supervisor, which
// checks who sent it.
#include "dispatch/caller/run.hpp"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include <sys/wait.h>

#include "core/proc_tree.hpp"
#include "core/run_host.hpp"
#include "dispatch/approval_channel.hpp"
#include "dispatch/contract.hpp"
#include "dispatch/run_dir.hpp"
#include "dispatch/run_processes.hpp"

namespace sonata::dispatch {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds k_start_grace{30}; ///< A run still `starting` after this is lost.

std::string instructions(const StartRequest& request, const RunFiles& files) {
    const Receipt& r = request.receipt;
    return "# Task from sonata run " + r.id + "\n\nRole: " + r.role + " (" +
           std::string(to_string(r.role_kind)) + "), mode " + r.mode + ".\n\n" + request.task +
           "\n\n## Report\n\n" +
           report_contract(r.role_kind == RoleKind::read_only, files.report()) + "\n";
}

RunPlan plan_of(const StartRequest& request) {
    return RunPlan{request.decision.harness, request.decision.invocation(), request.cwd,
                   request.limits};
}

/// The pid of the supervisor of the run in `dir`: the receipt's when /proc confirms it, else the
/// one /proc shows running `supervise` on that directory (its watchdog, a fork of it, shows the
/// same command line, and ignores stop signals); 0 when none does.
int verified_supervisor(const Receipt& r, const RunDirectory& dir) {
    if (!dir.supervised()) return 0;
    if (is_supervisor_of(r.supervisor_pid, dir.path())) return r.supervisor_pid;
    for (const int pid : all_processes()) {
        if (!is_supervisor_of(pid, dir.path())) continue;
        const auto parent = parent_of(pid);
        if (!parent || !is_supervisor_of(*parent, dir.path())) return pid;
    }
    return 0;
}

/// The receipt of an open run directory, `lost` when no supervisor holds the run any more. The
/// lock is read before the receipt: a supervisor writes its final receipt before it lets go, so a
/// receipt read after the run was seen free is its last word (read the other way round, a run that
/// ended between the two reads would be taken for one whose supervisor died).
Result<Receipt> status_of(const RunDirectory& dir) {
    const bool held = dir.supervised();
    auto receipt = load_receipt(dir);
    if (!receipt || is_final(receipt->state) || held) return receipt;
    if (receipt->supervisor_pid == 0) {
        std::error_code ec;
        const auto age = fs::file_time_type::clock::now() -
                         fs::last_write_time(dir.path() + "/receipt.json", ec);
        if (!ec && age < k_start_grace) return receipt; // the supervisor is still starting
    }
    // The supervisor is gone and its watchdog did not mark the run: do its job.
    mark_lost(*receipt, system_host());
    (void)save_receipt(dir, *receipt); // a run directory that cannot be written still reads lost
    return receipt;
}

} // namespace

Result<std::string> start_run(const StartRequest& request) {
    auto dir = prepare_run(request);
    if (!dir) return dir;
    auto spawned = system_host().start_detached({request.sonata_path, "supervise", *dir},
                                                request.env, *dir + "/supervisor.log");
    SONATA_TRY(spawned);
    return dir;
}

Result<std::string> prepare_run(const StartRequest& request) {
    if (!request.decision.runs())
        return fail(ExitCode::refused, "internal error: start_run on a refusal");
    auto id =
        request.id.empty() ? create_run_dir(request.runs_root) : Result<std::string>(request.id);
    SONATA_TRY(id);
    auto dir = RunDirectory::open(request.runs_root + "/" + *id);
    SONATA_TRY(dir);
    const RunFiles files{dir->path()};
    StartRequest filled = request;
    filled.receipt.id = *id;
    SONATA_TRY(dir->write("instructions.md", instructions(filled, files)));
    SONATA_TRY(dir->write("plan.json", plan_to_json(plan_of(filled))));
    Receipt& r = filled.receipt;
    const Invocation& inv = request.decision.invocation();
    r.argv = inv.argv;
    if (inv.prompt == PromptChannel::argument) r.argv.push_back("<instructions.md>");
    for (const auto& [name, value] : inv.env)
        r.env_set.push_back(name);
    r.env_unset = inv.env_unset;
    r.cwd = request.cwd;
    r.prompt_channel = std::string(to_string(inv.prompt));
    r.interactive = inv.interactive;
    r.state = RunState::starting;
    SONATA_TRY(save_receipt(*dir, r));
    return files.dir;
}

Result<Receipt> run_status(const std::string& path) {
    auto dir = RunDirectory::open(path);
    SONATA_TRY(dir);
    return status_of(*dir);
}

Result<Receipt> wait_run(const std::string& path, std::chrono::milliseconds window) {
    auto dir = RunDirectory::open(path);
    SONATA_TRY(dir);
    const auto deadline = Clock::now() + window;
    // A watch on the directory wakes the wait when the supervisor renames a new receipt into place,
    // so that waiting costs no polling; the wait still looks at least every step (a supervisor that
    // dies writes nothing).
    const auto changes = system_host().watch_dir(path);
    // A run already stalled when the wait begins is waited on until it moves (or stalls again).
    bool stall_counts = true;
    for (bool first = true;; first = false) {
        while (::waitpid(-1, nullptr, WNOHANG) > 0) { // a supervisor adopted by this subreaper
        }
        auto receipt = status_of(*dir);
        if (!receipt) return receipt;
        const RunState s = receipt->state;
        if (first && s == RunState::stalled) stall_counts = false;
        if (s != RunState::stalled) stall_counts = true;
        // A final receipt counts once no supervisor holds the run: the supervisor writes its
        // last receipt after everything the harness started is gone, so a receipt the harness
        // forged is never the one returned.
        const bool final_written = is_final(s);
        const bool ended = final_written && !dir->supervised();
        if (ended || s == RunState::paused || (s == RunState::stalled && stall_counts) ||
            Clock::now() >= deadline) {
            return receipt;
        }
        // A final receipt with its supervisor still there: it is about to leave, and its end
        // wakes the wait (its lock goes with it, which no watch on the directory sees). A harness
        // that forged the receipt costs the wait the directory's wake-ups, not its end.
        if (final_written) changes->follow_exit(receipt->supervisor_pid);
        const auto step =
            final_written ? std::chrono::milliseconds(5) : std::chrono::milliseconds(250);
        changes->wait(std::min(
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()), step));
    }
}

Result<Receipt> cancel_run(const std::string& path) {
    auto dir = RunDirectory::open(path);
    SONATA_TRY(dir);
    auto receipt = status_of(*dir);
    // A run just started may not be held by its supervisor yet: wait until it is and the receipt
    // names it, which it does once it handles stop signals (or until the start grace runs out and
    // the run reads lost), so that the cancel is neither lost nor a kill.
    const auto hold_deadline = Clock::now() + k_start_grace + std::chrono::seconds(1);
    while (receipt && !is_final(receipt->state) &&
           (!dir->supervised() || receipt->supervisor_pid == 0) && Clock::now() < hold_deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        receipt = status_of(*dir);
    }
    // A run is over when no supervisor holds it, whatever its receipt says (a harness can write
    // a final one while it runs).
    if (!receipt || !dir->supervised()) return receipt;
    // Only a process /proc shows supervising this very directory is signalled.
    if (const int supervisor = verified_supervisor(*receipt, *dir); supervisor > 0)
        ::kill(supervisor, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    for (;;) { // until its supervisor is gone: a paused or stalled run is not yet cancelled
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        receipt = status_of(*dir);
        if (!receipt || (is_final(receipt->state) && !dir->supervised()) ||
            Clock::now() >= deadline)
            return receipt;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

Result<Receipt> approve_run(const std::string& path, bool yes, std::chrono::milliseconds window) {
    auto dir = RunDirectory::open(path);
    SONATA_TRY(dir);
    auto receipt = status_of(*dir);
    if (!receipt) return receipt;
    if (receipt->state != RunState::paused) {
        return fail(ExitCode::usage, "run " + receipt->id + " is " +
                                         std::string(to_string(receipt->state)) +
                                         ", not paused: it shows no card to answer");
    }
    const int supervisor = verified_supervisor(*receipt, *dir);
    if (supervisor == 0)
        return fail(ExitCode::failure, "run " + receipt->id + " has no supervisor to answer");
    const std::size_t answered = receipt->approvals.size();
    if (auto sent =
            send_answer(approval_socket_name(receipt->id, supervisor), yes, receipt->prompt);
        !sent) {
        return fail(sent.error().code, "run " + receipt->id + ": " + sent.error().message);
    }
    const auto deadline = Clock::now() + window;
    for (;;) {
        auto now = status_of(*dir);
        if (!now) return now;
        if (now->approvals.size() > answered || is_final(now->state)) return now;
        if (Clock::now() >= deadline) {
            return fail(ExitCode::failure,
                        "run " + now->id +
                            ": the supervisor took the answer but did not record it in time");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

ExitCode exit_code_for(const Receipt& receipt) {
    switch (receipt.state) {
    case RunState::done: return ExitCode::ok;
    case RunState::paused: return ExitCode::run_paused;
    case RunState::stalled: return ExitCode::run_stalled;
    case RunState::starting:
    case RunState::queued:
    case RunState::running: return ExitCode::run_pending;
    case RunState::failed:
    case RunState::timed_out:
    case RunState::cancelled:
    case RunState::lost: return ExitCode::run_failed;
    }
    return ExitCode::run_failed;
}

} // namespace sonata::dispatch
