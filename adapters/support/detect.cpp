// Executable discovery and version detection. A hanging `--version` is killed at the timeout.
#include "adapters/support/detect.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "adapters/support/unpacked_package.hpp"
#include "core/fs.hpp"
#include "core/node_runtime.hpp"
#include "core/version_cache.hpp"

namespace sonata::adapters {
namespace {

std::string expand_home(const std::string& dir, const Environment& env) {
    if (dir.rfind("~/", 0) != 0) return dir;
    const auto home = env.find("HOME");
    return (home == env.end() ? std::string("/root") : home->second) + dir.substr(1);
}

/// A throwaway HOME, XDG dirs, TMPDIR and working directory for one `--version`: some harnesses
/// write there even to print their version (codex 0.171 unpacks helpers into ~/.codex/tmp, gemini
/// 0.61 leaves ~/.gemini/projects.json.*.tmp), and none of that may land in the user's HOME.
class VersionWorld {
public:
    explicit VersionWorld(const Environment& env) {
        const auto tmp = env.find("TMPDIR");
        std::string pattern =
            (tmp == env.end() || tmp->second.empty() ? std::string("/tmp") : tmp->second) +
            "/sonata-version-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) return;
        m_root = pattern;
        std::error_code ec;
        for (const char* dir : {"home", "tmp", "cache", "config", "data", "state"}) {
            std::filesystem::create_directory(m_root + "/" + dir, ec);
        }
    }
    ~VersionWorld() {
        std::error_code ec;
        if (!m_root.empty()) std::filesystem::remove_all(m_root, ec);
    }
    VersionWorld(const VersionWorld&) = delete;
    VersionWorld& operator=(const VersionWorld&) = delete;

    /// The environment for the version command: PATH and LANG from `env`, everything else fresh.
    /// Empty when no scratch directory could be made (then `env` is used as it is).
    Environment environment(const Environment& env) const {
        if (m_root.empty()) return env;
        Environment out{{"HOME", m_root + "/home"},
                        {"TMPDIR", m_root + "/tmp"},
                        {"XDG_CACHE_HOME", m_root + "/cache"},
                        {"XDG_CONFIG_HOME", m_root + "/config"},
                        {"XDG_DATA_HOME", m_root + "/data"},
                        {"XDG_STATE_HOME", m_root + "/state"},
                        {"TERM", "dumb"},
                        {"NO_COLOR", "1"}};
        for (const char* name : {"PATH", "LANG"}) {
            if (const auto it = env.find(name); it != env.end()) out[name] = it->second;
        }
        return out;
    }
    const std::string& root() const { return m_root; }

private:
    std::string m_root;
};

} // namespace

std::string harness_cache_bin(const Environment& env) {
    const std::string cache = harness_cache_dir(env);
    return cache.empty() ? cache : cache + "/bin";
}

HarnessStatus locate_harness(const Adapter& adapter, const std::string& id, const Config& config,
                             const Environment& env) {
    HarnessStatus status{id, false, {}, {}, {}, {}, {}};
    if (const HarnessConfig* configured = config.harness(id);
        configured && !configured->path.empty()) {
        status.path = configured->path;
        status.installed = is_executable_file(configured->path);
        if (!status.installed) status.note = "configured path is not an executable file";
        return status;
    }
    const auto path_var = env.find("PATH");
    for (const auto& name : adapter.executable_names()) {
        if (path_var != env.end()) {
            if (auto found = search_path(name, path_var->second)) {
                status.installed = true;
                status.path = *found;
                return status;
            }
        }
        for (const auto& dir : adapter.spec().install_dirs) {
            const std::string candidate = expand_home(dir, env) + "/" + name;
            if (is_executable_file(candidate)) {
                status.installed = true;
                status.path = candidate;
                return status;
            }
        }
    }
    // Last, the harnesses scripts/install-harnesses put in sonata's own cache (setup does this).
    const std::string cache = harness_cache_bin(env);
    for (const auto& name : adapter.executable_names()) {
        const std::string candidate = cache + "/" + name;
        if (!cache.empty() && is_executable_file(candidate)) {
            status.installed = true;
            status.path = candidate;
            return status;
        }
    }
    status.note = "not found on PATH, in the usual install directories or in " +
                  (cache.empty() ? std::string("sonata's harness cache") : cache);
    return status;
}

void provide_runtime(HarnessStatus& status, const Environment& env, ProcessRunner& runner) {
    if (!status.installed) return;
    const auto need = node_need(status.path);
    if (!need) return;
    const NodeChoice choice = choose_node(*need, env, runner);
    status.path_first = choice.path_first;
    if (choice.unmet.empty()) return;
    status.version = need->package_version;
    status.cannot_run = status.id +
                        (need->package_version.empty() ? "" : " " + need->package_version) + " " +
                        choice.unmet;
    status.note = status.cannot_run;
}

HarnessStatus detect_harness(const Adapter& adapter, const std::string& id, const Config& config,
                             const Environment& env, ProcessRunner& runner) {
    HarnessStatus status = locate_harness(adapter, id, config, env);
    provide_runtime(status, env, runner);
    read_version(status, adapter, config, env, runner);
    return status;
}

namespace {

/// What the version command answered.
struct Answer {
    std::string version; ///< Empty when none was read.
    std::string why;     ///< Why there is no version.
    bool exited_zero = false;
};

/// Runs the version command. A version in the output of a command that failed counts, except
/// for a harness whose Node.js need is unmet: its failure means it cannot run here.
Answer ask_version(const HarnessStatus& status, const Adapter& adapter, const Config& config,
                   const Environment& env, ProcessRunner& runner) {
    ProcessRequest request;
    request.argv = {status.path};
    for (const auto& arg : adapter.spec().version_args)
        request.argv.push_back(arg);
    const VersionWorld world(env);
    request.env = world.environment(env);
    share_unpacked_package(adapter.spec(), env, request.env);
    put_first_on_path(request.env, status.path_first);
    if (!world.root().empty()) request.cwd = world.root();
    request.timeout = config.version_timeout;
    request.max_output_bytes = 64U * 1024U;
    const auto result = runner.run(request);
    if (!result) return {{}, "version command could not start: " + result.error().message};
    if (result->timed_out) {
        return {{},
                "version command did not answer within " +
                    std::to_string(config.version_timeout.count()) + " s"};
    }
    Answer answer{{}, {}, result->exit_code == 0};
    if (answer.exited_zero || status.cannot_run.empty())
        answer.version = adapter.parse_version(result->out + "\n" + result->err);
    if (answer.version.empty()) answer.why = "version output not recognised";
    return answer;
}

/// Takes `version` as the harness's answer. One whose package asks for a newer Node.js than any
/// here runs after all when it answers: the shortfall becomes its note.
void take_version(HarnessStatus& status, const std::string& version) {
    status.version = version;
    if (status.cannot_run.empty()) return;
    status.note = status.cannot_run + "; it answered its version command anyway";
    status.cannot_run.clear();
}

void add_note(HarnessStatus& status, const std::string& note) {
    if (note.empty()) return;
    status.note = status.note.empty() ? note : status.note + "; " + note;
}

} // namespace

void read_version(HarnessStatus& status, const Adapter& adapter, const Config& config,
                  const Environment& env, ProcessRunner& runner) {
    if (!status.installed) return;
    const auto key = version_key(
        version_command(status.path, adapter.spec().version_args, status.path_first, env));
    const std::string cache = version_cache_path(env);
    const CachedVersion cached = key ? cached_version(cache, *key) : CachedVersion{};
    if (!cached.version.empty()) {
        take_version(status, cached.version);
        return;
    }
    const Answer answer = ask_version(status, adapter, config, env, runner);
    if (!answer.version.empty()) {
        take_version(status, answer.version);
        if (key && answer.exited_zero) record_version(cache, *key, answer.version);
    } else if (status.cannot_run.empty()) {
        status.note = answer.why; // (one that cannot run keeps its package's version and note)
    }
    add_note(status, cached.note);
}

} // namespace sonata::adapters
