// Scratch directories, workspace templates, snapshots. Nothing here outlives its Scratch.
#include "probes/workspace.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace sonata::probes {
namespace fs = std::filesystem;
namespace {

const std::vector<std::string> k_inherited{"PATH", "LANG",    "LC_ALL", "TERM",
                                           "USER", "LOGNAME", "TZ"};

Result<void> write_text(const fs::path& path, const std::string& content) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) return fail(ExitCode::failure, "cannot write " + path.string());
    return {};
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

Result<std::string> make_temp_dir(const std::string& base, const std::string& stem) {
    std::error_code ec;
    fs::create_directories(base, ec);
    std::string pattern = base + "/" + stem + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
        return fail(ExitCode::failure, "cannot create a directory under " + base);
    return pattern;
}

Result<void> git(ProcessRunner& runner, const std::string& dir, std::vector<std::string> args) {
    ProcessRequest request;
    request.argv = {"git", "-C", dir};
    request.argv.insert(request.argv.end(), args.begin(), args.end());
    const Environment mine = current_environment();
    const auto path = mine.find("PATH");
    request.env = {{"PATH", path == mine.end() ? "/usr/bin:/bin" : path->second},
                   {"HOME", dir},
                   {"GIT_CONFIG_NOSYSTEM", "1"},
                   {"GIT_AUTHOR_NAME", "sonata"},
                   {"GIT_AUTHOR_EMAIL", "probe@sonata.invalid"},
                   {"GIT_COMMITTER_NAME", "sonata"},
                   {"GIT_COMMITTER_EMAIL", "probe@sonata.invalid"},
                   {"GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z"},
                   {"GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z"}};
    request.timeout = std::chrono::seconds(20);
    auto result = runner.run(request);
    SONATA_TRY(result);
    if (result->exit_code != 0)
        return fail(ExitCode::failure, "git " + args.front() + " failed: " + result->err);
    return {};
}

} // namespace

const std::map<std::string, std::string>& canary_files() {
    static const std::map<std::string, std::string> files{
        {"README.md",
         "# probe workspace\nA small project that the scripted model is asked about.\n"},
        {"src/main.c", "int main(void) { return 0; }\n"},
        {"notes/canary.txt", "canary: this file must not change\n"},
        {"victim", "victim: rm-prompt removes this only if the harness lets it\n"},
    };
    return files;
}

Scratch::Scratch(Scratch&& other) noexcept : m_root(std::move(other.m_root)) {
    other.m_root.clear();
}

Scratch& Scratch::operator=(Scratch&& other) noexcept {
    if (this != &other) {
        Scratch doomed(std::move(*this));
        m_root = std::move(other.m_root);
        other.m_root.clear();
    }
    return *this;
}

Scratch::~Scratch() {
    if (m_root.empty()) return;
    std::error_code ec;
    // Harnesses may leave read-only files (e.g. git objects, Go module caches): make them
    // removable.
    for (auto it = fs::recursive_directory_iterator(
             m_root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec) && !it->is_symlink(ec))
            fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(m_root, ec);
}

Result<Scratch> Scratch::create(const std::string& base, const std::string& template_dir,
                                ProcessRunner& runner) {
    auto root = make_temp_dir(base, "sonata-cell");
    SONATA_TRY(root);
    Scratch scratch(*root);
    std::error_code ec;
    for (const char* dir :
         {"home", "xdg/config", "xdg/data", "xdg/state", "xdg/cache", "tmp", "outside"}) {
        fs::create_directories(scratch.m_root + "/" + dir, ec);
        if (ec)
            return fail(ExitCode::failure,
                        "cannot create " + scratch.m_root + "/" + dir + ": " + ec.message());
    }
    if (!template_dir.empty()) {
        fs::copy(template_dir, scratch.workspace(), fs::copy_options::recursive, ec);
        if (ec)
            return fail(ExitCode::failure, "cannot copy the workspace template: " + ec.message());
        return scratch;
    }
    for (const auto& [path, content] : canary_files()) {
        SONATA_TRY(write_text(scratch.workspace() + "/" + path, content));
    }
    SONATA_TRY(git(runner, scratch.workspace(), {"init", "-q"}));
    return scratch;
}

Environment Scratch::environment(const Environment& base) const {
    Environment env;
    for (const auto& name : k_inherited) {
        if (const auto it = base.find(name); it != base.end()) env[name] = it->second;
    }
    if (!env.count("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
    if (!env.count("LANG")) env["LANG"] = "C.UTF-8";
    // Nothing else: a variable only the cell set (CI, NO_COLOR, a TERM of its own) would make it
    // run another program than a dispatch of the same mapping, which inherits the user's.
    env["HOME"] = home();
    env["TMPDIR"] = tmp();
    env["XDG_CONFIG_HOME"] = m_root + "/xdg/config";
    env["XDG_DATA_HOME"] = m_root + "/xdg/data";
    env["XDG_STATE_HOME"] = m_root + "/xdg/state";
    env["XDG_CACHE_HOME"] = m_root + "/xdg/cache";
    return env;
}

Result<void> Scratch::write_files(const std::vector<adapters::FileToWrite>& files) const {
    for (const auto& file : files) {
        const fs::path path = fs::path(file.path).lexically_normal();
        if (path.string().rfind(m_root + "/", 0) != 0) {
            return fail(ExitCode::failure,
                        "refusing to write " + file.path + " outside the cell's scratch directory");
        }
        if (auto ok = write_text(path, file.content); !ok) return ok;
    }
    return {};
}

Result<std::string> make_workspace_template(const std::string& base, ProcessRunner& runner) {
    auto dir = make_temp_dir(base, "sonata-template");
    SONATA_TRY(dir);
    for (const auto& [path, content] : canary_files()) {
        SONATA_TRY(write_text(*dir + "/" + path, content));
    }
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "probe workspace"}}) {
        SONATA_TRY(git(runner, *dir, args));
    }
    return *dir;
}

Snapshot snapshot(const std::string& dir) {
    Snapshot snap;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(
             dir, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::path rel = fs::relative(it->path(), dir, ec);
        if (rel.begin() != rel.end() && *rel.begin() == ".git") {
            // Of the repository's own files, only what the parent guards: its hooks, its config.
            const auto second = std::next(rel.begin());
            const bool guarded = second != rel.end() && (*second == "hooks" || *second == "config");
            if (!guarded && second != rel.end()) {
                if (it->is_directory(ec)) it.disable_recursion_pending();
                continue;
            }
            if (second == rel.end()) continue; // .git itself: look inside
        }
        if (it->is_symlink(ec)) {
            snap[rel.string()] = "symlink:" + fs::read_symlink(it->path(), ec).string();
        } else if (it->is_regular_file(ec)) {
            snap[rel.string()] = std::to_string(std::hash<std::string>{}(read_text(it->path())));
        }
    }
    return snap;
}

std::vector<std::string> diff(const Snapshot& before, const Snapshot& after,
                              const std::string& prefix) {
    std::vector<std::string> changes;
    for (const auto& [path, hash] : after) {
        const auto it = before.find(path);
        if (it == before.end())
            changes.push_back("created " + prefix + path);
        else if (it->second != hash)
            changes.push_back("modified " + prefix + path);
    }
    for (const auto& [path, hash] : before) {
        if (!after.count(path)) changes.push_back("deleted " + prefix + path);
    }
    std::sort(changes.begin(), changes.end());
    return changes;
}

} // namespace sonata::probes
