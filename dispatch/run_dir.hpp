// Where runs live and how they are named: `.sonata/runs/<id>/` in the project sonata finds (as
// `plan` finds it; a worktree run's repository is made its project first), else
// `$XDG_STATE_HOME/sonata/runs/<id>/` (default ~/.local/state/sonata/runs). A run is looked up by
// id in both, so a run started before its directory became a project's is still found. A
// project's `.sonata` and `.sonata/runs` are never followed when they are links. Ids are made of
// the time and random bytes and created with an exclusive mkdir, so they never repeat; an id from
// outside is checked before it names a path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/fs.hpp"
#include "core/process.hpp"
#include "core/result.hpp"

namespace sonata::dispatch {

/// The runs directory for work in `cwd`: where a new run's directory goes. A project's
/// `.sonata` or `.sonata/runs` that is a link is a bad_data error naming it.
Result<std::string> runs_root(const std::string& cwd, const Environment& env);

/// Every runs directory a run of work in `cwd` may be in: runs_root first, then the state
/// directory's when that is another.
Result<std::vector<std::string>> runs_roots(const std::string& cwd, const Environment& env);

/// The directories of every run in runs_roots(cwd, env), newest first.
Result<std::vector<std::string>> all_run_dirs(const std::string& cwd, const Environment& env);

/// Nothing when `dir/sub` is no link, nor any directory between `dir` and it (`sub` is relative,
/// as ".sonata/runs"); a bad_data error naming the link otherwise. Missing parts are no links.
Result<void> refuse_links(const std::string& dir, const std::string& sub);

/// Makes `repo/.sonata` (no link) when it is missing, so that `repo` is a project.
Result<void> make_project_dir(const std::string& repo);

/// True for 1–64 characters of [a-z0-9-]: an id that can only name a directory inside the root.
bool is_safe_run_id(std::string_view id);

/// Creates a new run directory under `root` (creating root), returns its id.
Result<std::string> create_run_dir(const std::string& root);

/// The directory of run `id` under `root`; usage error for an unsafe id, bad_data when missing.
Result<std::string> run_dir(const std::string& root, const std::string& id);

/// The ids under `root`, newest first (ids sort by their time).
std::vector<std::string> list_runs(const std::string& root);

/// A run directory opened once and checked to be sonata's own: a directory, not a symlink, owned
/// by this user. Everything read from or written to a run goes through it (openat, never following
/// a link), so a run directory replaced by a link, or a file in it that links elsewhere, is never
/// followed, and a supervisor keeps writing into the directory it started with.
class RunDirectory {
public:
    /// Opens and checks `path`; bad_data naming what is wrong.
    static Result<RunDirectory> open(const std::string& path);

    RunDirectory(RunDirectory&& other) noexcept;
    RunDirectory& operator=(RunDirectory&& other) noexcept;
    RunDirectory(const RunDirectory&) = delete;
    RunDirectory& operator=(const RunDirectory&) = delete;
    ~RunDirectory();

    const std::string& path() const { return m_path; }
    /// The directory's own name: the id its receipt must carry.
    std::string name() const;
    int fd() const { return m_fd; }

    /// A regular file in the run directory (never through a link), at most `max_bytes`.
    Result<std::string> read(const std::string& name, std::size_t max_bytes) const;
    /// Replaces a file in the run directory atomically, owner-only.
    Result<void> write(const std::string& name, const std::string& content,
                       Durability durability = Durability::unsynced) const;
    bool exists(const std::string& name) const;
    void remove(const std::string& name) const;

    /// Takes the lock a supervisor holds on its run directory for its whole life (released by the
    /// kernel when it ends, whatever ends it); false when another process holds it.
    bool lock_as_supervisor() const;
    /// True while a supervisor holds the run: the one sign of a live run that nothing written in
    /// the directory can forge.
    bool supervised() const;

private:
    RunDirectory(int fd, std::string path) : m_fd(fd), m_path(std::move(path)) {}
    int m_fd = -1;
    std::string m_path;
};

/// The files of a run directory.
struct RunFiles {
    std::string dir;
    std::string instructions() const { return dir + "/instructions.md"; }
    std::string plan() const { return dir + "/plan.json"; }
    std::string log() const { return dir + "/harness.log"; }
    std::string report() const { return dir + "/report.md"; }
    std::string exit_sentinel() const { return dir + "/exit"; }
    std::string pgid() const { return dir + "/pgid"; }
};

} // namespace sonata::dispatch
