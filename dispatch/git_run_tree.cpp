// Reading a run's worktree without trusting it (see git_worktree.hpp). The git directory sonata
// made for the worktree is found from the repository's side (COMMON/worktrees/*/gitdir names the
// worktree) and the worktree's `.git` must still name it. The run's files are then read by git
// started with a git directory of sonata's own: no system or global configuration, a config that
// sets nothing but the repository format, the repository's objects through
// GIT_OBJECT_DIRECTORY, and `info/attributes` (which outranks every .gitattributes) unsetting every
// attribute that selects a filter or conversion. So no program named in the run's reach runs, and
// the run's files are stored byte for byte, links as links.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include <sys/stat.h>

#include "core/fs.hpp"
#include "core/text.hpp"
#include "dispatch/git_worktree.hpp"

namespace sonata::dispatch {
namespace fs = std::filesystem;
namespace {

/// Every attribute that makes git convert a file or run a program on it, unset for every path.
constexpr const char* k_neutral_attributes =
    "* -filter -text -eol -crlf -ident -working-tree-encoding -diff -merge\n";

/// A path made comparable: absolute, symlinks in its existing part resolved.
std::string comparable(const std::string& path) {
    std::error_code ec;
    const auto out = fs::weakly_canonical(path, ec);
    return ec ? path : out.string();
}

/// The text of `dir/name`, never through a link; empty when it is not a regular file.
std::string read_unlinked(const std::string& dir, const std::string& name) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return {};
    auto text = read_file_bounded_at(fd, name, 64U << 10U, dir + "/" + name);
    ::close(fd);
    return text ? *text : std::string();
}

/// A worktree's link (WORKTREE/.git) made comparable: the worktree and its link are never
/// resolved, since the run may have replaced either by a link; the directories above are.
std::string comparable_link(const std::string& link) {
    const fs::path worktree = fs::path(link).parent_path();
    return comparable(worktree.parent_path().string()) + "/" + worktree.filename().string() +
           "/.git";
}

std::string link_of(const RunWorktree& r) { return comparable_link(r.path + "/.git"); }

/// The git directory under COMMON/worktrees whose gitdir file names `link`; empty when none does.
std::string registered_git_dir(const std::string& common, const std::string& link) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(common + "/worktrees", ec)) {
        if (comparable_link(trimmed(read_unlinked(entry.path().string(), "gitdir"))) == link)
            return comparable(entry.path().string());
    }
    return {};
}

/// A directory of sonata's own that git takes as the repository when it reads a run's tree;
/// removed with everything in it when it goes.
class ReaderGitDir {
public:
    static Result<ReaderGitDir> make(const std::string& object_format, const std::string& exclude) {
        std::string pattern = (fs::temp_directory_path() / "sonata-git-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            return fail(ExitCode::failure, "cannot make a directory for git under " + pattern);
        ReaderGitDir dir(pattern);
        const bool sha1 = object_format == "sha1";
        const std::string config =
            std::string("[core]\n\trepositoryformatversion = ") + (sha1 ? "0" : "1") +
            "\n\tbare = false\n" +
            (sha1 ? "" : "[extensions]\n\tobjectformat = " + object_format + "\n");
        std::error_code ec;
        fs::create_directories(pattern + "/refs/heads", ec);
        fs::create_directories(pattern + "/objects", ec);
        for (const auto& [name, text] : {std::pair<std::string, std::string>{"config", config},
                                         {"HEAD", "ref: refs/heads/sonata-reader\n"},
                                         {"info/attributes", k_neutral_attributes},
                                         {"info/exclude", exclude + "\n/.sonata/\n"}})
            SONATA_TRY(write_file_atomic(pattern + "/" + name, text));
        return dir;
    }

    ReaderGitDir(ReaderGitDir&& other) noexcept : m_path(std::move(other.m_path)) {
        other.m_path.clear();
    }
    ReaderGitDir(const ReaderGitDir&) = delete;
    ReaderGitDir& operator=(const ReaderGitDir&) = delete;
    ReaderGitDir& operator=(ReaderGitDir&&) = delete;
    ~ReaderGitDir() {
        std::error_code ec;
        if (!m_path.empty()) fs::remove_all(m_path, ec);
    }

    const std::string& path() const { return m_path; }

private:
    explicit ReaderGitDir(std::string path) : m_path(std::move(path)) {}
    std::string m_path;
};

} // namespace

Result<std::string> Git::common_dir(const std::string& repo) const {
    auto common = run(repo, {"rev-parse", "--path-format=absolute", "--git-common-dir"});
    SONATA_TRY(common);
    return comparable(trimmed(*common));
}

Result<std::string> Git::checked_git_dir(const RunWorktree& r) const {
    const auto changed = [&](const std::string& what) -> Result<std::string> {
        return fail(ExitCode::bad_data,
                    "run " + r.id() + " changed its worktree's git link (" + what +
                        "): sonata shows and applies nothing from that worktree; `sonata discard " +
                        r.id() + "` removes it and its branch");
    };
    struct stat st {};
    if (::lstat(r.path.c_str(), &st) != 0)
        return fail(ExitCode::usage,
                    "run " + r.id() + "'s worktree " + r.path + " is gone (discarded)");
    if (!S_ISDIR(st.st_mode)) return changed(r.path + " is no longer a directory");
    auto common = common_dir(r.repo);
    SONATA_TRY(common);
    const std::string link = link_of(r);
    const std::string admin = registered_git_dir(*common, link);
    if (admin.empty()) return changed("git has no worktree registered at " + r.path);
    if (::lstat(link.c_str(), &st) != 0) return changed(r.path + "/.git is gone");
    if (!S_ISREG(st.st_mode)) return changed(r.path + "/.git is no longer the file git wrote");
    const std::string text = read_unlinked(r.path, ".git");
    if (!text.starts_with("gitdir: ") || comparable(trimmed(text.substr(8))) != admin)
        return changed(r.path + "/.git names another git directory");
    return admin;
}

Result<std::string> Git::run_head(const RunWorktree& r) const {
    auto head = run(r.repo, {"rev-parse", "--verify", "--quiet", r.branch + "^{commit}"});
    SONATA_TRY(head);
    return trimmed(*head);
}

Result<std::string> Git::run_tree(const RunWorktree& r) const {
    SONATA_TRY(checked_git_dir(r));
    auto head = run_head(r);
    SONATA_TRY(head);
    auto common = common_dir(r.repo);
    SONATA_TRY(common);
    auto format = run(r.repo, {"rev-parse", "--show-object-format"});
    SONATA_TRY(format);
    auto reader = ReaderGitDir::make(trimmed(*format), read_unlinked(*common + "/info", "exclude"));
    SONATA_TRY(reader);
    Environment sealed = {{"GIT_DIR", reader->path()},
                          {"GIT_WORK_TREE", r.path},
                          {"GIT_INDEX_FILE", reader->path() + "/index"},
                          {"GIT_OBJECT_DIRECTORY", *common + "/objects"},
                          {"GIT_CONFIG_NOSYSTEM", "1"},
                          {"GIT_CONFIG_GLOBAL", "/dev/null"},
                          {"GIT_ATTR_NOSYSTEM", "1"},
                          {"GIT_CONFIG_COUNT", "0"}};
    // The user's own ignore rules still hold (a file names nothing to run).
    if (auto excludes = call(r.repo, {"config", "--path", "--get", "core.excludesFile"});
        excludes && excludes->exit_code == 0 && !trimmed(excludes->out).empty()) {
        sealed["GIT_CONFIG_COUNT"] = "1";
        sealed["GIT_CONFIG_KEY_0"] = "core.excludesFile";
        sealed["GIT_CONFIG_VALUE_0"] = trimmed(excludes->out);
    }
    SONATA_TRY(run(r.path, {"read-tree", *head}, sealed));
    SONATA_TRY(run(r.path, {"add", "-A"}, sealed));
    SONATA_TRY(run(r.path,
                   {"rm", "-r", "--cached", "-f", "--quiet", "--ignore-unmatch", "--", ".sonata"},
                   sealed));
    auto tree = run(r.path, {"write-tree"}, sealed);
    SONATA_TRY(tree);
    return trimmed(*tree);
}

Result<void> Git::discard(const RunWorktree& r) const {
    auto admin = checked_git_dir(r);
    if (admin)
        SONATA_TRY(run(r.repo, {"worktree", "remove", "--force", r.path}));
    else
        SONATA_TRY(remove_unlinked(r));
    if (run(r.repo, {"rev-parse", "--verify", "--quiet", "refs/heads/" + r.branch}))
        SONATA_TRY(run(r.repo, {"branch", "-D", r.branch}));
    return {};
}

Result<void> Git::remove_unlinked(const RunWorktree& r) const {
    // Only a directory where sonata puts worktrees, named for the run, is ever removed here.
    const fs::path path = r.path;
    if (path.parent_path() != fs::path(r.repo) / ".sonata" / "worktrees" ||
        path.filename() != r.id()) {
        return fail(ExitCode::bad_data,
                    r.path + " is not where sonata puts run " + r.id() + "'s worktree");
    }
    auto common = common_dir(r.repo);
    SONATA_TRY(common);
    const std::string admin = registered_git_dir(*common, link_of(r));
    std::error_code ec;
    fs::remove_all(path, ec); // a link is removed, never followed
    if (ec) return fail(ExitCode::failure, "cannot remove " + r.path + " (" + ec.message() + ")");
    if (!admin.empty()) fs::remove_all(admin, ec);
    if (ec) return fail(ExitCode::failure, "cannot remove " + admin + " (" + ec.message() + ")");
    return {};
}

} // namespace sonata::dispatch
