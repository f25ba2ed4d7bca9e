// ScratchDir and hermetic_env: per-test directories and environments for real child processes.
#include "tests/support/scratch_dir.hpp"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "core/node_runtime.hpp"

namespace sonata::testing {

ScratchDir::ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sonata-test-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    m_path = std::filesystem::canonical(buffer.data()).string();
}

ScratchDir::~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
}

std::string ScratchDir::make_dir(const std::string& relative) const {
    const std::string dir = m_path + "/" + relative;
    std::filesystem::create_directories(dir);
    return dir;
}

Environment hermetic_env(const ScratchDir& dir) {
    // The runtimes setup installed for the pinned harnesses (Node.js 22), as a user's own HOME
    // would have them: the harness cache itself stays out of the scratch world.
    Environment env{
        {"HOME", dir.make_dir("home")},
        {"LANG", "C.UTF-8"},
        {"PATH", "/usr/bin:/bin"},
        {"TMPDIR", dir.make_dir("tmp")},
        {"XDG_CACHE_HOME", dir.make_dir("xdg/cache")},
        {"XDG_CONFIG_HOME", dir.make_dir("xdg/config")},
        {"XDG_DATA_HOME", dir.make_dir("xdg/data")},
        {"XDG_STATE_HOME", dir.make_dir("xdg/state")},
    };
    if (const std::string runtimes = harness_runtimes_dir(current_environment()); !runtimes.empty())
        env["SONATA_RUNTIMES_DIR"] = runtimes;
    return env;
}

} // namespace sonata::testing
