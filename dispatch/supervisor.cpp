// The supervisor: `sonata supervise DIR`, the process that runs one run's harness to its end and
// records it. It takes the run directory's lock for its whole life (the sign of a live run that
// nothing written in the directory can forge), forks a watchdog that marks the run `lost` if the
// supervisor dies, runs the harness headless or in tmux, and, when the harness is done, kills
// every process still below it (it is their subreaper: a process that left the harness's group
// or session, or cleared its environment, is still its descendant) before it writes the receipt,
// the report and the `exit` sentinel, always into the directory it opened, never through a path
// something may have replaced.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "adapters/registry.hpp"
#include "core/fs.hpp"
#include "core/proc_tree.hpp"
#include "core/session.hpp"
#include "core/text.hpp"
#include "core/tmux.hpp"
#include "dispatch/approval_channel.hpp"
#include "dispatch/contract.hpp"
#include "dispatch/launch.hpp"
#include "dispatch/run.hpp"
#include "dispatch/run_dir.hpp"
#include "dispatch/run_processes.hpp"
#include "dispatch/tui_driver.hpp"
#include "dispatch/worktree.hpp"

namespace sonata::dispatch {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t k_max_plan_bytes = 4U << 20U;
constexpr std::size_t k_max_output_kept = 4U
                                          << 20U; ///< The stdout tail kept for the final message.
constexpr std::size_t k_max_report_bytes = 256U << 10U; ///< A report from the output keeps its end.
constexpr std::size_t k_max_read_report_bytes = 64U << 20U;

std::atomic<bool> g_cancel{false};

void on_stop_signal(int) { g_cancel.store(true); }

/// The watchdog's whole life: wait for the supervisor to go, then make sure its run is not left
/// running or reading `running`.
[[noreturn]] void watchdog(const RunDirectory& dir, int fd) {
    for (const int sig : {SIGTERM, SIGINT, SIGHUP})
        std::signal(sig, SIG_IGN);
    char byte = 0;
    while (::read(fd, &byte, 1) != 0 && errno == EINTR) {
    }
    auto receipt = load_receipt(dir);
    if (receipt && !is_final(receipt->state)) {
        mark_lost(*receipt);
        (void)save_receipt(dir, *receipt); // nothing is left to tell if this fails
    }
    ::_exit(0);
}

/// Appends output to harness.log up to the cap, then notes once that the rest was dropped.
class BoundedLog {
public:
    BoundedLog(const RunDirectory& dir, std::size_t cap)
        : m_fd(::openat(dir.fd(), "harness.log",
                        O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600)),
          m_cap(cap) {}
    ~BoundedLog() {
        if (m_fd >= 0) ::close(m_fd);
    }
    BoundedLog(const BoundedLog&) = delete;
    BoundedLog& operator=(const BoundedLog&) = delete;

    /// True the first time the cap is reached.
    bool write(std::string_view chunk) {
        if (m_fd < 0 || m_capped) return false;
        const std::size_t room = m_cap - std::min(m_cap, m_written);
        const std::size_t n = std::min(room, chunk.size());
        if (n > 0 && ::write(m_fd, chunk.data(), n) > 0) m_written += n;
        if (n < chunk.size()) {
            const std::string note = "\n[sonata: harness.log reached its cap of " +
                                     std::to_string(m_cap) +
                                     " bytes; the rest of the output was dropped]\n";
            (void)!::write(m_fd, note.data(), note.size());
            m_capped = true;
            return true;
        }
        return false;
    }

private:
    int m_fd;
    std::size_t m_cap;
    std::size_t m_written = 0;
    bool m_capped = false;
};

/// The receipt, shared by the thread running the harness and the stall clock.
struct SharedReceipt {
    const RunDirectory& dir;
    Receipt receipt;
    std::mutex mutex;
    std::string abandoned; ///< Why the run was stopped because its directory cannot keep it.

    template <class F> void update(F change) {
        const std::lock_guard<std::mutex> lock(mutex);
        const Receipt before = receipt;
        change(receipt);
        if (receipt == before) return;
        if (!save_receipt(dir, receipt)) abandon("its run directory cannot be written");
    }

    /// A run whose directory was removed or replaced (by a link, say) can no longer be read at
    /// its path: its harness is stopped rather than left running unobserved. What the supervisor
    /// writes still goes into the directory it opened, never through what replaced it.
    void check_dir() {
        struct stat at_path {};
        struct stat opened {};
        const std::lock_guard<std::mutex> lock(mutex);
        if (::lstat(dir.path().c_str(), &at_path) != 0 || ::fstat(dir.fd(), &opened) != 0 ||
            at_path.st_ino != opened.st_ino || at_path.st_dev != opened.st_dev)
            abandon("its run directory was removed or replaced");
    }

private:
    void abandon(std::string why) {
        if (abandoned.empty()) abandoned = "stopped: " + std::move(why);
        g_cancel.store(true);
    }
};

/// How the harness ended, in the terms the report rules take.
struct HarnessEnd {
    ProcessResult result;
    /// A TUI run: the work was done (report landed, turn over) and sonata quit the TUI itself.
    bool ended_by_sonata = false;
    bool tui = false;
};

/// The report, the final state and whether the run is degraded, from how the harness ended.
void conclude(Receipt& r, const HarnessEnd& end, bool cancelled, const std::string& abandoned,
              const RunDirectory& dir) {
    const ProcessResult& result = end.result;
    if (!end.ended_by_sonata || result.exit_code >= 0) r.exit_code = result.exit_code;
    r.term_signal = result.term_signal;
    r.timed_out = result.timed_out;
    auto written = dir.read("report.md", k_max_read_report_bytes);
    if (written && !trimmed(*written).empty()) {
        r.report_source = "report.md";
    } else if (std::string final_text = trimmed(result.out); !final_text.empty()) {
        // A read-only run cannot write report.md: its terminal output is its report. The report
        // is the end of that output; all of it (to the cap) is in harness.log.
        r.report_source = end.tui                      ? "pane-text"
                          : r.role_kind == "read-only" ? "terminal-output"
                                                       : "final-message";
        if (final_text.size() > k_max_report_bytes) {
            final_text = "[sonata: the output's first " +
                         std::to_string(final_text.size() - k_max_report_bytes) +
                         " bytes are in harness.log (`sonata log " + r.id + "`)]\n" +
                         final_text.substr(final_text.size() - k_max_report_bytes);
        }
        (void)dir.write("report.md", final_text + "\n");
    } else {
        r.report_source = "none";
    }
    const auto degrade = [&](RunState state, std::string why) {
        r.state = state;
        r.degraded = true;
        r.degraded_reason = std::move(why);
    };
    r.state = RunState::done;
    if (!abandoned.empty())
        degrade(RunState::failed, abandoned);
    else if (cancelled)
        degrade(RunState::cancelled, "cancelled");
    else if (result.timed_out)
        degrade(RunState::timed_out, "timed out; the harness's process group was killed");
    else if (end.ended_by_sonata) {
        if (r.report_source == "none") degrade(RunState::failed, "the TUI showed no report");
    } else if (result.term_signal != 0)
        degrade(RunState::failed,
                "crashed: killed by signal " + std::to_string(result.term_signal));
    else if (result.exit_code != 0)
        degrade(RunState::failed, "exited " + std::to_string(result.exit_code));
    else if (r.report_source == "none") {
        degrade(RunState::failed,
                "exited 0 without a report or any output: the model may never have been reached");
    }
    if (r.report_source != "none") {
        const std::string exit = r.exit_code ? std::to_string(*r.exit_code) : "- (quit by sonata)";
        const std::string provenance = "\n---\nsonata run " + r.id + " · role " + r.role + " · " +
                                       r.harness + "@" + r.version + " · mode " + r.mode +
                                       " · exit " + exit + "\n";
        auto report = dir.read("report.md", k_max_read_report_bytes);
        if (report) (void)dir.write("report.md", *report + provenance);
    }
}

/// Marks the run `stalled` while nothing was heard from the harness for the stall limit, and
/// `running` again once something is; a thread of its own, stopped by the destructor.
class StallClock {
public:
    StallClock(SharedReceipt& shared, std::chrono::seconds stall)
        : m_shared(shared), m_stall(stall), m_thread([this] { loop(); }) {}
    ~StallClock() {
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_stop = true;
        }
        m_changed.notify_one();
        m_thread.join();
    }
    StallClock(const StallClock&) = delete;
    StallClock& operator=(const StallClock&) = delete;

    void heard() { m_last = Clock::now().time_since_epoch().count(); }

private:
    void loop() {
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                if (m_changed.wait_for(lock, std::chrono::milliseconds(200),
                                       [&] { return m_stop; }))
                    return;
            }
            m_shared.check_dir();
            const bool quiet =
                Clock::now() - Clock::time_point(Clock::duration(m_last.load())) > m_stall;
            m_shared.update([&](Receipt& r) {
                if (quiet && r.state == RunState::running) r.state = RunState::stalled;
                if (!quiet && r.state == RunState::stalled) r.state = RunState::running;
            });
        }
    }

    SharedReceipt& m_shared;
    std::chrono::seconds m_stall;
    std::atomic<Clock::rep> m_last{Clock::now().time_since_epoch().count()};
    bool m_stop = false;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::thread m_thread; // last: starts once the rest is built
};

/// Runs the harness as the plan says, feeding the log, the stall clock and the receipt.
Result<HarnessEnd> run_headless(const RunPlan& plan, const std::string& prompt,
                                SharedReceipt& shared, ProcessRunner& runner) {
    const Invocation& inv = plan.invocation;
    ProcessRequest request = headless_request(
        inv, prompt, child_environment(marked(current_environment(), shared.receipt), inv),
        plan.cwd);
    request.timeout = plan.limits.timeout;
    request.kill_grace = std::chrono::seconds(5);
    request.max_output_bytes = k_max_output_kept;
    request.cancel = &g_cancel;
    BoundedLog log(shared.dir, plan.limits.log_cap);
    StallClock stall(shared, plan.limits.stall);
    request.on_start = [&](int pid) {
        (void)shared.dir.write("pgid", std::to_string(pid) + "\n");
        shared.update([&](Receipt& r) { r.harness_pgid = pid; });
    };
    request.on_output = [&](OutputStream, std::string_view chunk) {
        stall.heard();
        if (log.write(chunk)) shared.update([](Receipt& r) { r.log_capped = true; });
    };
    auto result = runner.run(request);
    if (!result) return tl::unexpected(result.error());
    return HarnessEnd{std::move(*result), false, false};
}

/// A paused TUI run waits here for an answer on its approval socket (from a process that is not
/// the run's own), the harness's exit, the deadline or a cancel; nullopt when the wait ended
/// otherwise.
std::optional<TakenAnswer> await_answer(TmuxSession& tui, ApprovalListener& answers,
                                        const std::string& card, Clock::time_point deadline) {
    while (Clock::now() < deadline && !g_cancel.load()) {
        if (auto taken = answers.poll(std::chrono::milliseconds(100), card)) return taken;
        auto status = tui.status();
        if (!status || status->exited) return std::nullopt;
    }
    return std::nullopt;
}

/// Runs a TUI mapping in tmux on a server of the run's own, driven by the dispatch policy:
/// trust answered, never-accept cards declined, approval cards pause the run for the user, and
/// once the report has landed or the model's turn is over, the TUI is quit.
Result<HarnessEnd> run_tui(const RunPlan& plan, SharedReceipt& shared, ProcessRunner& runner) {
    constexpr auto k_turn_quiet = std::chrono::seconds(3);
    const Invocation& inv = plan.invocation;
    const auto adapter = adapters::find_adapter(shared.receipt.harness);
    if (!adapter) return tl::unexpected(adapter.error());
    const adapters::ScreenPatterns patterns = (*adapter)->screen_patterns();
    auto answers = ApprovalListener::listen(
        approval_socket_name(shared.receipt.id, static_cast<int>(::getpid())));
    if (!answers) return tl::unexpected(answers.error());
    TmuxSpec spec =
        tui_spec(inv, child_environment(marked(current_environment(), shared.receipt), inv),
                 plan.cwd, shared.dir.path());
    spec.server_env = marker_of(shared.receipt);
    auto session = TmuxSession::start(runner, spec);
    if (!session) return tl::unexpected(session.error());
    TmuxSession& tui = **session;
    shared.update([&](Receipt& r) {
        r.harness_pgid = tui.pane_pid();
        r.tmux_server_pid = tui.server_pid();
        r.tmux_server_start = start_time_of(tui.server_pid());
        r.tmux_socket = tui.socket_path();
    });
    const auto deadline = Clock::now() + plan.limits.timeout;
    const auto log_cap = plan.limits.log_cap;
    StallClock stall(shared, plan.limits.stall);
    const bool read_only = shared.receipt.role_kind == "read-only";

    const std::string task = typed_task(RunFiles{shared.dir.path()}.instructions());
    std::string last_screen;
    std::string submitted_screen;
    bool turn_began = false; // the screen moved (or showed work) after the task was submitted
    auto last_change = Clock::now();
    TuiPolicy policy;
    policy.on_approval = OnApproval::pause;
    policy.on_poll = [&](const std::string& screen) {
        if (screen != last_screen) {
            last_screen = screen;
            last_change = Clock::now();
            stall.heard();
        }
        // A screen that changed only around a task still in its box (codex 0.171 puts up a late
        // warnings banner) is a submit the TUI lost, not a turn.
        if (!submitted_screen.empty() &&
            (screen_shows(screen, patterns.busy) ||
             (screen != submitted_screen && !typed_text_waits(screen, patterns, task))))
            turn_began = true;
    };
    policy.on_screen = [&](const std::string& what, const std::string& screen) {
        if (what == "submitted") submitted_screen = screen.empty() ? " " : screen;
    };
    policy.model_reached = [&] { return turn_began; };
    policy.finished = [&] {
        if (!read_only) {
            auto report = shared.dir.read("report.md", k_max_read_report_bytes);
            if (report && !trimmed(*report).empty()) return true;
        }
        const std::string& screen = last_screen;
        // A task still waiting in its box is a submit the TUI lost, whatever moved before.
        return turn_began && Clock::now() - last_change >= k_turn_quiet &&
               !screen_shows(screen, patterns.busy) && !screen_shows(screen, patterns.approval) &&
               !typed_text_waits(screen, patterns, task) &&
               (patterns.ready.empty() || screen_shows(screen, patterns.ready));
    };

    HarnessEnd end;
    end.tui = true;
    std::string worked; // the screen when the work was done
    for (;;) {
        const TuiOutcome out = drive_tui(tui, patterns, task, policy, deadline, &g_cancel);
        policy.prompt_sent = policy.prompt_sent || !submitted_screen.empty();
        if (out.end == TuiEnd::approval) {
            shared.update([&](Receipt& r) {
                r.state = RunState::paused;
                r.prompt = out.card;
            });
            const auto answer = await_answer(tui, *answers, out.card, deadline);
            if (!answer) continue; // exited, cancelled or timed out: the next drive says
            // A key that does not arrive leaves the card up: the next drive pauses on it again.
            (void)tui.send_keys(answer->yes ? patterns.approve_keys : patterns.deny_keys);
            policy.answered_card = out.card;
            shared.update([&](Receipt& r) {
                r.approvals.push_back(
                    {out.card, answer->yes ? "yes" : "no", utc_now(), answer->by});
                r.prompt.clear();
                r.state = RunState::running;
            });
            stall.heard();
            continue;
        }
        if (out.end == TuiEnd::finished) {
            // The work is on the screen now: a TUI may clear it when it quits (codex does).
            if (auto history = tui.capture_history()) worked = *history;
            (void)tui.send_keys(patterns.quit_keys);
            auto status = tui.wait_for_exit(std::chrono::seconds(10));
            end.ended_by_sonata = true;
            if (status && status->exited) {
                end.result.exit_code = status->exit_code;
                end.result.term_signal = status->term_signal;
            }
        } else if (out.end == TuiEnd::exited) {
            end.result.exit_code = out.exit_code;
            end.result.term_signal = out.term_signal;
        } else if (out.end == TuiEnd::timed_out) {
            end.result.timed_out = true;
        } else if (out.end == TuiEnd::trust) {
            return fail(ExitCode::failure,
                        "the TUI asked to trust the folder and sonata has no keys to answer it");
        } else if (out.end == TuiEnd::error) {
            return fail(ExitCode::failure, "the TUI's tmux failed: " + out.error);
        }
        break;
    }
    auto history = tui.capture_history();
    const std::string last = history ? *history : last_screen;
    // The report of a TUI that wrote none is its screen when the work was done; what it printed
    // after sonata quit it (codex: its session id) is kept apart, and both go to the log.
    std::string text = worked.empty() ? last : worked;
    if (!worked.empty() && last != worked) {
        end.result.err = last;
        text += "\n[sonata: quit the TUI]\n" + last;
    }
    if (text.size() > log_cap) {
        text = text.substr(text.size() - log_cap);
        shared.update([](Receipt& r) { r.log_capped = true; });
    }
    (void)shared.dir.write("harness.log", text);
    end.result.out = worked.empty() ? last : worked;
    return end;
}

/// One of a harness's `max_concurrent` slots: an flock on `<slots_dir>/<k>.lock`, held until the
/// supervisor ends, whatever ends it (the kernel drops the lock with the process).
struct SlotLock {
    int fd = -1;
    SlotLock() = default;
    SlotLock(const SlotLock&) = delete;
    SlotLock& operator=(const SlotLock&) = delete;
    ~SlotLock() {
        if (fd >= 0) ::close(fd);
    }
};

/// Takes a free slot, waiting `queued` while every one is held; -1 when the harness has no
/// limit. A cancel while queued returns at once (the caller sees g_cancel). An error when no slot
/// file can even be opened: running anyway would break the limit.
Result<int> take_slot(const RunPlan& plan, SharedReceipt& shared, SlotLock& lock) {
    const int slots = plan.limits.max_concurrent;
    const std::string& dir = plan.limits.slots_dir;
    if (slots <= 0 || dir.empty()) return -1;
    std::error_code ec;
    fs::create_directories(dir, ec);
    for (bool queued = false; !g_cancel.load();) {
        int opened = 0;
        for (int k = 0; k < slots; ++k) {
            const std::string path = dir + "/" + std::to_string(k) + ".lock";
            const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (fd < 0) continue;
            ++opened;
            if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
                lock.fd = fd;
                return k;
            }
            ::close(fd);
        }
        if (opened == 0)
            return fail(ExitCode::failure, "cannot open the concurrency slots in " + dir);
        if (!queued) {
            shared.update([](Receipt& r) { r.state = RunState::queued; });
            queued = true;
        }
        shared.check_dir();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return -1;
}

/// Why a headless run that failed is worth starting once more: the adapter reads an
/// infrastructure failure in its output (agy only). Never after a cancel, a timeout, a TUI run
/// or a run that exited 0, and never twice.
std::string retry_reason(const adapters::Adapter* adapter, const Result<HarnessEnd>& end,
                         const std::string& abandoned) {
    if (adapter == nullptr || !end || end->tui || g_cancel.load() || !abandoned.empty() ||
        end->result.timed_out || end->result.cancelled ||
        (end->result.exit_code == 0 && end->result.term_signal == 0)) {
        return {};
    }
    return adapter->infrastructure_failure(end->result.out, end->result.err, end->result.exit_code);
}

/// The adapter's completion check of a run that ended `done`: its export of the recorded session,
/// run bounded in time with the harness's own environment; "" when the adapter has none,
/// "verified", or "failed: <why>".
std::string check_completion(const adapters::Adapter& adapter, const RunPlan& plan,
                             const std::string& task, const Receipt& r, ProcessRunner& runner) {
    const auto args = adapter.completion_export_args(r.harness_session);
    if (args.empty()) return {};
    if (r.harness_session.empty()) return "failed: sonata found no session id to check";
    const Invocation& inv = plan.invocation;
    ProcessRequest request;
    request.argv = {inv.argv.front()};
    request.argv.insert(request.argv.end(), args.begin(), args.end());
    request.env = child_environment(marked(current_environment(), r), inv);
    request.cwd = plan.cwd;
    request.timeout = plan.limits.completion_timeout;
    request.max_output_bytes = 16U << 20U;
    auto exported = runner.run(request);
    if (!exported) return "failed: the session export could not start: " + exported.error().message;
    if (exported->timed_out) return "failed: the session export did not finish in time";
    if (exported->exit_code != 0)
        return "failed: the session export exited " + std::to_string(exported->exit_code);
    const std::string why = adapter.check_completion(exported->out, r.harness_session, task);
    return why.empty() ? "verified" : "failed: " + why;
}

/// What the supervisor reads from its run directory before it starts anything.
struct Orders {
    Receipt receipt;
    RunPlan plan;
    std::string prompt; ///< instructions.md
};

Result<Orders> read_orders(const RunDirectory& dir) {
    auto receipt = load_receipt(dir);
    if (!receipt) return tl::unexpected(receipt.error());
    auto text = dir.read("plan.json", k_max_plan_bytes);
    if (!text) return tl::unexpected(text.error());
    auto plan = parse_plan(*text, dir.path() + "/plan.json");
    if (!plan) return tl::unexpected(plan.error());
    auto prompt = dir.read("instructions.md", k_max_plan_bytes);
    if (!prompt) return tl::unexpected(prompt.error());
    return Orders{std::move(*receipt), std::move(*plan), std::move(*prompt)};
}

/// How the harness's part of the run went.
struct Ran {
    Result<HarnessEnd> result = fail(ExitCode::failure, "not started");
    Fingerprint before;
};

/// Waits for a slot, then runs the harness (once more after an infrastructure failure the adapter
/// recognises).
Ran run_harness(const Orders& orders, SharedReceipt& shared, const adapters::Adapter* adapter,
                ProcessRunner& runner) {
    Ran ran;
    const RunPlan& plan = orders.plan;
    SlotLock slot;
    auto taken = take_slot(plan, shared, slot);
    if (!taken) {
        ran.result = tl::unexpected(taken.error());
        return ran;
    }
    if (g_cancel.load()) {
        ran.result = HarnessEnd{ProcessResult{}, false, false};
        ran.result->result.cancelled = true;
        return ran;
    }
    shared.update([&](Receipt& r) {
        r.state = RunState::running;
        r.queue_slot = *taken;
        r.started_at = utc_now();
    });
    ran.before = fingerprint(plan.cwd);
    ran.result = plan.invocation.interactive ? run_tui(plan, shared, runner)
                                             : run_headless(plan, orders.prompt, shared, runner);
    if (const std::string why = retry_reason(adapter, ran.result, shared.abandoned); !why.empty()) {
        shared.update([&](Receipt& r) {
            r.retries.push_back({why, ran.result->result.exit_code, utc_now()});
        });
        BoundedLog(shared.dir, plan.limits.log_cap)
            .write("\n[sonata: " + why + "; starting the run once more]\n");
        ran.result = run_headless(plan, orders.prompt, shared, runner);
    }
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

/// The receipt's account of the run's end: state, report, changes, notes, session and cost.
void record_end(Receipt& r, const Ran& ran, const SharedReceipt& shared, const Fingerprint& after,
                int leftovers) {
    r.ended_at = utc_now();
    if (!ran.result) {
        r.state = RunState::failed;
        r.degraded = true;
        r.degraded_reason = ran.result.error().message;
        r.report_source = "none";
        return;
    }
    conclude(r, *ran.result, g_cancel.load(), shared.abandoned, shared.dir);
    if (r.started_at.empty()) r.exit_code.reset(); // cancelled while queued: nothing ran
    if (!r.started_at.empty()) r.files_changed = changes(ran.before, after);
    if (after.truncated) r.note = "the workspace has too many files to fingerprint them all";
    if (r.role_kind == "write" && r.files_changed.empty() && r.state == RunState::done)
        r.note = "a write role whose run changed nothing in the workspace";
    if (leftovers > 0) {
        r.note += std::string(r.note.empty() ? "" : "; ") + "killed " + std::to_string(leftovers) +
                  " process(es) the harness left running outside its process group";
    }
    if (r.state == RunState::failed && r.budget_enforced && r.max_budget_usd && r.cost.usd &&
        *r.cost.usd >= *r.max_budget_usd) {
        r.degraded_reason = fmt::format("stopped at its budget: it spent ${:.4f} ({}) of the "
                                        "${:.2f} allowed; {}",
                                        *r.cost.usd, to_string(r.cost.source), *r.max_budget_usd,
                                        r.degraded_reason);
    }
}

/// A `done` run whose harness's own record says it did not complete is failed.
void record_completion(SharedReceipt& shared, const adapters::Adapter* adapter,
                       const Orders& orders, ProcessRunner& runner) {
    if (adapter == nullptr || shared.receipt.state != RunState::done) return;
    const std::string verdict =
        check_completion(*adapter, orders.plan, orders.prompt, shared.receipt, runner);
    shared.update([&](Receipt& r) {
        r.completion = verdict;
        if (verdict.rfind("failed: ", 0) == 0) {
            r.state = RunState::failed;
            r.degraded = true;
            r.degraded_reason = r.harness +
                                " exited 0 but its own record of the session says the run did "
                                "not complete: " +
                                verdict.substr(8);
        }
    });
}

} // namespace

int supervise(const std::string& path, ProcessRunner& runner) {
    auto dir = RunDirectory::open(path);
    if (!dir) return to_int(ExitCode::bad_data);
    if (!dir->lock_as_supervisor()) return to_int(ExitCode::failure); // it has a supervisor
    auto orders = read_orders(*dir);
    if (!orders) return to_int(ExitCode::bad_data);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return to_int(ExitCode::failure);
    const pid_t dog = ::fork(); // before any thread exists
    if (dog == 0) {
        ::close(pipe_fds[1]);
        watchdog(*dir, pipe_fds[0]);
    }
    ::close(pipe_fds[0]);
    for (const int sig : {SIGTERM, SIGINT, SIGHUP})
        std::signal(sig, on_stop_signal);
    SharedReceipt shared{*dir, orders->receipt, {}, {}};
    shared.update([&](Receipt& r) {
        r.supervisor_pid = static_cast<int>(::getpid());
        r.supervisor_start = start_time_of(r.supervisor_pid);
    });
    const auto found = adapters::find_adapter(orders->receipt.harness);
    const adapters::Adapter* adapter = found ? *found : nullptr;
    Ran ran = run_harness(*orders, shared, adapter, runner);
    // Nothing of the run outlives it, and nothing of it can touch the run directory from here on.
    const int leftovers = stop_descendants(dog);
    const Fingerprint after = fingerprint(orders->plan.cwd);
    std::string session;
    RunCost cost;
    read_harness_output(adapter, orders->plan, ran, session, cost);
    shared.update([&](Receipt& r) {
        r.harness_session = session;
        r.cost = cost;
        record_end(r, ran, shared, after, leftovers);
    });
    record_completion(shared, adapter, *orders, runner);
    const Receipt& last = shared.receipt;
    (void)dir->write("exit",
                     std::string(to_string(last.state)) + " " +
                         (last.exit_code ? std::to_string(*last.exit_code) : "-") + "\n",
                     true);
    dir->remove("pgid");
    ::close(pipe_fds[1]); // the watchdog finds the run final and leaves
    while (::waitpid(dog, nullptr, 0) < 0 && errno == EINTR) {
    }
    return 0;
}

} // namespace sonata::dispatch
