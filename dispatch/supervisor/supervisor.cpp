// The supervisor: `sonata supervise DIR`, the process that runs one run's harness to its end and
// records it. It takes the run directory's lock for its whole life (the sign of a live run that
// nothing written in the directory can forge), forks a watchdog that marks the run `lost` if the
// supervisor dies, runs the harness headless or in tmux, and, when the harness is done, kills
// every process still below it (it is their subreaper: a process that left the harness's group
// or session, or cleared its environment, is still its descendant) before it writes the receipt,
// the report and the `exit` sentinel, always into the directory it opened, never through a path
// something may have replaced.
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "adapters/registry.hpp"
#include "core/proc_tree.hpp"
#include "core/run_host.hpp"
#include "dispatch/run_dir.hpp"
#include "dispatch/run_processes.hpp"
#include "dispatch/supervisor/harness_runners.hpp"
#include "dispatch/supervisor/run_end.hpp"
#include "dispatch/supervisor/run_log.hpp"
#include "dispatch/supervisor/supervise.hpp"
#include "dispatch/supervisor/worktree.hpp"

namespace sonata::dispatch {
namespace {

constexpr std::size_t k_max_plan_bytes = 4U << 20U;

/// The watchdog's task once the supervisor is gone: make sure its run is not left running or
/// reading `running`.
void mark_if_unfinished(const RunDirectory& dir, RunHost& host) {
    auto receipt = load_receipt(dir);
    if (receipt && !is_final(receipt->state)) {
        mark_lost(*receipt, host);
        (void)save_receipt(dir, *receipt); // nothing is left to tell if this fails
    }
}

/// Takes a free slot of the harness's `max_concurrent`, held in `held` until the supervisor ends
/// (whatever ends it), waiting `queued` while every one is held; -1 when the harness has no limit.
/// A cancel while queued returns at once (the caller sees the cancel flag). An error when no slot
/// can even be opened: running anyway would break the limit.
Result<int> take_slot(const RunPlan& plan, SharedReceipt& shared, RunHost& host,
                      std::optional<Slot>& held) {
    const int slots = plan.limits.max_concurrent;
    const std::string& dir = plan.limits.slots_dir;
    if (slots <= 0 || dir.empty()) return -1;
    for (bool queued = false; !shared.cancel.load();) {
        auto slot = host.try_slot(dir, slots);
        SONATA_TRY(slot);
        if (*slot) {
            held = std::move(*slot);
            return held->index;
        }
        if (!queued) {
            shared.update([](Receipt& r) { r.state = RunState::queued; });
            queued = true;
        }
        shared.check_dir();
        host.pause(std::chrono::milliseconds(200));
    }
    return -1;
}

/// Why a headless run that failed is worth starting once more: the adapter reads an
/// infrastructure failure in its output (agy only). Never after a cancel, a timeout, a TUI run
/// or a run that exited 0, and never twice.
std::string retry_reason(const adapters::Adapter* adapter, const Result<HarnessEnd>& end,
                         const SharedReceipt& shared) {
    if (adapter == nullptr || !end || end->tui || shared.cancel.load() ||
        !shared.abandoned.empty() || end->result.timed_out || end->result.cancelled ||
        (end->result.exit_code == 0 && end->result.term_signal == 0)) {
        return {};
    }
    return adapter->infrastructure_failure(end->result.out, end->result.err, end->result.exit_code);
}

/// What the supervisor reads from its run directory before it starts anything.
struct Orders {
    Receipt receipt;
    RunPlan plan;
    std::string prompt; ///< instructions.md
};

Result<Orders> read_orders(const RunDirectory& dir) {
    auto receipt = load_receipt(dir);
    SONATA_TRY(receipt);
    auto text = dir.read("plan.json", k_max_plan_bytes);
    SONATA_TRY(text);
    auto plan = parse_plan(*text, dir.path() + "/plan.json");
    SONATA_TRY(plan);
    auto prompt = dir.read("instructions.md", k_max_plan_bytes);
    SONATA_TRY(prompt);
    return Orders{std::move(*receipt), std::move(*plan), std::move(*prompt)};
}

/// Runs the harness headless or in tmux, once more after an infrastructure failure the adapter
/// recognises.
void run_with_retry(const Orders& orders, SharedReceipt& shared, const adapters::Adapter* adapter,
                    ProcessRunner& runner, Ran& ran) {
    const RunPlan& plan = orders.plan;
    ran.result = plan.invocation.interactive ? run_tui(plan, shared, runner)
                                             : run_headless(plan, orders.prompt, shared, runner);
    if (const std::string why = retry_reason(adapter, ran.result, shared); !why.empty()) {
        shared.update([&](Receipt& r) {
            r.retries.push_back({why, ran.result->result.exit_code, utc_now()});
        });
        BoundedLog(shared.dir, plan.limits.log_cap)
            .write("\n[sonata: " + why + "; starting the run once more]\n");
        ran.result = run_headless(plan, orders.prompt, shared, runner);
    }
}

/// Waits for a slot, then runs the harness.
Ran run_harness(const Orders& orders, SharedReceipt& shared, const adapters::Adapter* adapter,
                ProcessRunner& runner, RunHost& host) {
    Ran ran;
    std::optional<Slot> slot;
    auto taken = take_slot(orders.plan, shared, host, slot);
    if (!taken) {
        ran.result = tl::unexpected(taken.error());
        return ran;
    }
    if (shared.cancel.load()) {
        ran.result = HarnessEnd{ProcessResult{}, false, false};
        ran.result->result.cancelled = true;
        return ran;
    }
    shared.update([&](Receipt& r) {
        r.state = RunState::running;
        r.queue_slot = *taken;
        r.started_at = utc_now();
    });
    ran.before = fingerprint(orders.plan.cwd);
    run_with_retry(orders, shared, adapter, runner, ran);
    return ran;
}

/// What the adapter reads in the harness's own output: its session id, cost and final message.
void read_harness_output(const adapters::Adapter* adapter, const RunPlan& plan, Ran& ran,
                         std::string& session, RunCost& cost) {
    if (!ran.result || adapter == nullptr) return;
    const auto env = current_environment();
    const auto home_it = env.find("HOME");
    const std::string home = home_it == env.end() ? "" : home_it->second;
    ProcessResult& out = ran.result->result;
    Invocation ran_as = plan.invocation;
    if (ran_as.cwd.empty()) ran_as.cwd = plan.cwd;
    session = adapter->session_id(out.out, out.err, home, ran_as);
    cost = adapter->run_cost(out.out, out.err, home);
    // A structured stdout (claude's result JSON) holds the final message; the rest of it stays
    // in harness.log.
    if (plan.invocation.report == ReportSource::structured_stdout)
        out.out = adapter->final_message(out.out).value_or("");
}

/// Records the run's end once nothing of it runs any more: the receipt, then the `exit` sentinel.
void record_run(SharedReceipt& shared, const Orders& orders, const adapters::Adapter* adapter,
                Ran& ran, int leftovers, ProcessRunner& runner) {
    const Fingerprint after = fingerprint(orders.plan.cwd);
    std::string session;
    RunCost cost;
    read_harness_output(adapter, orders.plan, ran, session, cost);
    shared.update([&](Receipt& r) {
        r.harness_session = session;
        r.cost = cost;
        record_end(r, ran, shared, after, leftovers);
    });
    record_completion(shared, adapter, orders.plan, orders.prompt, runner);
    const Receipt& last = shared.receipt;
    (void)shared.dir.write("exit",
                           std::string(to_string(last.state)) + " " +
                               (last.exit_code ? std::to_string(*last.exit_code) : "-") + "\n",
                           Durability::synced);
    shared.dir.remove("pgid");
}

} // namespace

int supervise(const std::string& path, ProcessRunner& runner) {
    return supervise(path, runner, system_host());
}

int supervise(const std::string& path, ProcessRunner& runner, RunHost& host) {
    // A stop signal (a cancel) from the moment the run is held cancels it, and never kills the
    // supervisor before it can record the run's end.
    std::atomic<bool>& stop = host.stop_on_signals();
    // Before it has the run's orders the supervisor records nothing in the run: why it gave up
    // goes to its own log (supervisor.log), so that a run read `lost` for it can be told apart.
    const auto give_up = [&](ExitCode code, const std::string& why) {
        std::fprintf(stderr, "sonata supervise %s: %s\n", path.c_str(), why.c_str());
        return to_int(code);
    };
    auto dir = RunDirectory::open(path);
    if (!dir) return give_up(ExitCode::bad_data, dir.error().message);
    if (!dir->lock_as_supervisor())
        return give_up(ExitCode::failure, "another supervisor holds the run");
    auto orders = read_orders(*dir);
    if (!orders) return give_up(ExitCode::bad_data, orders.error().message);
    // Before any thread exists.
    auto watchdog = host.start_watchdog([&] { mark_if_unfinished(*dir, host); });
    if (!watchdog) return to_int(ExitCode::failure);
    SharedReceipt shared(*dir, orders->receipt, stop);
    shared.update([&](Receipt& r) {
        r.supervisor_pid = static_cast<int>(::getpid());
        r.supervisor_start = start_time_of(r.supervisor_pid);
    });
    const auto found = adapters::find_adapter(orders->receipt.harness);
    const adapters::Adapter* adapter = found ? *found : nullptr;
    Ran ran = run_harness(*orders, shared, adapter, runner, host);
    // Nothing of the run outlives it, and nothing of it can touch the run directory from here on.
    const int leftovers = host.kill_descendants((*watchdog)->pid());
    record_run(shared, *orders, adapter, ran, leftovers, runner);
    (*watchdog)->release(); // the watchdog finds the run final and leaves
    return 0;
}

} // namespace sonata::dispatch
