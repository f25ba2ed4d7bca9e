// The versions programs reported (the harnesses, the Node.js runtimes they run on), remembered so
// that an unchanged program is not started again to ask. An answer is keyed by the identity of
// everything its version command ran (the executable, its `#!` interpreter and its package.json:
// resolved path, device, inode, size, modification and change times), the version arguments and the
// runtime put first on PATH. One JSON file in the user's cache directory, replaced atomically and
// bounded; a file that is not what sonata writes is ignored with a note, and replaced on the next
// answer recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/process.hpp"

namespace sonata {

/// One file as stat reports it, after every symbolic link is resolved.
struct FileIdentity {
    std::string path; ///< The resolved (real) path.
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0; ///< Last modification, in nanoseconds since the epoch.
    std::int64_t ctime_ns = 0; ///< Last change (content, name, links, mode), likewise.

    bool operator==(const FileIdentity&) const = default;
};

/// What a version command runs, before it runs.
struct VersionCommand {
    std::string executable;        ///< As found: a symbolic link or the file itself.
    std::vector<std::string> args; ///< The adapter's version_args.
    std::string path_first;        ///< The runtime directory put first on PATH; empty for none.
    std::string path;              ///< The PATH it gets behind path_first.
};

/// The identity of what a version command would run now. Two keys are equal only when every
/// field is: any file replaced, rewritten, touched or re-linked makes a different key.
struct VersionKey {
    std::string command;                     ///< The executable as found.
    FileIdentity executable;                 ///< The file it resolves to.
    std::optional<FileIdentity> interpreter; ///< What its `#!` line runs, resolved on PATH.
    std::optional<FileIdentity> package;     ///< The package.json nearest to a `#!` script.
    std::vector<std::string> args;
    std::string path_first;
    /// No file changed within the last second: a later change of one cannot share its change
    /// time (timestamps advance in ticks), so the key will tell it apart. Only such keys are
    /// recorded, and so only they are ever found.
    bool settled = false;

    bool operator==(const VersionKey&) const = default;
};

/// The version command of `executable` run with `args` and `path_first`, behind `env`'s PATH.
VersionCommand version_command(std::string executable, std::vector<std::string> args,
                               std::string path_first, const Environment& env);

/// The key for `command` as its files are now; nullopt when the executable cannot be examined.
std::optional<VersionKey> version_key(const VersionCommand& command);

/// $XDG_CACHE_HOME/sonata/versions.json, else $HOME/.cache/sonata/versions.json (absolute paths
/// only); empty when neither is set.
std::string version_cache_path(const Environment& env);

/// What a look-up found.
struct CachedVersion {
    std::string version; ///< Empty when the key is not recorded.
    std::string note;    ///< Why the file was ignored; empty when it was read or is absent.
};

/// The version recorded in the file at `cache_path` for exactly `key`.
CachedVersion cached_version(const std::string& cache_path, const VersionKey& key);

/// Records `version` for `key`, newest first, replacing the entry of the same command, arguments
/// and runtime; the oldest entries go past the bound. An unsettled key, or a version that is not
/// a plain version string, is not recorded. Returns whether the file was written; a cache that
/// cannot be written only costs time.
bool record_version(const std::string& cache_path, const VersionKey& key,
                    const std::string& version);

} // namespace sonata
