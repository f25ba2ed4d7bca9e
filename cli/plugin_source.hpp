// Where `sonata init --plugin` finds the Claude Code plugin's marketplace (the directory holding
// .claude-plugin/marketplace.json and plugin/): wherever this sonata was installed from.
#pragma once

#include <map>
#include <string>

#include "core/result.hpp"

namespace sonata::cli {

/// The places to look, in order:
/// - `given` (--marketplace) when not empty, and nothing else;
/// - SONATA_MARKETPLACE_DIR in `env` (the npm package's launcher script sets it to its package);
/// - `<executable's directory>/../share/sonata` (an installed tree: `cmake --install`, the .deb);
/// - `<executable's directory>/..` (the npm package, whose bin/sonata the binary replaced);
/// - `source_tree`, the source tree this sonata was built from.
/// The first that holds .claude-plugin/marketplace.json, or ExitCode::usage naming every place
/// looked at.
Result<std::string> plugin_marketplace(const std::string& given,
                                       const std::map<std::string, std::string>& env,
                                       const std::string& executable,
                                       const std::string& source_tree);

} // namespace sonata::cli
