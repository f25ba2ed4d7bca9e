// A write run in a git worktree of its own: the workspace as it is now (HEAD plus the user's
// uncommitted changes, tracked and untracked, ignored files excepted) frozen into a commit without
// touching the user's working tree, index, stash or branches; a worktree on a branch
// `sonata/<id>` starting there; the run's changes as a diff; applying them to the user's tree as
// a three-way merge that changes nothing when anything conflicts; and removing the worktree and
// its branch. Every git call is an argv vector, with the repository's hooks and fsmonitor off.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/process.hpp"
#include "core/result.hpp"

namespace sonata::dispatch {

/// The workspace a worktree run starts from.
struct WorktreeBase {
    std::string head;     ///< The commit HEAD named.
    std::string snapshot; ///< HEAD plus the uncommitted state; equal to `head` when clean.
    bool dirty = false;   ///< Whether there was an uncommitted state.
};

/// A run's worktree.
struct RunWorktree {
    std::string repo;   ///< The user's repository (its top level).
    std::string path;   ///< REPO/.sonata/worktrees/<id>
    std::string branch; ///< sonata/<id>
    WorktreeBase base;
};

/// What applying a run's changes did.
struct ApplyOutcome {
    bool applied = false;
    std::vector<std::string> conflicts; ///< The files that conflict; nothing was changed then.
    std::vector<std::string> files;     ///< The files the run changed.
};

/// git, run on `repo` with the caller's environment.
class Git {
public:
    Git(ProcessRunner& runner, Environment env) : m_runner(runner), m_env(std::move(env)) {}

    /// The top level of the repository holding `dir`; an error naming it when there is none.
    Result<std::string> top_level(const std::string& dir) const;
    /// Freezes the workspace of `repo` (see WorktreeBase); an error when a submodule is checked
    /// out there, since a worktree would hold none of its files.
    Result<WorktreeBase> snapshot(const std::string& repo) const;
    /// Adds the worktree of run `id` at its base; refuses a branch or a directory that exists.
    Result<RunWorktree> add(const std::string& repo, const std::string& id,
                            const WorktreeBase& base) const;
    /// The tree the worktree holds now, committed or not (ignored files excepted).
    Result<std::string> tree_of(const std::string& dir, const std::string& parent) const;
    /// The run's changes from its base to what its worktree holds: `git diff` output, or its
    /// --stat when `stat`.
    Result<std::string> diff(const RunWorktree& run, bool stat) const;
    /// Merges the run's changes into the user's working tree (base: the snapshot; ours: the
    /// user's tree now; theirs: the worktree), leaving the index alone.
    Result<ApplyOutcome> apply(const RunWorktree& run) const;
    /// The commit HEAD names in `dir`.
    Result<std::string> head(const std::string& dir) const;
    /// Removes the worktree and its branch.
    Result<void> discard(const RunWorktree& run) const;

private:
    /// `git ARGS` in `dir`; stdout, or an error with git's message. `extra` adds to the
    /// environment (an index of sonata's own).
    Result<std::string> run(const std::string& dir, const std::vector<std::string>& args,
                            const Environment& extra = {},
                            const std::optional<std::string>& in = std::nullopt) const;
    Result<std::string> commit(const std::string& repo, const std::string& tree,
                               const std::string& parent, const std::string& message) const;

    ProcessRunner& m_runner;
    Environment m_env;
};

} // namespace sonata::dispatch
