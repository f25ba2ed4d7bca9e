// A run's worktree as its receipt records it, and back: what the caller writes when it makes the
// worktree and what both sides read to work on it (the supervisor's closing stat, diff, apply).
#pragma once

#include "dispatch/git_worktree.hpp"
#include "dispatch/receipt.hpp"

namespace sonata::dispatch {

/// What the receipt records of a run's worktree.
WorktreeRecord record_of(const RunWorktree& worktree);

/// The worktree a receipt records, as git_worktree works on it.
RunWorktree worktree_of(const WorktreeRecord& record);

} // namespace sonata::dispatch
