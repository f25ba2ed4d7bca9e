// Starting, supervising and reading runs. The supervisor is sonata itself (`sonata supervise DIR`),
// started in a session of its own by a double fork, so it outlives the command that started it and
// is never that command's zombie. Before it starts anything it forks a watchdog that holds the read
// end of a pipe: when the supervisor dies, for whatever reason, the pipe closes, and the watchdog
// kills the harness's process group and marks the run `lost` unless the supervisor finished it.
#include "dispatch/run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "adapters/registry.hpp"
#include "core/fs.hpp"
#include "core/proc_stat.hpp"
#include "core/session.hpp"
#include "core/text.hpp"
#include "core/tmux.hpp"
#include "dispatch/contract.hpp"
#include "dispatch/launch.hpp"
#include "dispatch/run_dir.hpp"
#include "dispatch/tui_driver.hpp"
#include "dispatch/worktree.hpp"

namespace sonata::dispatch {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t k_max_plan_bytes = 4U << 20U;
constexpr std::size_t k_max_output_kept = 4U
                                          << 20U; ///< The stdout tail kept for the final message.
constexpr std::chrono::seconds k_start_grace{30}; ///< A run still `starting` after this is lost.
constexpr std::size_t k_max_report_bytes = 256U << 10U; ///< A report from the output keeps its end.

std::atomic<bool> g_cancel{false};
constexpr const char* k_lost_reason =
    "the supervisor ended without recording the run's end (it died, or its run directory could "
    "not be written); its harness was killed";

void on_stop_signal(int) { g_cancel.store(true); }

std::string utc_now() {
    return format_utc(std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count());
}

/// The start time of `pid` (/proc stat field 22), 0 when it is gone or a zombie.
std::uint64_t start_time_of(int pid) {
    const auto fields = proc_stat_fields(pid);
    if (!fields || fields->size() < 20 || (*fields)[0] == "Z") return 0;
    return std::stoull((*fields)[19]);
}

std::string instructions(const StartRequest& request, const RunFiles& files) {
    return "# Task from sonata run " + request.receipt.id + "\n\nRole: " + request.receipt.role +
           " (" + request.receipt.role_kind + "), mode " + request.receipt.mode + ".\n\n" +
           request.task + "\n\n## Report\n\n" +
           report_contract(request.receipt.role_kind == "read-only", files.report()) + "\n";
}

json plan_json(const StartRequest& request) {
    const Invocation& inv = request.decision.invocation();
    return {{"harness", request.decision.harness},
            {"argv", inv.argv},
            {"env", inv.env},
            {"env_unset", inv.env_unset},
            {"cwd", request.cwd},
            {"prompt_stdin", inv.prompt == PromptChannel::stdin_pipe},
            {"interactive", inv.interactive},
            {"report", to_string(inv.report)},
            {"timeout_s", request.limits.timeout.count()},
            {"stall_s", request.limits.stall.count()},
            {"log_cap", request.limits.log_cap},
            {"max_concurrent", request.limits.max_concurrent},
            {"slots_dir", request.limits.slots_dir},
            {"completion_timeout_s", request.limits.completion_timeout.count()}};
}

/// Starts `argv` as a grandchild in a new session, with stdio on /dev/null and `log`; waits for the
/// intermediate child only. Everything the children need is built before fork().
Result<void> spawn_detached(const std::vector<std::string>& argv, const Environment& env,
                            const std::string& log) {
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env)
        env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_strings)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = argv;
    std::vector<char*> argp;
    for (auto& a : args)
        argp.push_back(a.data());
    argp.push_back(nullptr);
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (null_fd < 0 || log_fd < 0)
        return fail(ExitCode::failure, "cannot open the supervisor's log " + log);
    const pid_t child = ::fork();
    if (child == 0) {
        ::setsid();
        if (::fork() != 0) ::_exit(0);
        ::dup2(null_fd, STDIN_FILENO);
        ::dup2(log_fd, STDOUT_FILENO);
        ::dup2(log_fd, STDERR_FILENO);
        ::execve(argp[0], argp.data(), envp.data());
        ::_exit(127);
    }
    ::close(null_fd);
    ::close(log_fd);
    if (child < 0) return fail(ExitCode::failure, "cannot start the supervisor (fork failed)");
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return {};
}

/// The variable every harness sonata dispatches carries: it marks the processes of a run, so that
/// a receipt (which anyone who can write the run directory can plant) never makes sonata kill a
/// process that is not that run's.
constexpr const char* k_run_marker = "SONATA_RUN_ID";

/// The mode a run's harness runs in, for a sonata that harness starts in turn (its own
/// `sonata mcp`, a `sonata dispatch` through its shell): nothing it dispatches may be wider.
constexpr const char* k_run_mode = "SONATA_RUN_MODE";

/// The environment `base` with the run's marker and mode set.
Environment marked(Environment base, const Receipt& receipt) {
    base[k_run_marker] = receipt.id;
    base[k_run_mode] = receipt.mode;
    return base;
}

/// True when process `pid` carries the marker of run `run_id` in its environment.
bool carries_marker(int pid, const std::string& run_id) {
    auto environ = read_file_bounded("/proc/" + std::to_string(pid) + "/environ", 4U << 20U);
    if (!environ) return false;
    const std::string want = std::string(k_run_marker) + "=" + run_id;
    for (std::size_t at = 0; at < environ->size();) {
        const auto end = std::min(environ->find('\0', at), environ->size());
        if (environ->compare(at, end - at, want) == 0) return true;
        at = end + 1;
    }
    return false;
}

/// Every process but this one that carries run `run_id`'s marker and passes `also`.
template <class Also> std::vector<int> marked_processes(const std::string& run_id, Also also) {
    std::vector<int> pids;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const int pid = std::stoi(name);
        if (pid != ::getpid() && also(pid) && carries_marker(pid, run_id)) pids.push_back(pid);
    }
    return pids;
}

/// Kills whatever of a run may still run, and nothing else: the harness's process group when its
/// leader carries the run's marker (else each member that does), and a TUI run's tmux server when
/// its pid, start time and command line (the run's socket) all match.
void kill_what_runs(const Receipt& r) {
    if (r.harness_pgid > 0 && !r.id.empty()) {
        if (carries_marker(r.harness_pgid, r.id)) {
            ::kill(-r.harness_pgid, SIGKILL);
        } else {
            const auto in_group = [&](int pid) {
                const auto fields = proc_stat_fields(pid);
                return fields && fields->size() > 2 &&
                       (*fields)[2] == std::to_string(r.harness_pgid);
            };
            for (const int pid : marked_processes(r.id, in_group))
                ::kill(pid, SIGKILL);
        }
    }
    if (r.tmux_server_pid > 0 && !r.tmux_socket.empty() &&
        start_time_of(r.tmux_server_pid) == r.tmux_server_start) {
        auto cmdline =
            read_file_bounded("/proc/" + std::to_string(r.tmux_server_pid) + "/cmdline", 1U << 16U);
        const std::string socket = fs::path(r.tmux_socket).filename().string();
        if (cmdline && !socket.empty() && cmdline->find(socket) != std::string::npos)
            ::kill(r.tmux_server_pid, SIGKILL);
    }
}

/// Kills every process still carrying run `run_id`'s marker once its harness has ended: what the
/// harness started outside its process group (opencode 1.18.33 runs its shell commands detached,
/// so a command it left running survives the group's kill). Returns how many there were.
int kill_leftovers(const std::string& run_id) {
    int killed = 0;
    for (const int pid : marked_processes(run_id, [](int) { return true; }))
        killed += ::kill(pid, SIGKILL) == 0 ? 1 : 0;
    return killed;
}

/// A run whose supervisor is gone without finishing it: what may still run is killed, and the
/// receipt reads `lost`.
void mark_lost(Receipt& r) {
    kill_what_runs(r);
    r.state = RunState::lost;
    r.ended_at = utc_now();
    r.degraded = true;
    r.degraded_reason = k_lost_reason;
}

/// The watchdog's whole life: wait for the supervisor to go, then make sure its run is not left
/// running or reading `running`.
[[noreturn]] void watchdog(const std::string& dir, int fd) {
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
    BoundedLog(const std::string& path, std::size_t cap)
        : m_fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)), m_cap(cap) {}
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
    std::string dir;
    Receipt receipt;
    std::mutex mutex;
    std::uint64_t dir_inode = 0;
    std::string abandoned; ///< Why the run was stopped because its directory cannot keep it.

    template <class F> void update(F change) {
        const std::lock_guard<std::mutex> lock(mutex);
        const Receipt before = receipt;
        change(receipt);
        if (receipt == before) return;
        if (!save_receipt(dir, receipt)) abandon("its run directory cannot be written");
    }

    /// A run whose directory was removed or replaced cannot be recorded: its harness is stopped
    /// rather than left running unobserved (as it is when a receipt cannot be written).
    void check_dir() {
        struct stat st {};
        const std::lock_guard<std::mutex> lock(mutex);
        if (::stat(dir.c_str(), &st) != 0 || (dir_inode != 0 && st.st_ino != dir_inode))
            abandon("its run directory was removed");
        else if (dir_inode == 0)
            dir_inode = st.st_ino;
    }

private:
    void abandon(std::string why) {
        if (abandoned.empty()) abandoned = "stopped: " + std::move(why);
        g_cancel.store(true);
    }
};

std::string trimmed(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

/// How the harness ended, in the terms the report rules take.
struct HarnessEnd {
    ProcessResult result;
    /// A TUI run: the work was done (report landed, turn over) and sonata quit the TUI itself.
    bool ended_by_sonata = false;
    bool tui = false;
};

/// The report, the final state and whether the run is degraded, from how the harness ended.
void conclude(Receipt& r, const HarnessEnd& end, bool cancelled, const std::string& abandoned,
              const RunFiles& files) {
    const ProcessResult& result = end.result;
    if (!end.ended_by_sonata || result.exit_code >= 0) r.exit_code = result.exit_code;
    r.term_signal = result.term_signal;
    r.timed_out = result.timed_out;
    auto written = read_file_bounded(files.report(), 64U << 20U);
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
        (void)write_file_atomic(files.report(), final_text + "\n",
                                WriteOptions{0600, false, false});
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
        auto report = read_file_bounded(files.report(), 64U << 20U);
        if (report)
            (void)write_file_atomic(files.report(), *report + provenance,
                                    WriteOptions{0600, false, false});
    }
}

Result<json> load_plan(const RunFiles& files) {
    auto text = read_file_bounded(files.plan(), k_max_plan_bytes);
    if (!text) return tl::unexpected(text.error());
    const json plan = json::parse(*text, nullptr, false);
    if (plan.is_discarded() || !plan.is_object())
        return fail(ExitCode::bad_data, files.plan() + ": not a run plan");
    return plan;
}

Invocation invocation_of(const json& plan) {
    Invocation inv;
    inv.argv = plan.at("argv").get<std::vector<std::string>>();
    inv.env = plan.at("env").get<std::map<std::string, std::string>>();
    inv.env_unset = plan.at("env_unset").get<std::vector<std::string>>();
    inv.interactive = plan.value("interactive", false);
    inv.prompt = inv.interactive                       ? PromptChannel::tmux_keys
                 : plan.at("prompt_stdin").get<bool>() ? PromptChannel::stdin_pipe
                                                       : PromptChannel::argument;
    return inv;
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
Result<HarnessEnd> run_headless(const json& plan, const std::string& prompt, SharedReceipt& shared,
                                const RunFiles& files, ProcessRunner& runner) {
    const Invocation inv = invocation_of(plan);
    ProcessRequest request = headless_request(
        inv, prompt, child_environment(marked(current_environment(), shared.receipt), inv),
        plan.at("cwd").get<std::string>());
    request.timeout = std::chrono::seconds(plan.at("timeout_s").get<long>());
    request.kill_grace = std::chrono::seconds(5);
    request.max_output_bytes = k_max_output_kept;
    request.cancel = &g_cancel;
    BoundedLog log(files.log(), plan.at("log_cap").get<std::size_t>());
    StallClock stall(shared, std::chrono::seconds(plan.at("stall_s").get<long>()));
    request.on_start = [&](int pid) {
        (void)write_file_atomic(files.pgid(), std::to_string(pid) + "\n",
                                WriteOptions{0600, false, false});
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

/// A paused TUI run waits here for `sonata approve` (its answer file), the harness's exit, the
/// deadline or a cancel. Returns the answer ("yes"/"no"), or empty when the wait ended otherwise.
std::string await_answer(TmuxSession& tui, const RunFiles& files, const std::string& card,
                         Clock::time_point deadline) {
    while (Clock::now() < deadline && !g_cancel.load()) {
        if (auto text = read_file_bounded(files.answer(), 1U << 20U)) {
            ::unlink(files.answer().c_str());
            const auto newline = text->find('\n');
            const std::string answer = text->substr(0, newline);
            const std::string for_card =
                newline == std::string::npos ? std::string() : text->substr(newline + 1);
            // An answer to a card no longer up (a stale approve) is dropped.
            if ((answer == "yes" || answer == "no") && for_card == card) return answer;
        }
        auto status = tui.status();
        if (!status || status->exited) return {};
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return {};
}

/// Runs a TUI mapping in tmux on a server of the run's own, driven by the dispatch policy:
/// trust answered, never-accept cards declined, approval cards pause the run for the user, and
/// once the report has landed or the model's turn is over, the TUI is quit.
Result<HarnessEnd> run_tui(const json& plan, SharedReceipt& shared, const RunFiles& files,
                           ProcessRunner& runner) {
    constexpr auto k_turn_quiet = std::chrono::seconds(3);
    const Invocation inv = invocation_of(plan);
    const auto adapter = adapters::find_adapter(shared.receipt.harness);
    if (!adapter) return tl::unexpected(adapter.error());
    const adapters::ScreenPatterns patterns = (*adapter)->screen_patterns();
    const TmuxSpec spec =
        tui_spec(inv, child_environment(marked(current_environment(), shared.receipt), inv),
                 plan.at("cwd").get<std::string>(), files.dir);
    auto session = TmuxSession::start(runner, spec);
    if (!session) return tl::unexpected(session.error());
    TmuxSession& tui = **session;
    shared.update([&](Receipt& r) {
        r.harness_pgid = tui.pane_pid();
        r.tmux_server_pid = tui.server_pid();
        r.tmux_server_start = start_time_of(tui.server_pid());
        r.tmux_socket = tui.socket_path();
    });
    const auto deadline = Clock::now() + std::chrono::seconds(plan.at("timeout_s").get<long>());
    const auto log_cap = plan.at("log_cap").get<std::size_t>();
    StallClock stall(shared, std::chrono::seconds(plan.at("stall_s").get<long>()));
    const bool read_only = shared.receipt.role_kind == "read-only";

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
        if (!submitted_screen.empty() &&
            (screen_shows(screen, patterns.busy) || screen != submitted_screen))
            turn_began = true;
    };
    policy.on_screen = [&](const std::string& what, const std::string& screen) {
        if (what == "submitted") submitted_screen = screen.empty() ? " " : screen;
    };
    policy.model_reached = [&] { return turn_began; };
    policy.finished = [&] {
        if (!read_only) {
            auto report = read_file_bounded(files.report(), 64U << 20U);
            if (report && !trimmed(*report).empty()) return true;
        }
        const std::string& screen = last_screen;
        return turn_began && Clock::now() - last_change >= k_turn_quiet &&
               !screen_shows(screen, patterns.busy) && !screen_shows(screen, patterns.approval) &&
               (patterns.ready.empty() || screen_shows(screen, patterns.ready));
    };

    HarnessEnd end;
    end.tui = true;
    std::string worked; // the screen when the work was done
    for (;;) {
        const TuiOutcome out =
            drive_tui(tui, patterns, typed_task(files.instructions()), policy, deadline, &g_cancel);
        policy.prompt_sent = policy.prompt_sent || !submitted_screen.empty();
        if (out.end == TuiEnd::approval) {
            shared.update([&](Receipt& r) {
                r.state = RunState::paused;
                r.prompt = out.card;
            });
            const std::string answer = await_answer(tui, files, out.card, deadline);
            if (answer.empty()) continue; // exited, cancelled or timed out: the next drive says
            (void)tui.send_keys(answer == "yes" ? patterns.approve_keys : patterns.deny_keys);
            policy.answered_card = out.card;
            shared.update([&](Receipt& r) {
                r.approvals.push_back({out.card, answer, utc_now()});
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
    (void)write_file_atomic(files.log(), text, WriteOptions{0600, false, false});
    end.result.out = worked.empty() ? last : worked;
    return end;
}

/// Wakes a waiter when something lands in a run directory (the supervisor renames every new
/// receipt into place), so that waiting costs no polling; a waiter still looks at least every
/// `timeout` (a supervisor that dies writes nothing). Without inotify it just sleeps a little.
class DirChanges {
public:
    explicit DirChanges(const std::string& dir) : m_fd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) {
        if (m_fd >= 0 && ::inotify_add_watch(m_fd, dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
            ::close(m_fd);
            m_fd = -1;
        }
    }
    ~DirChanges() {
        if (m_fd >= 0) ::close(m_fd);
    }
    DirChanges(const DirChanges&) = delete;
    DirChanges& operator=(const DirChanges&) = delete;

    void wait(std::chrono::milliseconds timeout) const {
        if (m_fd < 0) {
            std::this_thread::sleep_for(std::min(timeout, std::chrono::milliseconds(10)));
            return;
        }
        pollfd p{m_fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(std::max<long>(timeout.count(), 0))) > 0) {
            char events[4096];
            while (::read(m_fd, events, sizeof events) > 0) {
            }
        }
    }

private:
    int m_fd;
};

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
Result<int> take_slot(const json& plan, SharedReceipt& shared, SlotLock& lock) {
    const int slots = plan.value("max_concurrent", 0);
    const std::string dir = plan.value("slots_dir", std::string());
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
std::string check_completion(const adapters::Adapter& adapter, const json& plan,
                             const std::string& task, const Receipt& r, ProcessRunner& runner) {
    const auto args = adapter.completion_export_args(r.harness_session);
    if (args.empty()) return {};
    if (r.harness_session.empty()) return "failed: sonata found no session id to check";
    const Invocation inv = invocation_of(plan);
    ProcessRequest request;
    request.argv = {inv.argv.front()};
    request.argv.insert(request.argv.end(), args.begin(), args.end());
    request.env = child_environment(marked(current_environment(), r), inv);
    request.cwd = plan.at("cwd").get<std::string>();
    request.timeout = std::chrono::seconds(plan.value("completion_timeout_s", 30L));
    request.max_output_bytes = 16U << 20U;
    auto exported = runner.run(request);
    if (!exported) return "failed: the session export could not start: " + exported.error().message;
    if (exported->timed_out) return "failed: the session export did not finish in time";
    if (exported->exit_code != 0)
        return "failed: the session export exited " + std::to_string(exported->exit_code);
    const std::string why = adapter.check_completion(exported->out, r.harness_session, task);
    return why.empty() ? "verified" : "failed: " + why;
}

bool supervisor_alive(const Receipt& r) {
    return r.supervisor_pid > 0 && start_time_of(r.supervisor_pid) == r.supervisor_start;
}

} // namespace

Result<std::string> start_run(const StartRequest& request) {
    auto dir = prepare_run(request);
    if (!dir) return dir;
    auto spawned = spawn_detached({request.sonata_path, "supervise", *dir}, request.env,
                                  *dir + "/supervisor.log");
    if (!spawned) return tl::unexpected(spawned.error());
    return dir;
}

Result<std::string> prepare_run(const StartRequest& request) {
    if (!request.decision.runs())
        return fail(ExitCode::refused, "internal error: start_run on a refusal");
    auto id = create_run_dir(request.runs_root);
    if (!id) return tl::unexpected(id.error());
    const RunFiles files{request.runs_root + "/" + *id};
    StartRequest filled = request;
    filled.receipt.id = *id;
    const std::string text = instructions(filled, files);
    const WriteOptions owner_only{0600, false, false};
    if (auto ok = write_file_atomic(files.instructions(), text, owner_only); !ok)
        return tl::unexpected(ok.error());
    if (auto ok = write_file_atomic(files.plan(), plan_json(filled).dump(2) + "\n", owner_only);
        !ok) {
        return tl::unexpected(ok.error());
    }
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
    if (auto ok = save_receipt(files.dir, r); !ok) return tl::unexpected(ok.error());
    return files.dir;
}

int supervise(const std::string& dir, ProcessRunner& runner) {
    const RunFiles files{dir};
    auto receipt = load_receipt(dir);
    auto plan = load_plan(files);
    auto prompt = read_file_bounded(files.instructions(), k_max_plan_bytes);
    if (!receipt || !plan || !prompt) return to_int(ExitCode::bad_data);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return to_int(ExitCode::failure);
    const pid_t dog = ::fork(); // before any thread exists
    if (dog == 0) {
        ::close(pipe_fds[1]);
        watchdog(dir, pipe_fds[0]);
    }
    ::close(pipe_fds[0]);
    for (const int sig : {SIGTERM, SIGINT, SIGHUP})
        std::signal(sig, on_stop_signal);
    SharedReceipt shared{dir, *receipt, {}, 0, {}};
    shared.update([&](Receipt& r) {
        r.supervisor_pid = static_cast<int>(::getpid());
        r.supervisor_start = start_time_of(r.supervisor_pid);
    });
    const auto adapter = adapters::find_adapter(receipt->harness);
    const adapters::Adapter* a = adapter ? *adapter : nullptr;
    Result<HarnessEnd> result = fail(ExitCode::failure, "not started");
    Fingerprint before;
    const std::string cwd = plan->at("cwd").get<std::string>();
    SlotLock slot;
    if (auto taken = take_slot(*plan, shared, slot); !taken) {
        result = tl::unexpected(taken.error());
    } else if (g_cancel.load()) {
        result = HarnessEnd{ProcessResult{}, false, false};
        result->result.cancelled = true;
    } else {
        shared.update([&](Receipt& r) {
            r.state = RunState::running;
            r.queue_slot = *taken;
            r.started_at = utc_now();
        });
        before = fingerprint(cwd);
        const bool tui = plan->value("interactive", false);
        result = tui ? run_tui(*plan, shared, files, runner)
                     : run_headless(*plan, *prompt, shared, files, runner);
        if (const std::string why = retry_reason(a, result, shared.abandoned); !why.empty()) {
            shared.update([&](Receipt& r) {
                r.retries.push_back({why, result->result.exit_code, utc_now()});
            });
            const std::string note = "\n[sonata: " + why + "; starting the run once more]\n";
            BoundedLog(files.log(), plan->at("log_cap").get<std::size_t>()).write(note);
            result = run_headless(*plan, *prompt, shared, files, runner);
        }
    }
    const int leftovers = kill_leftovers(receipt->id);
    const Fingerprint after = fingerprint(cwd);
    const auto env = current_environment();
    const auto home_it = env.find("HOME");
    const std::string home = home_it == env.end() ? "" : home_it->second;
    std::string session;
    RunCost cost;
    if (result && a != nullptr) {
        session = a->session_id(result->result.out, result->result.err, home);
        cost = a->run_cost(result->result.out, result->result.err, home);
        // A structured stdout (claude's result JSON) holds the final message; the rest of it
        // stays in harness.log.
        if (plan->value("report", std::string()) == to_string(ReportSource::structured_stdout))
            result->result.out = a->final_message(result->result.out).value_or("");
    }
    shared.update([&](Receipt& r) {
        r.ended_at = utc_now();
        if (!result) {
            r.state = RunState::failed;
            r.degraded = true;
            r.degraded_reason = result.error().message;
            r.report_source = "none";
            return;
        }
        conclude(r, *result, g_cancel.load(), shared.abandoned, files);
        if (r.started_at.empty()) r.exit_code.reset(); // cancelled while queued: nothing ran
        if (!r.started_at.empty()) r.files_changed = changes(before, after);
        if (after.truncated) r.note = "the workspace has too many files to fingerprint them all";
        if (r.role_kind == "write" && r.files_changed.empty() && r.state == RunState::done) {
            r.note = "a write role whose run changed nothing in the workspace";
        }
        if (leftovers > 0) {
            r.note += std::string(r.note.empty() ? "" : "; ") + "killed " +
                      std::to_string(leftovers) +
                      " process(es) the harness left running outside its process group";
        }
        r.harness_session = session;
        r.cost = cost;
        if (r.state == RunState::failed && r.budget_enforced && r.max_budget_usd && r.cost.usd &&
            *r.cost.usd >= *r.max_budget_usd) {
            r.degraded_reason = fmt::format("stopped at its budget: it spent ${:.4f} ({}) of the "
                                            "${:.2f} allowed; {}",
                                            *r.cost.usd, to_string(r.cost.source),
                                            *r.max_budget_usd, r.degraded_reason);
        }
    });
    if (a != nullptr && shared.receipt.state == RunState::done) {
        const std::string verdict = check_completion(*a, *plan, *prompt, shared.receipt, runner);
        shared.update([&](Receipt& r) {
            r.completion = verdict;
            if (verdict.rfind("failed: ", 0) == 0) {
                r.state = RunState::failed;
                r.degraded = true;
                r.degraded_reason = r.harness +
                                    " exited 0 but its own record of the session says "
                                    "the run did not complete: " +
                                    verdict.substr(8);
            }
        });
    }
    const Receipt& final_receipt = shared.receipt;
    const std::string sentinel =
        std::string(to_string(final_receipt.state)) + " " +
        (final_receipt.exit_code ? std::to_string(*final_receipt.exit_code) : "-") + "\n";
    (void)write_file_atomic(files.exit_sentinel(), sentinel, WriteOptions{0600, true, false});
    ::unlink(files.pgid().c_str());
    ::close(pipe_fds[1]); // the watchdog finds the run final and leaves
    while (::waitpid(dog, nullptr, 0) < 0 && errno == EINTR) {
    }
    return 0;
}

Result<Receipt> run_status(const std::string& dir) {
    auto receipt = load_receipt(dir);
    if (!receipt || is_final(receipt->state)) return receipt;
    if (receipt->supervisor_pid == 0) {
        std::error_code ec;
        const auto age =
            fs::file_time_type::clock::now() - fs::last_write_time(dir + "/receipt.json", ec);
        if (ec || age < k_start_grace) return receipt;
    } else if (supervisor_alive(*receipt)) {
        return receipt;
    }
    // The supervisor is gone and its watchdog did not mark the run: do its job.
    mark_lost(*receipt);
    (void)save_receipt(dir, *receipt); // a run directory that cannot be written still reads lost
    return receipt;
}

Result<Receipt> wait_run(const std::string& dir, std::chrono::milliseconds window) {
    const auto deadline = Clock::now() + window;
    const DirChanges changes(dir);
    // A run already stalled when the wait begins is waited on until it moves (or stalls again).
    bool stall_counts = true;
    for (bool first = true;; first = false) {
        while (::waitpid(-1, nullptr, WNOHANG) > 0) { // a supervisor adopted by this subreaper
        }
        auto receipt = run_status(dir);
        if (!receipt) return receipt;
        const RunState s = receipt->state;
        if (first && s == RunState::stalled) stall_counts = false;
        if (s != RunState::stalled) stall_counts = true;
        // A final receipt is saved just before the `exit` sentinel: a run is returned as ended
        // once its sentinel is there too, or its supervisor is gone (a lost run has none).
        const bool ended =
            is_final(s) && (::access(RunFiles{dir}.exit_sentinel().c_str(), F_OK) == 0 ||
                            !supervisor_alive(*receipt));
        if (ended || s == RunState::paused || (s == RunState::stalled && stall_counts) ||
            Clock::now() >= deadline) {
            return receipt;
        }
        changes.wait(
            std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()),
                     std::chrono::milliseconds(250)));
    }
}

Result<Receipt> cancel_run(const std::string& dir) {
    auto receipt = run_status(dir);
    if (!receipt || is_final(receipt->state)) return receipt;
    if (receipt->supervisor_pid > 0 && supervisor_alive(*receipt))
        ::kill(receipt->supervisor_pid, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    for (;;) { // until final: a paused or stalled run is not yet cancelled
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        receipt = run_status(dir);
        if (!receipt || is_final(receipt->state) || Clock::now() >= deadline) return receipt;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

Result<Receipt> approve_run(const std::string& dir, bool yes, std::chrono::milliseconds window) {
    auto receipt = run_status(dir);
    if (!receipt) return receipt;
    if (receipt->state != RunState::paused) {
        return fail(ExitCode::usage, "run " + receipt->id + " is " +
                                         std::string(to_string(receipt->state)) +
                                         ", not paused: it shows no card to answer");
    }
    const RunFiles files{dir};
    const std::size_t answered = receipt->approvals.size();
    if (auto ok = write_file_atomic(files.answer(),
                                    std::string(yes ? "yes" : "no") + "\n" + receipt->prompt,
                                    WriteOptions{0600, false, false});
        !ok) {
        return tl::unexpected(ok.error());
    }
    const auto deadline = Clock::now() + window;
    for (;;) {
        auto now = run_status(dir);
        if (!now) return now;
        if (now->approvals.size() > answered || is_final(now->state)) return now;
        if (Clock::now() >= deadline) {
            ::unlink(files.answer().c_str());
            return fail(ExitCode::failure,
                        "run " + now->id + ": the supervisor did not take the answer in time");
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
