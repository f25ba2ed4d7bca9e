// The list of the project .mcp.json files `sonata init` created, so that --remove deletes only
// those: a file the project had before init keeps what taking sonata's server out leaves.
#pragma once

#include <string>
#include <vector>

#include "core/process.hpp"
#include "core/result.hpp"

namespace sonata::cli {

/// Where init lists each project .mcp.json it created, one absolute path a line: --remove deletes
/// only those, so a file the project had before init keeps what taking sonata's server out leaves.
/// Empty without a machine config dir (init then deletes no .mcp.json).
std::string created_list(const Environment& env);

/// The files on the list; none when it is empty or not there yet.
std::vector<std::string> listed_files(const std::string& list);

/// Whether `file` is on the list.
bool is_listed(const std::string& list, const std::string& file);

/// Adds `file` to the list when init `created` it, else takes it out.
Result<void> set_listed(const std::string& list, const std::string& file, bool created);

} // namespace sonata::cli
