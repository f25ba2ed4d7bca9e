// The system host's kills, through /proc: a process counts as a run's only when it belongs to this
// user and carries the run's marker, and a pid is believed only with its start time.
#pragma once

#include <string>

namespace sonata {

/// True when process `pid` belongs to this user and carries run `run_id`'s marker.
bool carries_marker(int pid, const std::string& run_id);

/// RunHost::kill_descendants on this machine.
int kill_own_descendants(int keep);

/// RunHost::kill_marked_group on this machine.
void kill_marked_group(int pgid, const std::string& run_id);

/// RunHost::kill_marked_process on this machine.
void kill_marked_process(int pid, unsigned long long start_time, const std::string& run_id,
                         const std::string& argument);

} // namespace sonata
