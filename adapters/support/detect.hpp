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
    /// The directory to put first on the harness's PATH: the Node.js it needs, from sonata's
    /// harness cache, when PATH's is too old (see core/node_runtime.hpp); empty for none.
    std::string path_first;
    /// Why an installed harness cannot run here ("pi 1.6.0 needs Node.js >= 22.19.0; found
    /// 20.20.2 (fix: …)"); empty when it can. Its version is then its package's.
    std::string cannot_run;
};

/// Where scripts/install-harnesses links the last whole pin set it installed:
/// $SONATA_HARNESS_CACHE/bin, else ~/.cache/sonata/harnesses/bin; empty without HOME.
std::string harness_cache_bin(const Environment& env);

/// Finds the executable: the config's path override, else PATH, else the adapter's install dirs,
/// else sonata's harness cache (harness_cache_bin).
HarnessStatus locate_harness(const Adapter& adapter, const std::string& id, const Config& config,
                             const Environment& env);

/// Fills status.path_first, or status.cannot_run, for a harness that is a Node.js script whose
/// package asks for a newer Node.js than PATH's.
void provide_runtime(HarnessStatus& status, const Environment& env, ProcessRunner& runner);

/// Runs the version command of a located harness (with its runtime first on PATH, and the
/// machine's directory for a package it unpacks: unpacked_package.hpp) under
/// config.version_timeout and fills status.version or status.note; a harness whose Node.js need
/// is unmet but that answers anyway loses its `cannot_run` (the shortfall becomes its note).
/// An answer recorded in the version cache (version_cache.hpp) for exactly the files the command
/// would run stands in for running it; a clean answer (exit 0, version parsed) is recorded. A
/// cache file that was ignored adds a note.
void read_version(HarnessStatus& status, const Adapter& adapter, const Config& config,
                  const Environment& env, ProcessRunner& runner);

/// locate_harness, provide_runtime and read_version: runs the version command (with the runtime
/// first on PATH) under config.version_timeout. A harness whose Node.js need is unmet but that
/// answers anyway runs (the shortfall becomes its note); one that does not keeps `cannot_run`.
HarnessStatus detect_harness(const Adapter& adapter, const std::string& id, const Config& config,
                             const Environment& env, ProcessRunner& runner);

} // namespace sonata::adapters
