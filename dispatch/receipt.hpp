// A run's record, receipt.json in its run directory (versioned schema, documented in the README):
// what was decided and run, how it went, and where its report came from. The supervisor writes
// it (atomically, at every change of state); every other command only reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cost.hpp"
#include "core/enum_names.hpp"
#include "core/mode.hpp"
#include "core/result.hpp"

namespace sonata {
struct Decision;
}

namespace sonata::dispatch {

/// A run's state. Spellings are receipt keys and `status` output: never rename.
enum class RunState {
    starting,  ///< The run directory exists; the supervisor has not started the harness yet.
    queued,    ///< The supervisor waits for a slot: the harness's `max_concurrent` runs are busy.
    running,   ///< The harness runs.
    paused,    ///< The harness waits on an approval card (prompt holds its text).
    stalled,   ///< No output for the stall limit; the harness still runs.
    done,      ///< The harness exited and the run has its report.
    failed,    ///< The harness could not start, crashed, exited non-zero, or left no report.
    timed_out, ///< The supervisor killed the harness at the timeout.
    cancelled, ///< `sonata cancel` killed it.
    lost,      ///< The supervisor died before it finished the run.
};

std::string_view to_string(RunState state);
Result<RunState> parse_run_state(std::string_view text);

/// Where a run's report came from. Spellings are receipt values: never rename.
enum class ReportOrigin {
    pending,         ///< The run has not ended yet ("").
    report_file,     ///< The harness wrote report.md ("report.md").
    final_message,   ///< The end of a write role's output ("final-message").
    terminal_output, ///< The end of a read-only role's output ("terminal-output").
    pane_text,       ///< The TUI's screen ("pane-text").
    none,            ///< The run left no report ("none").
};

inline constexpr EnumNames<ReportOrigin, 6> k_report_origins{{
    {"", ReportOrigin::pending},
    {"report.md", ReportOrigin::report_file},
    {"final-message", ReportOrigin::final_message},
    {"terminal-output", ReportOrigin::terminal_output},
    {"pane-text", ReportOrigin::pane_text},
    {"none", ReportOrigin::none},
}};

std::string_view to_string(ReportOrigin origin);

/// What the adapter's completion check of a `done` run found.
enum class CompletionCheck {
    none,     ///< The adapter has no completion check, or the run did not end `done` ("").
    verified, ///< The harness's own record says the run completed ("verified").
    failed,   ///< It says the run did not complete, or it could not be read ("failed: <why>").
};

/// The completion check as a receipt records it.
struct Completion {
    CompletionCheck check = CompletionCheck::none;
    std::string why = {}; ///< failed: why.

    bool operator==(const Completion&) const = default;
};

/// "", "verified" or "failed: <why>".
std::string to_string(const Completion& completion);
/// The inverse of to_string; bad_data for anything else.
Result<Completion> parse_completion(std::string_view text);

/// True for done, failed, timed-out, cancelled and lost: nothing runs any more.
bool is_final(RunState state);

/// A probe the decision relied on, as the gate found it.
struct ReliedProbe {
    std::string probe;
    std::string verdict; ///< A verdict spelling, or "unmeasured".
    std::string key;     ///< The matrix key looked up.

    bool operator==(const ReliedProbe&) const = default;
};

/// An approval card a paused run showed and the answer `sonata approve` gave it.
struct Approval {
    std::string card;   ///< The card's text, as `prompt` held it.
    std::string answer; ///< "yes" or "no".
    std::string at;     ///< ISO 8601 UTC.
    /// Who answered: the approving process as the supervisor saw it on its socket ("pid N uid U:
    /// command line"), never a process of the run itself.
    std::string by = {};

    bool operator==(const Approval&) const = default;
};

/// A harness dispatch passed over before the one that ran.
struct Attempt {
    std::string harness;
    std::string why;
    std::string run = {}; ///< The run it started, when it ran and finished with no report.

    bool operator==(const Attempt&) const = default;
};

/// A harness run the supervisor started again, and why.
struct Retry {
    std::string why; ///< The infrastructure failure the adapter read in its output.
    std::optional<int> exit_code;
    std::string at; ///< ISO 8601 UTC, when the retry started.

    bool operator==(const Retry&) const = default;
};

/// A run in a git worktree of its own: where, on which branch, from which base.
struct WorktreeRecord {
    std::string path;          ///< REPO/.sonata/worktrees/<id>
    std::string branch;        ///< sonata/<id>
    std::string repo;          ///< The user's repository, where the changes apply.
    std::string base_head;     ///< The commit HEAD named when the run started.
    std::string base_snapshot; ///< HEAD plus the uncommitted state then (base_head when clean).
    bool base_dirty = false;
    std::string head = {}; ///< The worktree's HEAD when the run ended; empty before.

    bool operator==(const WorktreeRecord&) const = default;
};

struct Receipt {
    static constexpr int k_schema = 1;
    int schema = k_schema;
    std::string id;
    std::string harness;
    std::string version;
    std::string mode; ///< The effective mode the harness ran in.
    std::string role; ///< The role's name.
    RoleKind role_kind = RoleKind::read_only;
    std::string parent_mode;          ///< The parent session's mode.
    std::string parent_mode_source;   ///< "--mode", "session-file" or "default".
    std::string session_id;           ///< The parent session looked up; empty when none.
    std::vector<std::string> argv;    ///< As run, the prompt included when it is an argument.
    std::vector<std::string> env_set; ///< Names only: values may be secrets.
    std::vector<std::string> env_unset;
    std::string cwd;
    std::string prompt_channel;
    bool interactive = false;
    std::vector<ReliedProbe> relied_on;
    std::vector<std::string> warnings; ///< The decision's and the gate's, as plan printed them.
    std::string started_at;            ///< ISO 8601 UTC; empty until the harness started.
    std::string ended_at;
    std::optional<int> exit_code;
    int term_signal = 0;
    bool timed_out = false;
    RunState state = RunState::starting;
    std::string prompt;              ///< paused: the approval card's text.
    std::vector<Approval> approvals; ///< Cards answered so far, oldest first.
    ReportOrigin report_source = ReportOrigin::pending;
    bool degraded = false;
    std::string degraded_reason;
    bool log_capped = false;     ///< harness.log reached its cap; the rest was dropped.
    std::string harness_session; ///< The harness's own session id, for resume; empty when unknown.
    std::string resumed_from = {}; ///< The run whose harness session this one continues.
    /// A ranked role's harnesses tried before this one, and why dispatch moved on.
    std::vector<Attempt> attempts = {};
    std::optional<double> max_budget_usd = {}; ///< The budget asked for; absent when none.
    bool budget_enforced = false;              ///< The harness itself enforces max_budget_usd.
    RunCost cost = {};               ///< From the harness's own output; unknown is never 0.
    std::vector<Retry> retries = {}; ///< Infrastructure failures retried (agy only), oldest first.
    /// The adapter's completion check (opencode); failed degrades the run.
    Completion completion = {};
    int queue_slot = -1; ///< The `max_concurrent` slot the run held; -1: no limit.
    std::vector<std::string> files_changed;      ///< In the workspace, .sonata/ and .git/ excluded.
    std::optional<WorktreeRecord> worktree = {}; ///< A run in a worktree of its own.
    std::string note; ///< A remark on the run (e.g. a write role that changed nothing).
    int supervisor_pid = 0;
    std::uint64_t supervisor_start =
        0; ///< Its start time (/proc stat field 22), against pid reuse.
    int harness_pgid = 0;
    int tmux_server_pid = 0; ///< A TUI run's private tmux server.
    std::uint64_t tmux_server_start = 0;
    std::string tmux_socket; ///< A TUI run: its tmux server's socket (`sonata attach` checks it).

    bool operator==(const Receipt&) const = default;
};

/// A receipt holding what `decision` fixes: harness, version, effective mode, role, the parent's
/// mode and the decision's warnings.
Receipt receipt_for(const Decision& decision);

std::string receipt_to_json(const Receipt& receipt);

/// Now, as a receipt records times: ISO 8601 UTC.
std::string utc_now();

/// Strict parse; anything unexpected is ExitCode::bad_data naming `source`.
Result<Receipt> parse_receipt(std::string_view text, const std::string& source);

class RunDirectory;

/// Reads DIR/receipt.json (bounded, a regular file, never through a link); a receipt whose id is
/// not its directory's name is bad_data: a receipt planted under another run's name.
Result<Receipt> load_receipt(const RunDirectory& dir);
Result<Receipt> load_receipt(const std::string& run_dir);

/// Replaces DIR/receipt.json atomically.
Result<void> save_receipt(const RunDirectory& dir, const Receipt& receipt);
Result<void> save_receipt(const std::string& run_dir, const Receipt& receipt);

} // namespace sonata::dispatch
