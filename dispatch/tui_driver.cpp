// The TUI driver's loop: poll the pane, recognise cards by the adapter's patterns, answer, type.
#include "dispatch/tui_driver.hpp"

#include <algorithm>
#include <thread>
#include <vector>

namespace sonata::dispatch {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// The start of a typed text that shows on the screen once typed (and stays in the task box while
/// the text waits there): its first 24 characters.
std::string_view echo_of(const std::string& typed) { return std::string_view(typed).substr(0, 24); }

class Driver {
public:
    Driver(TmuxSession& tui, const adapters::ScreenPatterns& patterns, const TuiPolicy& policy)
        : m_tui(tui), m_patterns(patterns), m_policy(policy), m_prompt_sent(policy.prompt_sent),
          m_answered(policy.answered_card), m_answered_at(Clock::now()) {}

    TuiOutcome run(const std::string& prompt, Clock::time_point deadline,
                   const std::atomic<bool>* cancel) {
        while (Clock::now() < deadline) {
            if (cancel != nullptr && cancel->load()) return end(TuiEnd::cancelled);
            auto screen = m_tui.capture();
            auto status = m_tui.status();
            if (!screen || !status) {
                m_out.error = !screen ? screen.error().message : status.error().message;
                return end(TuiEnd::error);
            }
            m_out.screen = *screen;
            if (m_policy.on_poll) m_policy.on_poll(*screen);
            if (status->exited) {
                m_out.exit_code = status->exit_code;
                m_out.term_signal = status->term_signal;
                return end(TuiEnd::exited);
            }
            if (auto done = step(*screen, prompt)) return end(*done);
            if (m_prompt_sent && m_policy.finished && m_policy.finished()) {
                std::this_thread::sleep_for(milliseconds(500));
                if (auto last = m_tui.capture()) m_out.screen = *last;
                return end(TuiEnd::finished);
            }
            std::this_thread::sleep_for(milliseconds(100));
        }
        return end(TuiEnd::timed_out);
    }

private:
    /// Reacts to one screen; a value when the drive ends here.
    std::optional<TuiEnd> step(const std::string& screen, const std::string& prompt) {
        if (!screen_shows(screen, m_patterns.approval)) m_answered.clear();
        if (screen_shows(screen, m_patterns.approval) && m_prompt_sent) {
            std::string card = approval_card(screen, m_patterns);
            if (!m_answered.empty() && card == m_answered) { // still closing, or the key was lost
                answer_again_if_lost();
                return std::nullopt;
            }
            m_out.card = std::move(card);
            m_out.approval_seen = true;
            seen("approval", screen);
            // A failed deny is seen on the next poll of whoever continues: the card still shows.
            if (m_policy.on_approval == OnApproval::decline)
                (void)m_tui.send_keys(m_patterns.deny_keys);
            return TuiEnd::approval;
        }
        if (screen_shows(screen, m_patterns.decline) && !m_patterns.decline_keys.empty()) {
            // A question sonata answers "no" (codex's review of repository hooks); like the trust
            // card it can swallow a typed task, which is typed again afterwards. Keys that move a
            // selection are not idempotent: a card still showing right after the answer is left
            // alone for a while rather than answered twice.
            if (m_out.decline_seen && Clock::now() - m_declined_at < std::chrono::seconds(3))
                return std::nullopt;
            if (!m_out.decline_seen) seen("decline", screen);
            m_out.decline_seen = true;
            m_declined_at = Clock::now();
            answer_card(m_patterns.decline_keys);
            return std::nullopt;
        }
        if (screen_shows(screen, m_patterns.trust)) {
            // Some TUIs (codex 0.171) put the trust card up only once a task is typed: the task is
            // lost with it, so it is typed again after the answer.
            if (!m_out.trust_seen) seen("trust", screen);
            m_out.trust_seen = true;
            if (m_policy.stop_at_trust || m_patterns.trust_keys.empty()) return TuiEnd::trust;
            answer_card(m_patterns.trust_keys);
            return std::nullopt;
        }
        if (!m_prompt_sent &&
            (m_typed > 0 || m_patterns.ready.empty() || screen_shows(screen, m_patterns.ready))) {
            type_prompt(screen, prompt);
        }
        submit_again_if_lost(screen, prompt);
        return std::nullopt;
    }

    /// A submit key the TUI lost (codex 0.171 did, under load, more than once in a row) leaves the
    /// task in the box and the model never reached: after a while the task is submitted again (see
    /// submit_lost), at most five more times. Only the drive that typed the task does this.
    void submit_again_if_lost(const std::string& screen, const std::string& prompt) {
        constexpr int k_submits = 6;
        constexpr auto k_wait = std::chrono::seconds(8);
        if (m_submits == 0 || m_submits >= k_submits || Clock::now() - m_submitted_at < k_wait)
            return;
        const bool turn_seen = !m_policy.model_reached || m_policy.model_reached();
        if (!submit_lost(screen, m_patterns, prompt, turn_seen)) return;
        (void)m_tui.send_keys(m_patterns.submit_keys);
        m_submitted_at = Clock::now();
        ++m_submits;
    }

    /// The card answered before this drive began still shows, unchanged, well after its answer's
    /// keys (a redrawing TUI keeps it up a second or so): the keys were lost, and are sent again,
    /// at most twice. Only while that very card shows: once it is gone, its text is a new card.
    void answer_again_if_lost() {
        constexpr int k_resends = 2;
        constexpr auto k_wait = std::chrono::seconds(5);
        if (m_policy.answer_keys.empty() || m_resends >= k_resends ||
            Clock::now() - m_answered_at < k_wait)
            return;
        (void)m_tui.send_keys(m_policy.answer_keys);
        m_answered_at = Clock::now();
        ++m_resends;
    }

    /// Types the prompt and submits it once the screen echoes it. Some TUIs drop keys typed while
    /// they finish starting up (codex 0.171 drops the first text typed), so text that does not
    /// show within a few seconds is typed again; after three tries it is submitted as is.
    void type_prompt(const std::string& screen, const std::string& prompt) {
        constexpr int k_tries = 3;
        if (m_typed > 0 &&
            (screen.find(echo_of(prompt)) != std::string::npos || m_typed >= k_tries)) {
            // A lost Enter leaves the task in the box: submit_again_if_lost sends it again.
            (void)m_tui.send_keys(m_patterns.submit_keys);
            m_prompt_sent = true;
            m_submitted_at = Clock::now();
            m_submits = 1;
            seen("submitted", screen);
            return;
        }
        if (m_typed > 0 && Clock::now() - m_typed_at < std::chrono::seconds(3)) return;
        if (m_typed == 0) seen("ready", screen);
        (void)m_tui.type_text(prompt); // text that did not arrive is typed again (above)
        m_typed_at = Clock::now();
        ++m_typed;
    }

    /// Answers a card with `keys`. A card that came up before the model was reached may have
    /// swallowed the typed task, so the task is then typed again.
    void answer_card(const std::vector<std::string>& keys) {
        (void)m_tui.send_keys(keys); // a card still showing is answered again on a later poll
        if (!m_policy.model_reached || !m_policy.model_reached()) {
            m_prompt_sent = false;
            m_typed = 0;
        }
        std::this_thread::sleep_for(milliseconds(300));
    }

    void seen(const std::string& what, const std::string& screen) const {
        if (m_policy.on_screen) m_policy.on_screen(what, screen);
    }

    TuiOutcome end(TuiEnd how) {
        m_out.end = how;
        return m_out;
    }

    TmuxSession& m_tui;
    const adapters::ScreenPatterns& m_patterns;
    const TuiPolicy& m_policy;
    TuiOutcome m_out;
    bool m_prompt_sent = false;
    std::string m_answered;
    Clock::time_point m_answered_at; ///< When the answered card's keys were last sent.
    int m_resends = 0;               ///< Times they were sent again.
    int m_typed = 0;
    Clock::time_point m_typed_at{};
    Clock::time_point m_declined_at{};
    int m_submits = 0; ///< Submit keys sent for the task this drive typed.
    Clock::time_point m_submitted_at{};
};

} // namespace

bool screen_shows(const std::string& screen, const std::vector<std::string>& needles) {
    return std::any_of(needles.begin(), needles.end(), [&](const std::string& n) {
        return !n.empty() && screen.find(n) != std::string::npos;
    });
}

bool typed_text_waits(const std::string& screen, const adapters::ScreenPatterns& patterns,
                      const std::string& typed) {
    if (patterns.input_marker.empty() || typed.empty()) return false;
    std::string box;
    for (std::size_t at = 0; at < screen.size();) {
        const auto end = std::min(screen.find('\n', at), screen.size());
        const std::string_view line(screen.data() + at, end - at);
        const auto text = line.find_first_not_of(' ');
        if (text != std::string_view::npos &&
            line.substr(text).starts_with(patterns.input_marker)) {
            const auto rest = line.substr(text + patterns.input_marker.size());
            const auto typed_at = rest.find_first_not_of(' ');
            box = typed_at == std::string_view::npos ? std::string()
                                                     : std::string(rest.substr(typed_at));
        }
        at = end + 1;
    }
    return box.starts_with(echo_of(typed));
}

bool submit_lost(const std::string& screen, const adapters::ScreenPatterns& patterns,
                 const std::string& typed, bool turn_seen) {
    if (patterns.input_marker.empty()) return !turn_seen;
    return typed_text_waits(screen, patterns, typed) && !screen_shows(screen, patterns.busy);
}

std::string approval_card(const std::string& screen, const adapters::ScreenPatterns& patterns) {
    constexpr std::size_t k_lines_above = 4;
    std::vector<std::string> lines;
    for (std::size_t at = 0; at <= screen.size();) {
        const auto end = std::min(screen.find('\n', at), screen.size());
        std::string line = screen.substr(at, end - at);
        line.erase(line.find_last_not_of(" \t\r") + 1);
        lines.push_back(std::move(line));
        at = end + 1;
    }
    std::size_t first = lines.size();
    for (std::size_t i = 0; i < lines.size() && first == lines.size(); ++i) {
        if (screen_shows(lines[i], patterns.approval)) first = i;
    }
    if (first == lines.size()) return {};
    std::size_t last = lines.size();
    while (last > first + 1 && lines[last - 1].empty())
        --last;
    std::string card;
    for (std::size_t i = first > k_lines_above ? first - k_lines_above : 0; i < last; ++i) {
        if (card.empty() && lines[i].empty()) continue;
        // A spinner under the card ("⣻  checking · 0s") changes every frame: not the card.
        if (screen_shows(lines[i], patterns.busy)) continue;
        card += lines[i] + "\n";
    }
    return card;
}

TuiOutcome drive_tui(TmuxSession& tui, const adapters::ScreenPatterns& patterns,
                     const std::string& prompt, const TuiPolicy& policy,
                     std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>* cancel) {
    return Driver(tui, patterns, policy).run(prompt, deadline, cancel);
}

} // namespace sonata::dispatch
