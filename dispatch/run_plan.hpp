// plan.json, the supervisor's orders: what prepare_run decided to run and within which limits,
// written once and read back by `sonata supervise`. The file's fields are one table
// (core/json_record.hpp, in run_plan.cpp); the reader checks every field's type, what the types
// cannot say (a command, absolute paths, bounds) and the document's nesting, so a plan.json
// someone edited is a clear error naming the field, never an exception or a half-read plan.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/decision.hpp"
#include "core/result.hpp"

namespace sonata::dispatch {

/// How long and how large a run may grow.
struct RunLimits {
    std::chrono::seconds timeout{3600}; ///< Then TERM to the group, grace, KILL: timed-out.
    std::chrono::seconds stall{300};    ///< No output this long: stalled (the harness still runs).
    std::size_t log_cap = 16U << 20U;   ///< harness.log stops growing here, with a note.
    /// Runs of this harness that may work at once on this machine (0: no limit); a run beyond it
    /// waits `queued` for one of the slot locks in `slots_dir`.
    int max_concurrent = 0;
    std::string slots_dir = {};
    std::chrono::seconds completion_timeout{30}; ///< Bounds the adapter's completion export.

    bool operator==(const RunLimits&) const = default;
};

/// What the supervisor runs.
struct RunPlan {
    std::string harness;
    /// argv, variables to set and unset, prompt channel, headless or TUI, report source.
    Invocation invocation;
    std::string cwd; ///< The workspace the harness works in.
    RunLimits limits;

    bool operator==(const RunPlan&) const = default;
};

std::string plan_to_json(const RunPlan& plan);

/// Strict parse; anything missing, of the wrong type or out of range is ExitCode::bad_data
/// naming `source` and the field.
Result<RunPlan> parse_plan(std::string_view text, const std::string& source);

} // namespace sonata::dispatch
