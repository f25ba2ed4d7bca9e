// Harnesses shipped as Node.js scripts, and the Node.js they run on. A release may need a newer
// Node than the machine's (pi 1.x needs 22.19 and dies on 20 with a SyntaxError); sonata then
// puts a Node.js from its harness cache first on that harness's PATH — for the version command,
// the probe cells and the dispatches alike — or says what is missing instead of starting it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/process.hpp"

namespace sonata {

/// The `#!` line `script` starts with (from its first 256 bytes, without the line end); empty
/// when it starts otherwise or cannot be read.
std::string shebang_line(const std::string& script);

/// The package.json nearest to `dir`: in it or in one of the five directories above it (a
/// package's bin/cli.js sits a few levels under it); empty when there is none.
std::string nearest_package_json(const std::filesystem::path& dir);

/// What a Node.js harness's own package says it needs.
struct NodeNeed {
    std::string minimum;         ///< From engines.node ">=X.Y.Z", e.g. "22.19.0".
    std::string package_version; ///< The package's "version": what the harness would report.
};

/// The need of `executable` when it is a script run by `#!/usr/bin/env node` whose nearest
/// package.json (walking up from the script, links resolved) asks for a minimum Node.js with
/// `engines.node: ">=…"`; nullopt for anything else (a native binary, no engines, another form).
std::optional<NodeNeed> node_need(const std::string& executable);

/// One Node.js found on this machine.
struct NodeRuntime {
    std::string dir;     ///< The directory holding `node`.
    std::string version; ///< "22.23.5" (its `node --version`, without the v).
};

/// sonata's harness cache, where scripts/install-harnesses installs: $SONATA_HARNESS_CACHE, else
/// ~/.cache/sonata/harnesses; empty without HOME.
std::string harness_cache_dir(const Environment& env);

/// Where sonata looks for runtimes: $SONATA_RUNTIMES_DIR, else <cache>/runtimes, where
/// scripts/install-harnesses puts the ones a pinned harness needs.
std::string harness_runtimes_dir(const Environment& env);

/// How a Node.js harness is to be run on this machine.
struct NodeChoice {
    /// The directory to put first on the harness's PATH; empty when PATH's node will do.
    std::string path_first;
    /// Empty when a Node.js that satisfies the need exists; else why not and the fix.
    std::string unmet;
};

/// Chooses for `need`: PATH's `node` (from `env`) when new enough, else the newest that is in
/// harness_runtimes_dir/<name>/bin. Each candidate's version is read by running it.
NodeChoice choose_node(const NodeNeed& need, const Environment& env, ProcessRunner& runner);

/// Puts `dir` first on env's PATH; nothing for an empty `dir`.
void put_first_on_path(Environment& env, const std::string& dir);

} // namespace sonata
