// A run's processes: the marker every process of a run carries, the check that a process named in
// a receipt (which anything that can write the run directory can plant) really is the run's
// supervisor, and how the processes of a run whose supervisor died are stopped by whoever finds it
// lost. (The supervisor itself stops its run by killing every descendant it has: it is their
// subreaper, so none can leave its tree, whatever its session, group or environment.)
#pragma once

#include <string>

#include "core/process.hpp"
#include "core/run_host.hpp"
#include "dispatch/receipt.hpp"

namespace sonata::dispatch {

/// The environment `base` with run `receipt`'s marker and mode set: SONATA_RUN_ID marks the
/// processes of a run; SONATA_RUN_MODE is the ceiling for a sonata the harness starts in turn.
Environment marked(Environment base, const Receipt& receipt);

/// The marker variable alone, for a process that must carry it without the rest (a run's tmux
/// server).
Environment marker_of(const Receipt& receipt);

/// True when `pid` is the supervisor of the run in directory `dir`: a process of this user running
/// `sonata supervise <dir>` on that very directory (device and inode).
bool is_supervisor_of(int pid, const std::string& dir);

/// For a run whose supervisor is gone: kills what of it may still run, and nothing else — the
/// harness's process group when its leader carries the run's marker (else each member that does),
/// and a TUI run's tmux server when its pid, start time, socket and marker all match.
void kill_what_runs(const Receipt& r, RunHost& host);

/// A run whose supervisor is gone without finishing it: what may still run is killed
/// (kill_what_runs), and the receipt reads `lost`.
void mark_lost(Receipt& r, RunHost& host);

} // namespace sonata::dispatch
