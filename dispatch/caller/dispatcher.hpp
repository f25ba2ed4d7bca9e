// A dispatch request from start to a running run: planned as `sonata plan` plans it, refused
// exactly when the planner or the gate refuses, else started under a detached supervisor with the
// receipt's relied-on lines and the run's limits; a ranked role tries its harnesses in order. The
// one path `sonata dispatch`, `sonata run` and the MCP dispatch tool share.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "adapters/support/pipeline.hpp"
#include "core/config.hpp"
#include "core/process.hpp"
#include "dispatch/receipt.hpp"

namespace sonata::dispatch {

/// The run directory of `id` under the runs root of work in `cwd`. An empty or hostile id is a
/// usage error: no id ever stands for "the newest run".
Result<std::string> run_dir_of(const std::string& id, const std::string& cwd,
                               const Environment& env);

/// The newest run's directory, for the commands that default to it when no id is given.
Result<std::string> newest_run_dir(const std::string& cwd, const Environment& env);

/// Turns `request` into the continuation of run `run_id` (found under request.cwd's runs root):
/// its harness, role and harness session, and a ceiling at the mode it ran in, so the resumed
/// session is never wider than the run nor than the parent's mode now. A run still going, one
/// without a recorded harness session, or one of another harness than `request.harness` is a
/// usage error saying so.
Result<void> resume_run(adapters::DispatchRequest& request, const std::string& run_id);

/// A planned dispatch: started (run_dir set) or refused by the planner or the gate.
struct DispatchStarted {
    adapters::Planned planned;
    std::string run_dir; ///< Empty when the decision refuses.
    std::string id;
    std::vector<Attempt> passed_over = {}; ///< A ranked role's harnesses before this one.
};

/// Waits for a run to end and returns its final receipt; nullopt when the caller stops waiting
/// first (its window passed, it was cancelled) and the run goes on.
using Settle = std::function<std::optional<Receipt>(const std::string& run_dir)>;

/// Whether a ranked role moves on past a run that ended: it failed with no report (the harness
/// exited, so nothing of it still works in the tree). Never after a cancel, a timeout, a loss, or
/// a run its harness stopped at its budget.
bool falls_through(const Receipt& receipt);

/// Plans `request` as `sonata plan` does and, when the decision runs, starts the run under a
/// detached supervisor. `request.cwd` and `request.env` must be set. A role with a ranked list
/// (`harnesses = [...]`) and no --harness tries each in order, moving on when the gate or the
/// planner refuses one or its supervisor cannot start, or, with `settle`, when its run ends
/// failed with no report (falls_through); never while a run may still work.
Result<DispatchStarted> start_dispatch(const adapters::DispatchRequest& request,
                                       const std::string& task, const Config& config,
                                       std::optional<std::chrono::seconds> timeout,
                                       const Settle& settle = {});

} // namespace sonata::dispatch
