// A private directory per test (removed afterwards) and the hermetic environment a child gets in
// it: its own HOME, XDG dirs and TMPDIR, a fixed PATH, nothing inherited from the test process.
#pragma once

#include <string>

#include "core/process.hpp"

namespace sonata::testing {

/// A fresh directory under the system temp directory, removed with everything in it on destruction.
class ScratchDir {
public:
    ScratchDir();
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::string& path() const { return m_path; }
    /// Creates (with parents) and returns path()/relative.
    std::string make_dir(const std::string& relative) const;

private:
    std::string m_path;
};

/// HOME, XDG_{CONFIG,DATA,CACHE,STATE}_HOME and TMPDIR inside `dir`; PATH=/usr/bin:/bin;
/// LANG=C.UTF-8.
Environment hermetic_env(const ScratchDir& dir);

} // namespace sonata::testing
