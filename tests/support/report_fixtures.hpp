// Helpers for the report tests: sample matrices from fixtures/matrices, golden files under
// fixtures/golden/report (SONATA_UPDATE_GOLDEN=1 rewrites them and fails the test), and a private
// directory tree for runs of the sonata binary.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "core/matrix.hpp"
#include "core/process.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::testing {

inline std::string source_path(const std::string& relative) {
    return std::string(SONATA_SOURCE_DIR) + "/" + relative;
}

inline std::string matrix_fixture(const std::string& name) {
    return source_path("fixtures/matrices/" + name);
}

/// A sample matrix; throws (failing the test) when the fixture does not load.
inline Matrix load_fixture(const std::string& name) {
    auto matrix = load_matrix(matrix_fixture(name));
    if (!matrix) throw std::runtime_error(matrix.error().message);
    return *matrix;
}

/// Compares `actual` with fixtures/golden/report/<name>. With SONATA_UPDATE_GOLDEN=1 the file is
/// rewritten and the test fails, so that the change is read in `git diff` before it is committed.
inline void expect_golden(const std::string& name, const std::string& actual) {
    const std::string path = source_path("fixtures/golden/report/" + name);
    const char* update = std::getenv("SONATA_UPDATE_GOLDEN");
    if (update != nullptr && std::string(update) == "1") {
        write_text(path, actual);
        ADD_FAILURE()
            << "rewrote golden file " << name
            << ": read `git diff fixtures/golden`, then run again without SONATA_UPDATE_GOLDEN";
        return;
    }
    if (!std::filesystem::exists(path)) {
        ADD_FAILURE() << "no golden file " << name << ": run once with SONATA_UPDATE_GOLDEN=1";
        return;
    }
    EXPECT_EQ(actual, read_text(path)) << "golden file " << name << " differs";
}

/// A fresh directory with HOME, XDG dirs and TMPDIR inside it, removed at the end of the test.
class Sandbox {
public:
    Sandbox() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "sonata-test-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        m_root = pattern;
        for (const char* dir : {"home", "config", "data", "state", "cache", "tmp", "work"}) {
            std::filesystem::create_directories(m_root / dir);
        }
    }
    ~Sandbox() {
        std::error_code ec;
        std::filesystem::remove_all(m_root, ec);
    }
    Sandbox(const Sandbox&) = delete;
    Sandbox& operator=(const Sandbox&) = delete;

    std::string path(const std::string& relative) const { return (m_root / relative).string(); }

    /// A complete environment for a child: nothing of this process's but PATH and LANG.
    Environment env() const {
        const Environment mine = current_environment();
        Environment env{{"HOME", path("home")},
                        {"XDG_CONFIG_HOME", path("config")},
                        {"XDG_DATA_HOME", path("data")},
                        {"XDG_STATE_HOME", path("state")},
                        {"XDG_CACHE_HOME", path("cache")},
                        {"TMPDIR", path("tmp")}};
        for (const char* name : {"PATH", "LANG"}) {
            if (const auto it = mine.find(name); it != mine.end()) env[name] = it->second;
        }
        return env;
    }

    /// Runs the sonata binary in the work directory with env() plus `extra`.
    ProcessResult run_sonata(const std::vector<std::string>& args,
                             const Environment& extra = {}) const {
        ProcessRequest request;
        request.argv = {SONATA_BIN};
        request.argv.insert(request.argv.end(), args.begin(), args.end());
        request.env = env();
        for (const auto& [name, value] : extra)
            request.env[name] = value;
        request.cwd = path("work");
        request.timeout = std::chrono::seconds(60);
        auto result = make_system_runner()->run(request);
        if (!result) throw std::runtime_error(result.error().message);
        return *result;
    }

private:
    std::filesystem::path m_root;
};

} // namespace sonata::testing
