// A write run in a git worktree of its own: the workspace as it is now (HEAD plus the user's
// uncommitted changes, tracked and untracked, ignored files excepted) frozen into a commit without
// touching the user's working tree, index, stash or branches; a worktree on a branch
// `sonata/<id>` starting there; the run's changes as a diff; applying them to the user's tree as
// a three-way merge that changes nothing when anything conflicts; and removing the worktree and
// its branch. Every git call is an argv vector, with the repository's hooks and fsmonitor off.
//
// Nothing in a run's worktree is trusted: git never discovers a repository from it. The worktree's
// `.git` link must still be the file git wrote, naming the git directory sonata made (found from
// the repository's side); a link the run changed is an error, and nothing is read through it. The
// run's files are read into a tree by git started with a git directory of sonata's own (see
// git_run_tree.cpp): no configuration from the run's reach, and no filter, whatever attributes the
// run wrote.
#pragma once

#include <cstdint>
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
    /// The run's id, from its branch.
    std::string id() const { return branch.substr(branch.find('/') + 1); }
};

/// Files larger than this are not applied (nor any other file of the run): an error names them.
inline constexpr std::uint64_t k_max_applied_file_bytes = 256ULL << 20U;

/// Whether apply lands the run's changes to the paths the parent guards (core/protected_paths.hpp).
enum class GuardedPaths {
    hold_back, ///< Leave them out, and say so: the user confirms them with a second apply.
    include,   ///< Land them with the rest: the user confirmed them.
};

/// What applying a run's changes did.
struct ApplyOutcome {
    bool applied = false;
    std::vector<std::string> conflicts; ///< The files that conflict; nothing was changed then.
    std::vector<std::string> files;     ///< The files the run changed that apply lands.
    std::vector<std::string> held_back; ///< Guarded files the run changed, not landed.
    /// The run's changes your tree held already (an apply before this one): nothing was written.
    std::vector<std::string> in_place;
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
    /// The tree the user's workspace `dir` holds now, committed or not (ignored files excepted),
    /// read as the user's own git reads it.
    Result<std::string> tree_of(const std::string& dir, const std::string& parent) const;
    /// The tree a run's worktree holds now, committed or not (ignored files excepted), read
    /// without trusting anything in it (see the top of this file); a bad_data error when the run
    /// changed its worktree's git link or emptied it.
    Result<std::string> run_tree(const RunWorktree& run) const;
    /// The commit the run's branch names now (its base, unless the run committed).
    Result<std::string> run_head(const RunWorktree& run) const;
    /// The run's changes from its base to what its worktree holds: `git diff` output, or its
    /// --stat when `stat`.
    Result<std::string> diff(const RunWorktree& run, bool stat) const;
    /// Merges the run's changes into the user's working tree (base: the snapshot; ours: the
    /// user's tree now; theirs: the worktree), leaving the index alone; its changes to paths the
    /// parent guards are held back unless `guarded` includes them. Every file lands byte for
    /// byte, or nothing changes and the error says why.
    Result<ApplyOutcome> apply(const RunWorktree& run, GuardedPaths guarded) const;
    /// Removes the worktree, its registration and its branch, whatever the run left in it.
    Result<void> discard(const RunWorktree& run) const;

private:
    /// A merge's outcome: the merged tree, or the files that conflict.
    struct Merged {
        std::string tree;                   ///< Empty when anything conflicts.
        std::vector<std::string> conflicts; ///< The files that conflict.
    };

    /// `git ARGS` in `dir`, whatever it exits with; an error only when git cannot start. `extra`
    /// adds to the environment.
    Result<ProcessResult> call(const std::string& dir, const std::vector<std::string>& args,
                               const Environment& extra = {},
                               const std::optional<std::string>& in = std::nullopt) const;
    /// `git ARGS` in `dir`; stdout, or an error with git's message (or saying that the output
    /// outgrew what sonata reads). `extra` adds to the environment (an index of sonata's own).
    Result<std::string> run(const std::string& dir, const std::vector<std::string>& args,
                            const Environment& extra = {},
                            const std::optional<std::string>& in = std::nullopt) const;
    Result<std::string> commit(const std::string& repo, const std::string& tree,
                               const std::string& parent, const std::string& message) const;
    /// The repository's common git directory, absolute.
    Result<std::string> common_dir(const std::string& repo) const;
    /// The git directory sonata made for the run's worktree (COMMON/worktrees/NAME, whose gitdir
    /// file names the worktree's .git), checked against the worktree's link; bad_data when the
    /// link is not the file git wrote.
    Result<std::string> checked_git_dir(const RunWorktree& run) const;
    /// Removes what sonata made for a run whose worktree git no longer recognises: the directory
    /// (never following a link), its registration and nothing else.
    Result<void> remove_unlinked(const RunWorktree& run) const;
    /// The merge of `ours` and `theirs`, commits with the same parent, in `repo`.
    Result<Merged> merge(const std::string& repo, const std::string& ours,
                         const std::string& theirs) const;
    /// The files the run changed from `from` to `to` (`diff --name-only -z`).
    Result<std::vector<std::string>> changed_files(const RunWorktree& run, const std::string& from,
                                                   const std::string& to) const;
    /// `tree` with `paths` as the run's base has them (absent where the base has none).
    Result<std::string> with_base_paths(const RunWorktree& run, const std::string& tree,
                                        const std::vector<std::string>& paths) const;
    /// An error naming the first of `files` in `tree` over k_max_applied_file_bytes.
    Result<void> check_sizes(const RunWorktree& run, const std::string& tree,
                             const std::vector<std::string>& files) const;

    ProcessRunner& m_runner;
    Environment m_env;
};

} // namespace sonata::dispatch
