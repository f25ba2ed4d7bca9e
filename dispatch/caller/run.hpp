// The run lifecycle as the caller sees it: start a run (run directory, instructions, a detached
// supervisor, whose body is dispatch/supervisor/), and the read side every other command uses
// (status with `lost` detection, wait, cancel, approve). The supervisor owns the harness's process
// group, the timeout, the stall clock, the bounded log, the report, the receipt and the `exit`
// sentinel; a watchdog it starts first kills the group and marks the run `lost` if the supervisor
// itself dies.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "core/decision.hpp"
#include "core/process.hpp"
#include "core/run_host.hpp"
#include "dispatch/receipt.hpp"
#include "dispatch/run_plan.hpp"

namespace sonata::dispatch {

/// What to start: a decision that runs, and the task.
struct StartRequest {
    Decision decision; ///< Must run (decision.runs()).
    Receipt receipt;   ///< Pre-filled: parent mode, session, relied-on probes, warnings.
    std::string task;
    std::string cwd; ///< The workspace the harness works in.
    Environment env; ///< sonata's environment; the harness gets it as the plan says.
    std::string runs_root;
    std::string sonata_path; ///< The sonata binary that becomes the supervisor.
    RunLimits limits;
    std::string id = {}; ///< A run directory reserved under runs_root; empty: a new one.
};

/// Creates the run directory (instructions.md, plan.json, receipt.json) and starts the supervisor
/// in a session of its own, so nothing that happens to the caller reaches it. Returns the run's
/// directory; the id is its last component.
Result<std::string> start_run(const StartRequest& request);

/// start_run without the supervisor: the run directory, ready for supervise()
/// (dispatch/supervisor/supervise.hpp).
Result<std::string> prepare_run(const StartRequest& request);

/// The run's receipt; a run whose supervisor is gone without finishing is marked `lost` (and
/// whatever is left of its process group is killed).
Result<Receipt> run_status(const std::string& run_dir);

/// Waits until the run is final, paused or stalled, or `window` passes; returns the receipt then.
Result<Receipt> wait_run(const std::string& run_dir, std::chrono::milliseconds window);

/// Asks the supervisor to stop the run (it kills the group and records `cancelled`); a run
/// already final is left as it is.
Result<Receipt> cancel_run(const std::string& run_dir);

/// `sonata approve`: hands a paused run's supervisor the answer to the card it shows, and returns
/// the receipt once the supervisor has sent the adapter's keys (the run is running again, or
/// paused at the next card, or final). A run that is not paused is a usage error.
Result<Receipt> approve_run(const std::string& run_dir, bool yes, std::chrono::milliseconds window);

/// The exit code `dispatch` and `wait` give for a receipt.
ExitCode exit_code_for(const Receipt& receipt);

} // namespace sonata::dispatch
