// The prober: which cells to run for the installed harnesses, running them in parallel, and the
// capability matrix they produce.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "core/parent_reference.hpp"
#include "probes/cell_runner.hpp"

namespace sonata::probes {

/// A harness to probe: its adapter, id, executable and version.
struct ProbeTargetHarness {
    const adapters::Adapter* adapter = nullptr;
    std::string id;
    std::string path;
    std::string version;
    std::vector<std::string> extra_args; ///< The configured `args`, as `sonata plan` adds them.
    std::string path_first; ///< The runtime it needs first on its PATH, as a dispatch puts it.
};

/// The cells sonata uses for one harness: for each (mode, role) whose mapping runs, every probe the
/// mapping relies on, every probe `guards` says the parent guards in that mode, and the
/// informational probes. `only` (probe ids) narrows it when non-empty. A planning error
/// (configured args the planner refuses) is returned, never skipped.
Result<std::vector<CellJob>> plan_cells(const ProbeTargetHarness& harness,
                                        const std::vector<std::string>& only,
                                        const ParentGuards& guards = {});

/// The parent's own cells, where `harness` is the parent (Claude Code): in every mode, the probes
/// its plain invocation relies on (role k_parent_role). Empty for every other harness. They run
/// before the children's, whose cells follow what they measure.
std::vector<CellJob> plan_parent_cells(const ProbeTargetHarness& harness,
                                       const std::vector<std::string>& only);

/// Progress of a run: called after each cell, from worker threads (serialised by the prober).
using CellProgress =
    std::function<void(const CellOutcome& outcome, std::size_t done, std::size_t total)>;

/// Runs every job with at most `jobs` in parallel; returns outcomes in job order.
std::vector<CellOutcome> run_cells(const std::vector<CellJob>& jobs, const CellSettings& settings,
                                   unsigned jobs_n, const CellProgress& progress);

/// A matrix from outcomes, stamped with sonata's version, this machine and the time.
Matrix matrix_from(const std::vector<CellOutcome>& outcomes);

} // namespace sonata::probes
