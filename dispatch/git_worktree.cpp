// A write run's git worktree (see git_worktree.hpp). Trees are written through an index file of
// sonata's own (GIT_INDEX_FILE), so the user's index is never read for writing; commits are made
// with `commit-tree`, so no branch, HEAD or stash moves; the merge is `merge-tree`, so nothing is
// written to the user's tree unless it merges cleanly.
#include "dispatch/git_worktree.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <sstream>

#include "core/fs.hpp"
#include "core/text.hpp"

namespace sonata::dispatch {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(line);
    return out;
}

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
    request.max_output_bytes = 64U << 20U;
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

Result<std::string> Git::run(const std::string& dir, const std::vector<std::string>& args,
                             const Environment& extra, const std::optional<std::string>& in) const {
    auto result = raw_git(m_runner, m_env, dir, args, extra, in);
    if (!result) return fail(ExitCode::failure, "git: " + result.error().message);
    if (result->exit_code != 0) {
        const std::string why = trimmed(result->err.empty() ? result->out : result->err);
        return fail(ExitCode::failure, "git " + args.front() + " failed: " + why);
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
    auto ignored = raw_git(m_runner, m_env, dir, {"check-ignore", "-q", "--no-index", ".sonata"},
                           own, std::nullopt);
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
    std::error_code ec;
    if (std::filesystem::exists(out.path, ec))
        return fail(ExitCode::usage, out.path + " exists already");
    // The worktrees stay out of the user's `git status`: their directory ignores itself.
    SONATA_TRY(write_file_atomic(repo + "/.sonata/worktrees/.gitignore", "*\n"));
    SONATA_TRY(
        run(repo, {"worktree", "add", "--quiet", "-b", out.branch, out.path, base.snapshot}));
    return out;
}

Result<std::string> Git::diff(const RunWorktree& r, bool stat) const {
    auto theirs = tree_of(r.path, "HEAD");
    SONATA_TRY(theirs);
    std::vector<std::string> args = {"diff", "--no-color", "--no-ext-diff", "--no-textconv"};
    args.emplace_back(stat ? "--stat" : "--binary");
    args.insert(args.end(), {r.base.snapshot, *theirs});
    return run(r.repo, args);
}

Result<ApplyOutcome> Git::apply(const RunWorktree& r) const {
    ApplyOutcome out;
    auto theirs = tree_of(r.path, "HEAD");
    SONATA_TRY(theirs);
    auto changed = run(r.repo, {"diff", "--name-only", r.base.snapshot, *theirs});
    SONATA_TRY(changed);
    out.files = lines_of(*changed);
    if (out.files.empty()) return out;
    auto ours = tree_of(r.repo, "HEAD");
    SONATA_TRY(ours);
    auto ours_commit = commit(r.repo, *ours, r.base.snapshot, "sonata: the workspace now");
    SONATA_TRY(ours_commit);
    auto theirs_commit = commit(r.repo, *theirs, r.base.snapshot, "sonata: the run's changes");
    SONATA_TRY(theirs_commit);
    auto merged = raw_git(m_runner, m_env, r.repo,
                          {"merge-tree", "--write-tree", "--name-only", "--no-messages",
                           *ours_commit, *theirs_commit},
                          {}, std::nullopt);
    if (!merged) return fail(ExitCode::failure, "git: " + merged.error().message);
    if (merged->exit_code == 1) {
        auto names = lines_of(merged->out);
        out.conflicts.assign(names.begin() + (names.empty() ? 0 : 1), names.end());
        return out;
    }
    if (merged->exit_code != 0)
        return fail(ExitCode::failure, "git merge-tree failed: " + trimmed(merged->err));
    auto patch = run(r.repo, {"diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv",
                              *ours, first_line(merged->out)});
    SONATA_TRY(patch);
    // Checked whole first: a patch that does not apply changes nothing.
    SONATA_TRY(run(r.repo, {"apply", "--check", "-"}, {}, *patch));
    SONATA_TRY(run(r.repo, {"apply", "-"}, {}, *patch));
    out.applied = true;
    return out;
}

Result<std::string> Git::head(const std::string& dir) const {
    auto head = run(dir, {"rev-parse", "--verify", "--quiet", "HEAD^{commit}"});
    SONATA_TRY(head);
    return trimmed(*head);
}

Result<void> Git::discard(const RunWorktree& r) const {
    std::error_code ec;
    if (std::filesystem::exists(r.path, ec))
        SONATA_TRY(run(r.repo, {"worktree", "remove", "--force", r.path}));
    else
        SONATA_TRY(run(r.repo, {"worktree", "prune"}));
    if (run(r.repo, {"rev-parse", "--verify", "--quiet", "refs/heads/" + r.branch}))
        SONATA_TRY(run(r.repo, {"branch", "-D", r.branch}));
    return {};
}

} // namespace sonata::dispatch
