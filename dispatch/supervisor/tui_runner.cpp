// A TUI harness run: the harness in tmux on a server of the run's own, driven by the TUI driver
// with the dispatch policy. The supervisor tracks the screen (the stall clock hears every change,
// a turn begins when the screen moves after the submit), pauses the run at an approval card until
// an answer arrives on its approval socket, and quits the TUI once the report has landed or the
// model's turn is over; the screens then are the run's log and, when it wrote none, its report.
#include <unistd.h>

#include <memory>
#include <optional>

#include "adapters/registry.hpp"
#include "core/proc_tree.hpp"
#include "core/text.hpp"
#include "core/tmux.hpp"
#include "dispatch/approval_channel.hpp"
#include "dispatch/contract.hpp"
#include "dispatch/launch.hpp"
#include "dispatch/run_processes.hpp"
#include "dispatch/supervisor/harness_runners.hpp"
#include "dispatch/supervisor/run_log.hpp"
#include "dispatch/tui_driver.hpp"

namespace sonata::dispatch {
namespace {

using Clock = std::chrono::steady_clock;

/// Starts the run's tmux server and the harness in it, and records their processes.
Result<std::unique_ptr<TmuxSession>> start_session(const RunPlan& plan, SharedReceipt& shared,
                                                   ProcessRunner& runner) {
    const Invocation& inv = plan.invocation;
    TmuxSpec spec =
        tui_spec(inv, child_environment(marked(current_environment(), shared.receipt), inv),
                 plan.cwd, shared.dir.path());
    spec.server_env = marker_of(shared.receipt);
    auto session = TmuxSession::start(runner, spec);
    if (!session) return session;
    const TmuxSession& tui = **session;
    shared.update([&](Receipt& r) {
        r.harness_pgid = tui.pane_pid();
        r.tmux_server_pid = tui.server_pid();
        r.tmux_server_start = start_time_of(tui.server_pid());
        r.tmux_socket = tui.socket_path();
    });
    return session;
}

/// One TUI run, from the session's start to the quit TUI.
class TuiRun {
public:
    TuiRun(const RunPlan& plan, SharedReceipt& shared, adapters::ScreenPatterns patterns,
           TmuxSession& tui, ApprovalListener& answers)
        : m_shared(shared), m_patterns(std::move(patterns)), m_tui(tui), m_answers(answers),
          m_deadline(Clock::now() + plan.limits.timeout), m_log_cap(plan.limits.log_cap),
          m_stall(shared, plan.limits.stall),
          m_read_only(shared.receipt.role_kind == RoleKind::read_only),
          m_task(typed_task(RunFiles{shared.dir.path()}.instructions())) {
        watch_screens();
    }

    /// Drives the TUI to its end, pausing at each approval card until it is answered.
    Result<HarnessEnd> run() {
        TuiOutcome out;
        for (;;) {
            out = drive_tui(m_tui, m_patterns, m_task, m_policy, m_deadline, &m_shared.cancel);
            m_policy.prompt_sent = m_policy.prompt_sent || !m_submitted_screen.empty();
            if (out.end != TuiEnd::approval) break;
            pause_at(out.card);
        }
        SONATA_TRY(take_end(out));
        keep_screens();
        return m_end;
    }

private:
    static constexpr auto k_turn_quiet = std::chrono::seconds(3);

    /// The policy's view of the screens: every change is heard, the submit is remembered, and a
    /// turn begins when the screen moves after it.
    void watch_screens() {
        m_policy.on_approval = OnApproval::pause;
        m_policy.on_poll = [this](const std::string& screen) {
            if (screen != m_last_screen) {
                m_last_screen = screen;
                m_last_change = Clock::now();
                m_stall.heard();
            }
            // A screen that changed only around a task still in its box (codex 0.171 puts up a
            // late warnings banner) is a submit the TUI lost, not a turn.
            if (!m_submitted_screen.empty() &&
                (screen_shows(screen, m_patterns.busy) ||
                 (screen != m_submitted_screen && !typed_text_waits(screen, m_patterns, m_task))))
                m_turn_began = true;
        };
        m_policy.on_screen = [this](const std::string& what, const std::string& screen) {
            if (what == "submitted") m_submitted_screen = screen.empty() ? " " : screen;
        };
        m_policy.model_reached = [this] { return m_turn_began; };
        m_policy.finished = [this] { return finished(); };
    }

    /// The work is done: the report landed (a write role), or the turn is over and the TUI waits.
    bool finished() const {
        if (!m_read_only) {
            auto report = m_shared.dir.read("report.md", k_max_read_report_bytes);
            if (report && !trimmed(*report).empty()) return true;
        }
        const std::string& screen = m_last_screen;
        // A task still waiting in its box is a submit the TUI lost, whatever moved before.
        return m_turn_began && Clock::now() - m_last_change >= k_turn_quiet &&
               !screen_shows(screen, m_patterns.busy) &&
               !screen_shows(screen, m_patterns.approval) &&
               !typed_text_waits(screen, m_patterns, m_task) &&
               (m_patterns.ready.empty() || screen_shows(screen, m_patterns.ready));
    }

    /// A paused run waits for an answer on its approval socket (from a process that is not the
    /// run's own), the harness's exit, the deadline or a cancel; nullopt when the wait ended
    /// otherwise.
    std::optional<TakenAnswer> await_answer(const std::string& card) {
        while (Clock::now() < m_deadline && !m_shared.cancel.load()) {
            if (auto taken = m_answers.poll(std::chrono::milliseconds(100), card)) return taken;
            auto status = m_tui.status();
            if (!status || status->exited) return std::nullopt;
        }
        return std::nullopt;
    }

    /// The run is paused at `card` until it is answered; the answer's keys go to the TUI.
    void pause_at(const std::string& card) {
        m_shared.update([&](Receipt& r) {
            r.state = RunState::paused;
            r.prompt = card;
        });
        const auto answer = await_answer(card);
        if (!answer) return; // exited, cancelled or timed out: the next drive says
        // A key that does not arrive leaves the card up: the next drive sends it again.
        const auto& keys = answer->yes ? m_patterns.approve_keys : m_patterns.deny_keys;
        (void)m_tui.send_keys(keys);
        m_policy.answered_card = card;
        m_policy.answer_keys = keys;
        m_shared.update([&](Receipt& r) {
            r.approvals.push_back({card, answer->yes ? "yes" : "no", utc_now(), answer->by});
            r.prompt.clear();
            r.state = RunState::running;
        });
        m_stall.heard();
    }

    /// How the harness ended, from how the drive ended; the TUI is quit once the work is done.
    Result<void> take_end(const TuiOutcome& out) {
        m_end.tui = true;
        if (out.end == TuiEnd::finished) {
            // The work is on the screen now: a TUI may clear it when it quits (codex does).
            if (auto history = m_tui.capture_history()) m_worked = *history;
            (void)m_tui.send_keys(m_patterns.quit_keys);
            auto status = m_tui.wait_for_exit(std::chrono::seconds(10));
            m_end.ended_by_sonata = true;
            if (status && status->exited) {
                m_end.result.exit_code = status->exit_code;
                m_end.result.term_signal = status->term_signal;
            }
        } else if (out.end == TuiEnd::exited) {
            m_end.result.exit_code = out.exit_code;
            m_end.result.term_signal = out.term_signal;
        } else if (out.end == TuiEnd::timed_out) {
            m_end.result.timed_out = true;
        } else if (out.end == TuiEnd::trust) {
            return fail(ExitCode::failure,
                        "the TUI asked to trust the folder and sonata has no keys to answer it");
        } else if (out.end == TuiEnd::error) {
            return fail(ExitCode::failure, "the TUI's tmux failed: " + out.error);
        }
        return {};
    }

    /// The report of a TUI that wrote none is its screen when the work was done; what it printed
    /// after sonata quit it (codex: its session id) is kept apart, and both go to the log.
    void keep_screens() {
        auto history = m_tui.capture_history();
        const std::string last = history ? *history : m_last_screen;
        std::string text = m_worked.empty() ? last : m_worked;
        if (!m_worked.empty() && last != m_worked) {
            m_end.result.err = last;
            text += "\n[sonata: quit the TUI]\n" + last;
        }
        if (text.size() > m_log_cap) {
            text = text.substr(text.size() - m_log_cap);
            m_shared.update([](Receipt& r) { r.log_capped = true; });
        }
        (void)m_shared.dir.write("harness.log", text);
        m_end.result.out = m_worked.empty() ? last : m_worked;
    }

    SharedReceipt& m_shared;
    const adapters::ScreenPatterns m_patterns;
    TmuxSession& m_tui;
    ApprovalListener& m_answers;
    const Clock::time_point m_deadline;
    const std::size_t m_log_cap;
    StallClock m_stall;
    const bool m_read_only;
    const std::string m_task;
    std::string m_last_screen;
    std::string m_submitted_screen;
    bool m_turn_began = false; // the screen moved (or showed work) after the task was submitted
    Clock::time_point m_last_change = Clock::now();
    TuiPolicy m_policy;
    HarnessEnd m_end;
    std::string m_worked; // the screen when the work was done
};

} // namespace

Result<HarnessEnd> run_tui(const RunPlan& plan, SharedReceipt& shared, ProcessRunner& runner) {
    const auto adapter = adapters::find_adapter(shared.receipt.harness);
    SONATA_TRY(adapter);
    auto answers = ApprovalListener::listen(
        approval_socket_name(shared.receipt.id, static_cast<int>(::getpid())));
    SONATA_TRY(answers);
    auto session = start_session(plan, shared, runner);
    SONATA_TRY(session);
    TuiRun run(plan, shared, (*adapter)->screen_patterns(), **session, *answers);
    return run.run();
}

} // namespace sonata::dispatch
