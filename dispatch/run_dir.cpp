// Run directories: the root, fresh ids, and checked lookups.
#include "dispatch/run_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <utility>

#include <sys/file.h>
#include <sys/stat.h>

#include "core/config.hpp"
#include "core/fs.hpp"

namespace sonata::dispatch {
namespace fs = std::filesystem;
namespace {

std::string env_or_empty(const Environment& env, const std::string& key) {
    const auto it = env.find(key);
    return it == env.end() ? std::string() : it->second;
}

std::string new_id() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::random_device random;
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, "%03d-%06x", static_cast<int>(ms), random() & 0xffffffU);
    return std::string(stamp) + suffix;
}

/// $XDG_STATE_HOME/sonata/runs, or its default under HOME.
Result<std::string> state_runs_root(const Environment& env) {
    const std::string state = env_or_empty(env, "XDG_STATE_HOME");
    if (!state.empty() && state.front() == '/') return state + "/sonata/runs";
    if (!state.empty())
        return fail(ExitCode::config, "XDG_STATE_HOME is a relative path ('" + state + "')");
    const std::string home = env_or_empty(env, "HOME");
    if (home.empty() || home.front() != '/') {
        return fail(
            ExitCode::config,
            "neither HOME nor XDG_STATE_HOME is an absolute path: sonata cannot place its runs");
    }
    return home + "/.local/state/sonata/runs";
}

} // namespace

Result<void> refuse_links(const std::string& dir, const std::string& sub) {
    fs::path at = dir;
    for (const auto& part : fs::path(sub)) {
        at /= part;
        struct stat st {};
        if (::lstat(at.c_str(), &st) != 0) return {};
        if (S_ISLNK(st.st_mode)) {
            return fail(ExitCode::bad_data,
                        at.string() + " is a link: sonata never follows a link in its own "
                                      "directories (a repository can hold one); remove it");
        }
    }
    return {};
}

Result<void> make_project_dir(const std::string& repo) {
    SONATA_TRY(refuse_links(repo, ".sonata"));
    if (::mkdir((repo + "/.sonata").c_str(), 0755) != 0 && errno != EEXIST) {
        return fail(ExitCode::failure,
                    "cannot create " + repo + "/.sonata (" +
                        std::error_code(errno, std::generic_category()).message() + ")");
    }
    return refuse_links(repo, ".sonata");
}

Result<std::string> runs_root(const std::string& cwd, const Environment& env) {
    const auto where = locate_config(cwd, env);
    if (where.project_dir.empty()) return state_runs_root(env);
    SONATA_TRY(refuse_links(where.project_dir, ".sonata/runs"));
    return where.project_dir + "/.sonata/runs";
}

Result<std::vector<std::string>> runs_roots(const std::string& cwd, const Environment& env) {
    auto root = runs_root(cwd, env);
    SONATA_TRY(root);
    std::vector<std::string> roots{*root};
    if (auto state = state_runs_root(env); state && *state != *root) roots.push_back(*state);
    return roots;
}

bool is_safe_run_id(std::string_view id) {
    if (id.empty() || id.size() > 64) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
}

Result<std::string> create_run_dir(const std::string& root) {
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec)
        return fail(ExitCode::failure,
                    "cannot create the runs directory " + root + " (" + ec.message() + ")");
    for (int attempt = 0; attempt < 16; ++attempt) {
        const std::string id = new_id();
        if (::mkdir((root + "/" + id).c_str(), 0700) == 0) return id;
        if (errno != EEXIST) {
            return fail(ExitCode::failure,
                        "cannot create a run directory under " + root + " (" +
                            std::error_code(errno, std::generic_category()).message() + ")");
        }
    }
    return fail(ExitCode::failure, "cannot find a fresh run id under " + root);
}

Result<RunDirectory> RunDirectory::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return fail(ExitCode::bad_data,
                    path + (errno == ELOOP || errno == ENOTDIR
                                ? ": not a run directory of sonata's (a link or a file)"
                                : ": cannot open the run directory"));
    }
    RunDirectory dir(fd, path);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
        return fail(ExitCode::bad_data, path + ": not a run directory of this user's");
    return dir;
}

RunDirectory::RunDirectory(RunDirectory&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)) {}

RunDirectory& RunDirectory::operator=(RunDirectory&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = std::exchange(other.m_fd, -1);
        m_path = std::move(other.m_path);
    }
    return *this;
}

RunDirectory::~RunDirectory() {
    if (m_fd >= 0) ::close(m_fd);
}

std::string RunDirectory::name() const { return fs::path(m_path).filename().string(); }

Result<std::string> RunDirectory::read(const std::string& name, std::size_t max_bytes) const {
    return read_file_bounded_at(m_fd, name, max_bytes, m_path + "/" + name);
}

Result<void> RunDirectory::write(const std::string& name, const std::string& content,
                                 Durability durability) const {
    const WriteOptions options{
        .mode = 0600, .durability = durability, .parents = Parents::must_exist};
    auto written = write_file_atomic_at(m_fd, name, content, options);
    if (!written)
        return fail(written.error().code,
                    "cannot write " + m_path + "/" + name + " (" + written.error().message + ")");
    return {};
}

bool RunDirectory::exists(const std::string& name) const {
    struct stat st {};
    return ::fstatat(m_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

void RunDirectory::remove(const std::string& name) const { ::unlinkat(m_fd, name.c_str(), 0); }

bool RunDirectory::lock_as_supervisor() const { return ::flock(m_fd, LOCK_EX | LOCK_NB) == 0; }

bool RunDirectory::supervised() const {
    // A second open file description: a lock this one held would not conflict with itself.
    const int probe = ::openat(m_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (probe < 0) return false;
    const bool held = ::flock(probe, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(probe);
    return held;
}

Result<std::string> run_dir(const std::string& root, const std::string& id) {
    if (!is_safe_run_id(id)) {
        return fail(ExitCode::usage,
                    "run id '" + id.substr(0, 64) + "' is not a run id (1 to 64 of a-z 0-9 -)");
    }
    const std::string dir = root + "/" + id;
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return fail(ExitCode::bad_data,
                    "no run " + id + " under " + root + " (`sonata runs` lists them)");
    }
    if (st.st_uid != ::geteuid())
        return fail(ExitCode::bad_data, dir + ": not a run directory of this user's");
    return dir;
}

std::vector<std::string> list_runs(const std::string& root) {
    std::vector<std::string> ids;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
        const std::string name = entry.path().filename().string();
        if (is_safe_run_id(name) && entry.is_directory(ec) && !entry.is_symlink(ec))
            ids.push_back(name);
    }
    std::sort(ids.rbegin(), ids.rend());
    return ids;
}

Result<std::vector<std::string>> all_run_dirs(const std::string& cwd, const Environment& env) {
    auto roots = runs_roots(cwd, env);
    SONATA_TRY(roots);
    std::vector<std::pair<std::string, std::string>> runs; // id, root
    for (const auto& root : *roots)
        for (auto& id : list_runs(root))
            runs.emplace_back(std::move(id), root);
    std::stable_sort(runs.begin(), runs.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> dirs;
    for (const auto& [id, root] : runs)
        dirs.push_back(root + "/" + id);
    return dirs;
}

} // namespace sonata::dispatch
