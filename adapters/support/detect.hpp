// Finding a harness on this machine: executable discovery and bounded version detection.
#pragma once

#include <string>
#include <vector>

#include "adapters/adapter.hpp"
#include "core/config.hpp"
#include "core/process.hpp"

namespace sonata::adapters {

/// What `sonata harnesses` shows for one harness.
struct HarnessStatus {
    std::string id;
    bool installed = false;
    std::string path;    ///< The executable found (or configured).
    std::string version; ///< Empty when it could not be read.
    std::string note;    ///< Why not installed, or why the version is missing.
};

/// Where scripts/install-harnesses links the last whole pin set it installed:
/// $SONATA_HARNESS_CACHE/bin, else ~/.cache/sonata/harnesses/bin; empty without HOME.
std::string harness_cache_bin(const Environment& env);

/// Finds the executable: the config's path override, else PATH, else the adapter's install dirs,
/// else sonata's harness cache (harness_cache_bin).
HarnessStatus locate_harness(const Adapter& adapter, const std::string& id, const Config& config,
                             const Environment& env);

/// locate_harness, then runs the version command under config.version_timeout.
HarnessStatus detect_harness(const Adapter& adapter, const std::string& id, const Config& config,
                             const Environment& env, ProcessRunner& runner);

} // namespace sonata::adapters
