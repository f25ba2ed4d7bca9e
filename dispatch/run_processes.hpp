// A run's processes: the marker every process of a run carries, the checks that a process named
// in a receipt (which anything that can write the run directory can plant) really is the run's,
// and the two ways a run's processes are stopped: by the supervisor, which kills every descendant
// it has (it is their subreaper, so none can leave its tree, whatever its session, group or
// environment), and, for a run whose supervisor died, by whoever finds it lost.
#pragma once

#include <string>

#include "core/process.hpp"
#include "dispatch/receipt.hpp"

namespace sonata::dispatch {

/// The environment `base` with run `receipt`'s marker and mode set: SONATA_RUN_ID marks the
/// processes of a run; SONATA_RUN_MODE is the ceiling for a sonata the harness starts in turn.
Environment marked(Environment base, const Receipt& receipt);

/// The marker variable alone, for a process that must carry it without the rest (a run's tmux
/// server).
Environment marker_of(const Receipt& receipt);

/// True when process `pid` belongs to this user and carries run `run_id`'s marker.
bool carries_marker(int pid, const std::string& run_id);

/// True when `pid` is the supervisor of the run in directory `dir`: a process of this user running
/// `sonata supervise <dir>` on that very directory (device and inode).
bool is_supervisor_of(int pid, const std::string& dir);

/// Kills every descendant of this process but `keep` (SIGKILL, reaping the children among them),
/// until none is left; returns how many were running. The supervisor's last word on its run.
int stop_descendants(int keep);

/// For a run whose supervisor is gone: kills what of it may still run, and nothing else — the
/// harness's process group when its leader carries the run's marker (else each member that does),
/// and a TUI run's tmux server when its pid, start time, socket and marker all match.
void kill_what_runs(const Receipt& r);

/// A run whose supervisor is gone without finishing it: what may still run is killed
/// (kill_what_runs), and the receipt reads `lost`.
void mark_lost(Receipt& r);

} // namespace sonata::dispatch
