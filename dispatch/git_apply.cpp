// Applying a run's changes to the user's tree (see git_worktree.hpp): a three-way merge by
// `merge-tree` that writes nothing when anything conflicts, a size check before anything changes,
// the patch through a file (never a bounded buffer, where a large one would arrive cut), checked
// whole before it is applied, and checked again after: the user's files must now be what the
// patch makes them, or apply says so instead of saying it applied.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/protected_paths.hpp"
#include "core/text.hpp"
#include "dispatch/git_worktree.hpp"

namespace sonata::dispatch {
namespace {

/// The NUL-separated fields of `text`, the empty ones left out.
std::vector<std::string> fields_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = std::min(text.find('\0', at), text.size());
        if (end > at) out.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

std::string mebibytes(std::uint64_t bytes) { return std::to_string(bytes >> 20U) + " MiB"; }

/// A file of sonata's own in the temporary directory, removed when it goes.
struct PatchFile {
    std::string path = (std::filesystem::temp_directory_path() / "sonata-patch-XXXXXX").string();
    PatchFile() {
        const int fd = ::mkstemp(path.data());
        if (fd >= 0)
            ::close(fd);
        else
            path.clear();
    }
    PatchFile(const PatchFile&) = delete;
    PatchFile& operator=(const PatchFile&) = delete;
    ~PatchFile() {
        if (!path.empty()) ::unlink(path.c_str());
    }
};

} // namespace

Result<std::vector<std::string>> Git::changed_files(const RunWorktree& r, const std::string& from,
                                                    const std::string& to) const {
    auto names = run(r.repo, {"diff", "--name-only", "-z", "--no-renames", from, to});
    SONATA_TRY(names);
    return fields_of(*names);
}

Result<void> Git::check_sizes(const RunWorktree& r, const std::string& tree,
                              const std::vector<std::string>& files) const {
    auto listing = run(r.repo, {"ls-tree", "-r", "-l", "-z", tree});
    SONATA_TRY(listing);
    const std::set<std::string> wanted(files.begin(), files.end());
    for (const auto& entry : fields_of(*listing)) {
        // "<mode> <type> <object> <size>\t<path>"
        const auto tab = entry.find('\t');
        if (tab == std::string::npos || wanted.count(entry.substr(tab + 1)) == 0) continue;
        const auto size_at = entry.find_last_of(' ', tab);
        const std::uint64_t size = std::strtoull(entry.c_str() + size_at + 1, nullptr, 10);
        if (entry.find(" blob ") != std::string::npos && size > k_max_applied_file_bytes) {
            return fail(ExitCode::usage, "nothing applied: run " + r.id() + "'s " +
                                             entry.substr(tab + 1) + " is " + mebibytes(size) +
                                             ", over the " + mebibytes(k_max_applied_file_bytes) +
                                             " sonata applies; copy it from the worktree " +
                                             r.path + " yourself, or ask for the run without it");
        }
    }
    return {};
}

Result<std::string> Git::with_base_paths(const RunWorktree& r, const std::string& tree,
                                         const std::vector<std::string>& paths) const {
    static std::atomic<unsigned> calls{0};
    auto index =
        run(r.repo, {"rev-parse", "--path-format=absolute", "--git-path",
                     "sonata-held-" + std::to_string(::getpid()) + "-" + std::to_string(calls++)});
    SONATA_TRY(index);
    const Environment own = {{"GIT_INDEX_FILE", trimmed(*index)}, {"GIT_LITERAL_PATHSPECS", "1"}};
    struct Remove {
        std::string path;
        ~Remove() { ::unlink(path.c_str()); }
    } remove{trimmed(*index)};
    SONATA_TRY(run(r.repo, {"read-tree", tree}, own));
    std::vector<std::string> args{"ls-tree", "-r", "-z", r.base.snapshot, "--"};
    args.insert(args.end(), paths.begin(), paths.end());
    auto in_base = run(r.repo, args, own);
    SONATA_TRY(in_base);
    std::string info;
    std::set<std::string> kept;
    for (const auto& entry : fields_of(*in_base)) {
        info += entry + '\0'; // "<mode> <type> <object>\t<path>", as update-index reads it
        kept.insert(entry.substr(entry.find('\t') + 1));
    }
    const std::string none(r.base.snapshot.size(), '0');
    for (const auto& path : paths)
        if (kept.count(path) == 0) info += "0 " + none + '\t' + path + '\0';
    SONATA_TRY(run(r.repo, {"update-index", "-z", "--index-info"}, own, info));
    auto written = run(r.repo, {"write-tree"}, own);
    SONATA_TRY(written);
    return trimmed(*written);
}

Result<ApplyOutcome> Git::apply(const RunWorktree& r, GuardedPaths guarded) const {
    ApplyOutcome out;
    auto theirs = run_tree(r);
    SONATA_TRY(theirs);
    auto files = changed_files(r, r.base.snapshot, *theirs);
    SONATA_TRY(files);
    for (auto& file : *files) {
        const bool held = guarded == GuardedPaths::hold_back && is_protected_in_workspace(file);
        (held ? out.held_back : out.files).push_back(std::move(file));
    }
    if (!out.held_back.empty()) {
        theirs = with_base_paths(r, *theirs, out.held_back);
        SONATA_TRY(theirs);
    }
    if (out.files.empty()) return out;
    SONATA_TRY(check_sizes(r, *theirs, out.files));
    auto ours = tree_of(r.repo, "HEAD");
    SONATA_TRY(ours);
    auto ours_commit = commit(r.repo, *ours, r.base.snapshot, "sonata: the workspace now");
    SONATA_TRY(ours_commit);
    auto theirs_commit = commit(r.repo, *theirs, r.base.snapshot, "sonata: the run's changes");
    SONATA_TRY(theirs_commit);
    auto merged = merge(r.repo, *ours_commit, *theirs_commit);
    SONATA_TRY(merged);
    if (merged->tree.empty()) {
        out.conflicts = std::move(merged->conflicts);
        return out;
    }
    if (merged->tree == *ours) {
        out.in_place = std::move(out.files);
        out.files.clear();
        return out;
    }
    const PatchFile patch;
    if (patch.path.empty()) return fail(ExitCode::failure, "cannot make a file for the patch");
    SONATA_TRY(run(r.repo, {"diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv",
                            "--no-renames", "--output=" + patch.path, *ours, merged->tree}));
    // Checked whole first: a patch that does not apply changes nothing.
    SONATA_TRY(run(r.repo, {"apply", "--check", patch.path}));
    SONATA_TRY(run(r.repo, {"apply", patch.path}));
    // And after: the patch must now apply in reverse, which it does only where every file it
    // names is what it makes.
    if (auto landed = run(r.repo, {"apply", "--reverse", "--check", patch.path}); !landed) {
        return fail(ExitCode::failure, "git apply said it applied run " + r.id() +
                                           "'s changes, but your files are not what they make (" +
                                           landed.error().message + "): see `git status`");
    }
    out.applied = true;
    return out;
}

Result<Git::Merged> Git::merge(const std::string& repo, const std::string& ours,
                               const std::string& theirs) const {
    auto merged = call(
        repo, {"merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs});
    SONATA_TRY(merged);
    // -z: the tree, then each conflicted file; each ends with a NUL.
    auto names = fields_of(merged->out);
    if (merged->exit_code == 1 && !names.empty()) {
        names.erase(names.begin());
        return Merged{{}, std::move(names)};
    }
    if (merged->exit_code != 0 || names.empty())
        return fail(ExitCode::failure, "git merge-tree failed: " + trimmed(merged->err));
    return Merged{names.front(), {}};
}

} // namespace sonata::dispatch
