// Placeholder until the system runner lands.
#include "core/process.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

extern char** environ;

namespace sonata {

Environment current_environment() {
    Environment env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry(*e);
        const auto eq = entry.find('=');
        if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
    return env;
}

std::optional<std::string> search_path(const std::string& name, const std::string& path_var) {
    if (name.find('/') != std::string::npos) return name;
    std::stringstream dirs(path_var);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) continue;
        const std::string candidate = dir + "/" + name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return std::nullopt;
}

namespace {
class Unavailable final : public ProcessRunner {
public:
    Result<ProcessResult> run(const ProcessRequest&) override { return fail(ExitCode::failure, "process runner not built"); }
};
}  // namespace

std::unique_ptr<ProcessRunner> make_system_runner() { return std::make_unique<Unavailable>(); }

}  // namespace sonata
