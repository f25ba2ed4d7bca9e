// How a supervised run ends on record: the report (report.md, else the harness's output), the
// final state and its degradation, the workspace's changes, notes, and the adapter's completion
// check, all read from how the harness ended.
#pragma once

#include <cstddef>
#include <string>

#include "adapters/adapter.hpp"
#include "core/process.hpp"
#include "dispatch/receipt.hpp"
#include "dispatch/run_dir.hpp"
#include "dispatch/run_plan.hpp"
#include "dispatch/supervisor/shared_receipt.hpp"
#include "dispatch/supervisor/worktree.hpp"

namespace sonata::dispatch {

/// The largest report.md the supervisor reads back.
constexpr std::size_t k_max_read_report_bytes = 64U << 20U;

/// How the harness ended, in the terms the report rules take.
struct HarnessEnd {
    ProcessResult result;
    /// A TUI run: the work was done (report landed, turn over) and sonata quit the TUI itself.
    bool ended_by_sonata = false;
    bool tui = false;
};

/// How the harness's part of the run went.
struct Ran {
    Result<HarnessEnd> result = fail(ExitCode::failure, "not started");
    Fingerprint before;
};

/// The report, the final state and whether the run is degraded, from how the harness ended.
void conclude(Receipt& r, const HarnessEnd& end, bool cancelled, const std::string& abandoned,
              const RunDirectory& dir);

/// The receipt's account of the run's end: state, report, changes, notes, session and cost.
void record_end(Receipt& r, const Ran& ran, const SharedReceipt& shared, const Fingerprint& after,
                int leftovers);

/// A `done` run whose harness's own record says it did not complete is failed.
void record_completion(SharedReceipt& shared, const adapters::Adapter* adapter, const RunPlan& plan,
                       const std::string& task, ProcessRunner& runner);

} // namespace sonata::dispatch
