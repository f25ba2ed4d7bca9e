// A probe cell's scratch world: fresh HOME, XDG dirs, TMPDIR and a workspace (a git repository with
// canary files), a scrubbed environment, snapshots to tell what changed, and removal of all of it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"
#include "core/process.hpp"
#include "core/result.hpp"

namespace sonata::probes {

/// Canary files every workspace holds (relative path → content). `victim` is the rm-prompt target.
const std::map<std::string, std::string>& canary_files();

/// The scratch directories of one cell. Moving transfers ownership; the destructor removes the
/// root.
class Scratch {
public:
    Scratch() = default;
    Scratch(Scratch&& other) noexcept;
    Scratch& operator=(Scratch&& other) noexcept;
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    ~Scratch();

    /// Creates <base>/sonata-cell-XXXXXX with home/, xdg/{config,data,state,cache}/, tmp/, outside/
    /// and work/ (a copy of `template_dir` when given, else canaries + `git init`).
    static Result<Scratch> create(const std::string& base, const std::string& template_dir,
                                  ProcessRunner& runner);

    const std::string& root() const { return m_root; }
    std::string home() const { return m_root + "/home"; }
    std::string tmp() const { return m_root + "/tmp"; }
    std::string workspace() const { return m_root + "/work"; }
    /// A directory outside the workspace (the "parent directory" target of
    /// outside-workspace-write).
    std::string outside() const { return m_root + "/outside"; }

    /// The child's complete environment: an allowlist of `base` (PATH, LANG, TERM…) plus the
    /// scratch dirs; no API keys, base URLs or permission-changing variables survive.
    Environment environment(const Environment& base) const;

    /// Writes files (absolute paths must lie inside root()).
    Result<void> write_files(const std::vector<adapters::FileToWrite>& files) const;

private:
    explicit Scratch(std::string root) : m_root(std::move(root)) {}
    std::string m_root;
};

/// Builds a workspace template once per probe run (canaries + `git init` + a commit): cells copy
/// it.
Result<std::string> make_workspace_template(const std::string& base, ProcessRunner& runner);

/// Content hashes of every regular file under `dir` (relative paths; of .git/, only its hooks and
/// its config, which the parent guards).
using Snapshot = std::map<std::string, std::string>;
Snapshot snapshot(const std::string& dir);

/// "created PATH", "modified PATH", "deleted PATH" for each difference, sorted.
std::vector<std::string> diff(const Snapshot& before, const Snapshot& after,
                              const std::string& prefix);

} // namespace sonata::probes
