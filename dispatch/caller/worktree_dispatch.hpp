// `--worktree`: a run's own git worktree, made before the run is planned, so the plan and the gate
// look at the files the harness will see. The run's id is reserved first (the worktree and its
// branch are named after it); a refusal or a failure takes both away again.
#pragma once

#include <string>

#include "adapters/support/pipeline.hpp"
#include "dispatch/git_worktree.hpp"
#include "dispatch/receipt.hpp"
#include "dispatch/worktree_record.hpp"

namespace sonata::dispatch {

/// A worktree run made ready: its id (its run directory exists, empty, under `runs_root`) and its
/// worktree.
struct ReservedWorktree {
    std::string id;
    RunWorktree worktree;
    std::string runs_root;
};

/// Makes the repository `request.cwd` lies in a project (its `.sonata/`, where the worktree goes),
/// reserves a run id under the runs root of `request.cwd` (that project's, or a nearer one's),
/// and adds its worktree from the workspace (HEAD plus the uncommitted changes); `request.cwd`
/// moves to the same directory in the worktree, while the parent's session and the project's
/// config are still looked up where the request came from. The first worktree run of a
/// repository therefore lives where every later one does.
Result<ReservedWorktree> reserve_worktree(adapters::DispatchRequest& request);

/// Undoes reserve_worktree: the worktree, its branch and the empty run directory go.
void release_worktree(const ReservedWorktree& reserved, const Environment& env);

/// The changes of the run in `run_dir` (its worktree against its base): `git diff`, or its --stat.
/// An error when the run has no worktree or it is gone.
Result<std::string> run_diff(const std::string& run_dir, bool stat, const Environment& env);

/// Applies a finished run's changes to the user's tree (Git::apply), its changes to guarded paths
/// as `guarded` says. An error when the run is still going, has no worktree, or it is gone.
Result<ApplyOutcome> apply_run(const std::string& run_dir, const Environment& env,
                               GuardedPaths guarded);

/// What an apply of run `id` did, for the person who asked: the files it landed, or the
/// conflicts, and the guarded files it held back with how to land them.
std::string apply_summary(const std::string& id, const ApplyOutcome& outcome);

/// Removes a finished run's worktree and branch; a run without a worktree is left alone.
Result<void> discard_run(const std::string& run_dir, const Environment& env);

} // namespace sonata::dispatch
