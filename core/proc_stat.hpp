// /proc/<pid>/stat, read once and split: the one place sonata parses it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sonata {

/// The fields of /proc/<pid>/stat after the command name, so that element 0 is field 3 (state),
/// element 1 field 4 (parent pid), and element N field N + 3; nullopt when the process is gone
/// or the line cannot be read. The command name, which may hold spaces and ')', is skipped.
std::optional<std::vector<std::string>> proc_stat_fields(int pid);

} // namespace sonata
