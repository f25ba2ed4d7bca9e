// A run's own worktree, before it is planned (see worktree_dispatch.hpp).
#include "dispatch/caller/worktree_dispatch.hpp"

#include <filesystem>

#include "core/text.hpp"
#include "dispatch/caller/run.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::dispatch {

Result<ReservedWorktree> reserve_worktree(adapters::DispatchRequest& request) {
    namespace fs = std::filesystem;
    auto runner = make_system_runner();
    const Git git(*runner, request.env);
    auto repo = git.top_level(request.cwd);
    if (!repo) return fail(ExitCode::usage, "--worktree: " + repo.error().message);
    auto base = git.snapshot(*repo);
    if (!base) return fail(base.error().code, "--worktree: " + base.error().message);
    SONATA_TRY(make_project_dir(*repo));
    auto root = runs_root(request.cwd, request.env);
    SONATA_TRY(root);
    auto id = create_run_dir(*root);
    SONATA_TRY(id);
    auto worktree = git.add(*repo, *id, *base);
    if (!worktree) {
        std::error_code ec;
        fs::remove(*root + "/" + *id, ec);
        return fail(worktree.error().code, "--worktree: " + worktree.error().message);
    }
    std::error_code ec;
    const auto inside = fs::relative(fs::weakly_canonical(request.cwd, ec), *repo, ec);
    if (request.session_cwd.empty()) request.session_cwd = request.cwd;
    request.cwd = (fs::path(worktree->path) / inside).lexically_normal().string();
    if (request.cwd.size() > 1 && request.cwd.back() == '/') request.cwd.pop_back();
    return ReservedWorktree{*id, *worktree, *root};
}

void release_worktree(const ReservedWorktree& reserved, const Environment& env) {
    auto runner = make_system_runner();
    (void)Git(*runner, env).discard(reserved.worktree);
    std::error_code ec;
    std::filesystem::remove(reserved.runs_root + "/" + reserved.id, ec);
}

namespace {

/// Nothing when the run has ended; else an error saying what to do first.
Result<void> has_ended(const Receipt& receipt) {
    if (is_final(receipt.state)) return {};
    return fail(ExitCode::usage, "run " + receipt.id + " is " +
                                     std::string(to_string(receipt.state)) +
                                     ": wait for it or cancel it first");
}

/// The worktree the run in `run_dir` recorded; `final`: the run must have ended.
Result<RunWorktree> worktree_in(const std::string& run_dir, bool final) {
    auto receipt = run_status(run_dir);
    SONATA_TRY(receipt);
    if (!receipt->worktree)
        return fail(ExitCode::usage, "run " + receipt->id + " ran in place, not in a worktree");
    if (final) SONATA_TRY(has_ended(*receipt));
    std::error_code ec;
    if (!std::filesystem::is_directory(receipt->worktree->path, ec))
        return fail(ExitCode::usage, "run " + receipt->id + "'s worktree " +
                                         receipt->worktree->path + " is gone (discarded)");
    return worktree_of(*receipt->worktree);
}

} // namespace

Result<std::string> run_diff(const std::string& run_dir, bool stat, const Environment& env) {
    auto worktree = worktree_in(run_dir, false);
    SONATA_TRY(worktree);
    auto runner = make_system_runner();
    return Git(*runner, env).diff(*worktree, stat);
}

Result<ApplyOutcome> apply_run(const std::string& run_dir, const Environment& env,
                               GuardedPaths guarded) {
    auto worktree = worktree_in(run_dir, true);
    SONATA_TRY(worktree);
    auto runner = make_system_runner();
    return Git(*runner, env).apply(*worktree, guarded);
}

std::string apply_summary(const std::string& id, const ApplyOutcome& outcome) {
    if (!outcome.conflicts.empty()) {
        return "nothing applied: run " + id + "'s changes conflict with yours in " +
               join(outcome.conflicts, ", ") + "\n";
    }
    std::string text;
    if (!outcome.files.empty())
        text = "applied run " + id + ": " + join(outcome.files, ", ") + "\n";
    else if (!outcome.in_place.empty())
        text = "run " + id +
               "'s changes are in your tree already: " + join(outcome.in_place, ", ") + "\n";
    else if (outcome.held_back.empty())
        text = "run " + id + " changed nothing\n";
    else
        text = "applied nothing of run " + id + "\n";
    if (!outcome.held_back.empty()) {
        text += "held back, as paths Claude Code asks before it writes: " +
                join(outcome.held_back, ", ") + " (read them with `sonata diff " + id +
                "`; land them with `sonata apply " + id + " --include-sensitive`)\n";
    }
    return text;
}

Result<void> discard_run(const std::string& run_dir, const Environment& env) {
    auto receipt = run_status(run_dir);
    SONATA_TRY(receipt);
    if (!receipt->worktree) return {};
    SONATA_TRY(has_ended(*receipt));
    auto runner = make_system_runner();
    return Git(*runner, env).discard(worktree_of(*receipt->worktree));
}

} // namespace sonata::dispatch
