// The two ways a supervisor runs its harness: headless (one process, its output logged) and as a
// TUI in tmux, driven by the dispatch policy. Both feed the shared receipt, the bounded log and
// the stall clock, and stop at the plan's timeout or when the run's cancel flag turns true.
#pragma once

#include <string>

#include "core/process.hpp"
#include "dispatch/run_plan.hpp"
#include "dispatch/supervisor/run_end.hpp"
#include "dispatch/supervisor/shared_receipt.hpp"

namespace sonata::dispatch {

/// Runs the harness as the plan says, with `prompt` on its argv or stdin.
Result<HarnessEnd> run_headless(const RunPlan& plan, const std::string& prompt,
                                SharedReceipt& shared, ProcessRunner& runner);

/// Runs a TUI mapping in tmux on a server of the run's own, driven by the dispatch policy:
/// trust answered, never-accept cards declined, approval cards pause the run for the user, and
/// once the report has landed or the model's turn is over, the TUI is quit.
Result<HarnessEnd> run_tui(const RunPlan& plan, SharedReceipt& shared, ProcessRunner& runner);

} // namespace sonata::dispatch
