// The one TUI driver, for dispatches and probe cells alike: it reads the screen of a harness
// running in tmux with the adapter's screen patterns, answers the folder-trust card yes (the
// workspace is the user's), declines the cards the adapter lists as never to accept, types the
// task once the TUI is ready, and stops at an approval card — declining it (a probe records
// `asked`) or leaving it up for the user (a dispatch is then `paused`), as the policy says.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"
#include "core/tmux.hpp"

namespace sonata::dispatch {

/// What the driver does when an approval card shows after the task was sent.
enum class OnApproval {
    decline, ///< Send the adapter's deny keys and stop (the probe policy: the harness asked).
    pause,   ///< Leave the card up and stop (the dispatch policy: the run is paused for the user).
};

/// How one run is driven.
struct TuiPolicy {
    OnApproval on_approval = OnApproval::pause;
    /// Stop at the trust card instead of answering it (the trust-dialog probe looks at it).
    bool stop_at_trust = false;
    /// The task was typed and submitted by an earlier drive of this session (a dispatch goes on
    /// driving after an answered approval card).
    bool prompt_sent = false;
    /// The card (approval_card's text) answered last: while it still shows it is not reported
    /// again; once it is gone, the same text is a new card.
    std::string answered_card;
    /// The keys that answered it: sent again while the card still shows well after them, since a
    /// TUI under load can lose a key (codex 0.171 loses typed text and submit keys).
    std::vector<std::string> answer_keys;
    /// Called with every screen polled (a dispatch's stall clock and turn tracking); may be empty.
    std::function<void(const std::string& screen)> on_poll;
    /// True once the work is done (the model finished, the report landed): the driver then stops.
    std::function<bool()> finished;
    /// True once the harness reached the model. A card answered before that may have swallowed the
    /// typed task, which is then typed again.
    std::function<bool()> model_reached;
    /// Called once per kind of screen the driver recognises ("ready", "trust", "decline",
    /// "approval"), for captured evidence; may be empty.
    std::function<void(const std::string& what, const std::string& screen)> on_screen;
};

/// How the drive ended.
enum class TuiEnd {
    exited,    ///< The harness exited (exit_code / term_signal).
    approval,  ///< An approval card showed (declined or left up, per the policy).
    trust,     ///< The trust card showed and the policy stops there, or it has no keys to answer.
    finished,  ///< policy.finished() turned true.
    timed_out, ///< The deadline passed.
    cancelled, ///< The cancel flag turned true.
    error,     ///< tmux failed (error says how).
};

struct TuiOutcome {
    TuiEnd end = TuiEnd::error;
    std::string screen; ///< The last screen seen.
    std::string card;   ///< approval: the card's text (approval_card).
    bool trust_seen = false;
    bool decline_seen = false;
    bool approval_seen = false;
    int exit_code = -1;
    int term_signal = 0;
    std::string error;
};

/// True when `screen` holds one of the (non-empty) `needles`: how every screen pattern is matched.
bool screen_shows(const std::string& screen, const std::vector<std::string>& needles);

/// Whether `typed` still waits in the TUI's task box: the last line of `screen` that starts (after
/// indentation) with the patterns' input_marker holds the start of `typed`. False when the
/// patterns name no marker.
bool typed_text_waits(const std::string& screen, const adapters::ScreenPatterns& patterns,
                      const std::string& typed);

/// Whether the submit of `typed` was lost, as `screen` shows it: the text still waits in the task
/// box and the TUI shows no work, where the patterns name the box's marker (so a screen captured
/// mid-redraw, which once read as a turn, cannot stop the task from being submitted again); else
/// when no sign of a turn (`turn_seen`) showed since the submit.
bool submit_lost(const std::string& screen, const adapters::ScreenPatterns& patterns,
                 const std::string& typed, bool turn_seen);

/// The approval card on `screen`: the lines from a few above the first line that matches one of
/// the approval patterns down to the last non-blank line, right-trimmed; empty when none shows.
std::string approval_card(const std::string& screen, const adapters::ScreenPatterns& patterns);

/// Drives `tui` until one of TuiEnd happens.
TuiOutcome drive_tui(TmuxSession& tui, const adapters::ScreenPatterns& patterns,
                     const std::string& prompt, const TuiPolicy& policy,
                     std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>* cancel);

} // namespace sonata::dispatch
