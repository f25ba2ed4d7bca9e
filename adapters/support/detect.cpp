// Executable discovery and version detection. A hanging `--version` is killed at the timeout.
#include "adapters/support/detect.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace sonata::adapters {
namespace {

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string expand_home(const std::string& dir, const Environment& env) {
    if (dir.rfind("~/", 0) != 0) return dir;
    const auto home = env.find("HOME");
    return (home == env.end() ? std::string("/root") : home->second) + dir.substr(1);
}

}  // namespace

HarnessStatus locate_harness(const Adapter& adapter, const std::string& id, const Config& config,
                             const Environment& env) {
    HarnessStatus status{id, false, {}, {}, {}};
    if (const HarnessConfig* configured = config.harness(id); configured && !configured->path.empty()) {
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
        for (const auto& dir : adapter.install_dirs()) {
            const std::string candidate = expand_home(dir, env) + "/" + name;
            if (is_executable_file(candidate)) {
                status.installed = true;
                status.path = candidate;
                return status;
            }
        }
    }
    status.note = "not found on PATH or in the usual install directories";
    return status;
}

HarnessStatus detect_harness(const Adapter& adapter, const std::string& id, const Config& config,
                             const Environment& env, ProcessRunner& runner) {
    HarnessStatus status = locate_harness(adapter, id, config, env);
    if (!status.installed) return status;
    ProcessRequest request;
    request.argv = {status.path};
    for (const auto& arg : adapter.version_args()) request.argv.push_back(arg);
    request.env = env;
    request.timeout = config.version_timeout;
    request.max_output_bytes = 64U * 1024U;
    auto result = runner.run(request);
    if (!result) {
        status.note = "version command could not start: " + result.error().message;
    } else if (result->timed_out) {
        status.note = "version command did not answer within " + std::to_string(config.version_timeout.count()) + " s";
    } else {
        status.version = adapter.parse_version(result->out + "\n" + result->err);
        if (status.version.empty()) status.note = "version output not recognised";
    }
    return status;
}

}  // namespace sonata::adapters
