// A write run's git worktree (see git_worktree.hpp). Trees are written through an index file of
// sonata's own (GIT_INDEX_FILE), so the user's index is never read for writing; commits are made
// with `commit-tree`, so no branch, HEAD or stash moves; the merge is `merge-tree`, so nothing is
// written to the user's tree unless it merges cleanly.
#include "dispatch/git_worktree.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "core/fs.hpp"
#include "core/text.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::dispatch {
namespace {

constexpr std::size_t k_max_git_output = 64U << 20U;

Result<ProcessResult> raw_git(ProcessRunner& runner, Environment env, const std::string& dir,
                              const std::vector<std::string>& args, const Environment& extra,
                              const std::optional<std::string>& in) {
    // The repository's own hooks and fsmonitor never run: the repository may be hostile.
    ProcessRequest request;
    request.argv = {"git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                    "-C",  dir};
    request.argv.insert(request.argv.end(), args.begin(), args.end());
    for (const char* name : {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                             "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"})
        env.erase(name);
    for (const auto& [key, value] : extra)
        env[key] = value;
    request.env = std::move(env);
    request.stdin_data = in;
    request.timeout = std::chrono::minutes(5);
    request.max_output_bytes = k_max_git_output;
    return runner.run(request);
}

/// The submodules checked out in `repo`, from `git ls-files --stage -z` output: the gitlinks
/// (mode 160000) whose directory holds a checkout of its own.
std::vector<std::string> checked_out_submodules(const std::string& repo,
                                                const std::string& staged) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < staged.size()) {
        const auto end = std::min(staged.find('\0', at), staged.size());
        const std::string entry = staged.substr(at, end - at);
        at = end + 1;
        const auto tab = entry.find('\t');
        if (!entry.starts_with("160000 ") || tab == std::string::npos) continue;
        const std::string path = entry.substr(tab + 1);
        std::error_code ec;
        if (std::filesystem::exists(repo + "/" + path + "/.git", ec)) out.push_back(path);
    }
    return out;
}

} // namespace

Result<ProcessResult> Git::call(const std::string& dir, const std::vector<std::string>& args,
                                const Environment& extra,
                                const std::optional<std::string>& in) const {
    return raw_git(m_runner, m_env, dir, args, extra, in);
}

Result<std::string> Git::run(const std::string& dir, const std::vector<std::string>& args,
                             const Environment& extra, const std::optional<std::string>& in) const {
    auto result = call(dir, args, extra, in);
    if (!result) return fail(ExitCode::failure, "git: " + result.error().message);
    if (result->exit_code != 0) {
        const std::string why = trimmed(result->err.empty() ? result->out : result->err);
        return fail(ExitCode::failure, "git " + args.front() + " failed: " + why);
    }
    if (result->out_bytes > result->out.size()) {
        return fail(ExitCode::failure, "git " + args.front() + "'s output is over the " +
                                           std::to_string(k_max_git_output >> 20U) +
                                           " MiB sonata reads");
    }
    return result->out;
}

Result<std::string> Git::top_level(const std::string& dir) const {
    auto top = run(dir, {"rev-parse", "--show-toplevel"});
    if (!top) return fail(ExitCode::usage, dir + " is not in a git repository");
    return trimmed(*top);
}

Result<std::string> Git::commit(const std::string& repo, const std::string& tree,
                                const std::string& parent, const std::string& message) const {
    const Environment who = {{"GIT_AUTHOR_NAME", "sonata"},
                             {"GIT_AUTHOR_EMAIL", "sonata@localhost"},
                             {"GIT_COMMITTER_NAME", "sonata"},
                             {"GIT_COMMITTER_EMAIL", "sonata@localhost"}};
    auto id = run(repo, {"commit-tree", tree, "-p", parent, "-m", message}, who);
    SONATA_TRY(id);
    return trimmed(*id);
}

Result<std::string> Git::tree_of(const std::string& dir, const std::string& parent) const {
    // An index of each call's own: a server's tool calls may run at once on one repository.
    static std::atomic<unsigned> calls{0};
    auto index =
        run(dir, {"rev-parse", "--git-path",
                  "sonata-index-" + std::to_string(::getpid()) + "-" + std::to_string(calls++)});
    SONATA_TRY(index);
    std::filesystem::path path = trimmed(*index);
    if (path.is_relative()) path = std::filesystem::path(dir) / path;
    const Environment own = {{"GIT_INDEX_FILE", path.string()}};
    struct Remove {
        std::filesystem::path path;
        ~Remove() {
            std::error_code ec;
            std::filesystem::remove(path, ec);
        }
    } remove{path};
    SONATA_TRY(run(dir, {"read-tree", parent}, own));
    // sonata's own directory (runs, worktrees) stays out, ignored by the user or not: its files
    // are never read, since the runs already started write there while this one freezes the
    // workspace, and it is removed from the index where the parent commit holds it. git add reads
    // no untracked file of an ignored directory, and fails when a pathspec names one, even to
    // exclude it: the exclusion is only for a .sonata the user does not ignore.
    std::vector<std::string> add{"add", "-A"};
    auto ignored = call(dir, {"check-ignore", "-q", "--no-index", ".sonata"}, own);
    if (!ignored || ignored->exit_code != 0)
        add.insert(add.end(), {"--", ":/", ":(top,exclude).sonata"});
    SONATA_TRY(run(dir, add, own));
    SONATA_TRY(run(
        dir, {"rm", "-r", "--cached", "-f", "--quiet", "--ignore-unmatch", "--", ".sonata"}, own));
    auto tree = run(dir, {"write-tree"}, own);
    SONATA_TRY(tree);
    return trimmed(*tree);
}

Result<WorktreeBase> Git::snapshot(const std::string& repo) const {
    auto head = run(repo, {"rev-parse", "--verify", "--quiet", "HEAD^{commit}"});
    if (!head) return fail(ExitCode::usage, repo + " has no commit yet: commit once first");
    auto staged = run(repo, {"ls-files", "--stage", "-z"});
    SONATA_TRY(staged);
    if (const auto subs = checked_out_submodules(repo, *staged); !subs.empty()) {
        // A worktree checks out no submodule: the run would not see their files, and what it
        // wrote in them would be in no diff.
        return fail(ExitCode::usage,
                    repo + " has submodules checked out (" + join(subs, ", ") +
                        "), which a run's worktree would not hold: dispatch without a worktree");
    }
    WorktreeBase base{trimmed(*head), trimmed(*head), false};
    auto tree = tree_of(repo, base.head);
    SONATA_TRY(tree);
    auto head_tree = run(repo, {"rev-parse", base.head + "^{tree}"});
    SONATA_TRY(head_tree);
    if (*tree == trimmed(*head_tree)) return base;
    auto snapshot = commit(repo, *tree, base.head, "sonata: the workspace a run started from");
    SONATA_TRY(snapshot);
    base.snapshot = *snapshot;
    base.dirty = true;
    return base;
}

Result<RunWorktree> Git::add(const std::string& repo, const std::string& id,
                             const WorktreeBase& base) const {
    RunWorktree out{repo, repo + "/.sonata/worktrees/" + id, "sonata/" + id, base};
    if (run(repo, {"rev-parse", "--verify", "--quiet", "refs/heads/" + out.branch}))
        return fail(ExitCode::usage, "a branch " + out.branch + " exists already");
    SONATA_TRY(refuse_links(repo, ".sonata/worktrees"));
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(out.path, ec)))
        return fail(ExitCode::usage, out.path + " exists already");
    // The worktrees stay out of the user's `git status`: their directory ignores itself.
    SONATA_TRY(write_file_atomic(repo + "/.sonata/worktrees/.gitignore", "*\n"));
    SONATA_TRY(
        run(repo, {"worktree", "add", "--quiet", "-b", out.branch, out.path, base.snapshot}));
    return out;
}

Result<std::string> Git::diff(const RunWorktree& r, bool stat) const {
    auto theirs = run_tree(r);
    SONATA_TRY(theirs);
    std::vector<std::string> args = {"diff", "--no-color", "--no-ext-diff", "--no-textconv"};
    args.emplace_back(stat ? "--stat" : "--binary");
    args.insert(args.end(), {r.base.snapshot, *theirs});
    return run(r.repo, args);
}

} // namespace sonata::dispatch
