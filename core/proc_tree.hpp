// The process tree as /proc shows it: a process's parent, owner and command line, and every
// descendant of a process. What sonata kills or believes on a run's behalf is checked here first.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sonata {

/// Every process /proc lists, by pid.
std::vector<int> all_processes();

/// The parent of `pid` (/proc stat field 4); nullopt when the process is gone.
std::optional<int> parent_of(int pid);

/// True when `ancestor` is `pid`'s parent, its parent's parent, and so on up to init.
bool is_descendant_of(int pid, int ancestor);

/// Every process (zombies included) whose chain of parents reaches `ancestor`; not `ancestor`.
std::vector<int> descendants_of(int ancestor);

/// The uid owning process `pid`; nullopt when it is gone.
std::optional<unsigned> owner_of(int pid);

/// True when process `pid` runs and belongs to this user.
bool is_own_process(int pid);

/// The arguments of process `pid` (/proc/<pid>/cmdline); empty when it is gone.
std::vector<std::string> command_line_of(int pid);

/// The command lines of `pid`'s parent, its parent's parent, and so on up to init (at most
/// `depth` of them), nearest first; the chain stops at a process that is gone.
std::vector<std::vector<std::string>> ancestor_command_lines(int pid, std::size_t depth = 32);

/// The start time of `pid` (/proc stat field 22), 0 when it is gone or a zombie: with the pid, it
/// names one process, whatever reuses the pid later.
unsigned long long start_time_of(int pid);

} // namespace sonata
