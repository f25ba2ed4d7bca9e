// Converting a run's worktree to and from its receipt's record.
#include "dispatch/worktree_record.hpp"

namespace sonata::dispatch {

WorktreeRecord record_of(const RunWorktree& w) {
    return {w.path, w.branch, w.repo, w.base.head, w.base.snapshot, w.base.dirty, {}};
}

RunWorktree worktree_of(const WorktreeRecord& r) {
    return {r.repo, r.path, r.branch, {r.base_head, r.base_snapshot, r.base_dirty}};
}

} // namespace sonata::dispatch
