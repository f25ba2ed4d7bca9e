// A fingerprint of the workspace (path, size, modification time of every file, .git/ and .sonata/
// left out), taken before and after a run, so the receipt can say which files the run changed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sonata::dispatch {

struct Fingerprint {
    std::map<std::string, std::pair<std::uint64_t, std::int64_t>>
        files; ///< relative path → size, mtime ns
    bool truncated =
        false; ///< More files than the walk looks at: changes beyond them are not seen.
};

/// Walks `root` (symlinks not followed), at most `limit` files.
Fingerprint fingerprint(const std::string& root, std::size_t limit = 100000);

/// "created P", "changed P", "removed P", sorted by path.
std::vector<std::string> changes(const Fingerprint& before, const Fingerprint& after);

} // namespace sonata::dispatch
