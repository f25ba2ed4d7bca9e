// copilot's executable carries its package (~235 MB) and unpacks it into its cache directory
// whenever that holds none, so under every fresh HOME. Two runs of the pinned copilot, each under
// a fresh HOME and XDG dirs as a probe cell or a dispatch has them, against the scripted model:
// the package is unpacked once, into the one directory every mapping names, and nowhere under
// either HOME; the runs share nothing else (each HOME holds its own session, config and logs).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "adapters/registry.hpp"
#include "adapters/support/unpacked_package.hpp"
#include "core/process.hpp"
#include "dispatch/launch.hpp"
#include "probes/model_server.hpp"
#include "probes/script.hpp"
#include "probes/workspace.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/plan_helpers.hpp"
#include "tests/support/real_dispatch.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_variable = "COPILOT_PKG_CACHE_HOME";

/// The names in `dir`.
std::set<std::string> names_in(const std::string& dir) {
    std::set<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        names.insert(it->path().filename().string());
    return names;
}

/// Every unpacked copilot package under `root` (a directory holding copilot's completion marker),
/// and the bytes of every file there.
std::pair<std::vector<std::string>, std::uintmax_t> packages_and_size(const std::string& root) {
    std::vector<std::string> packages;
    std::uintmax_t bytes = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename() == ".extraction-complete")
            packages.push_back(it->path().parent_path().string());
        if (it->is_regular_file(ec) && !it->is_symlink(ec)) bytes += it->file_size(ec);
    }
    return {packages, bytes};
}

ino_t inode_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

class CopilotUnpack : public ::testing::Test {
protected:
    void SetUp() override {
        for (const auto& pin : testing::pins()) {
            if (pin.id == "copilot") m_pin = pin;
        }
        const char* path = std::getenv("PATH");
        m_bin = search_path(m_pin.binary, path != nullptr ? path : "/usr/bin:/bin").value_or("");
        if (!m_bin.empty()) return;
        const std::string why = testing::missing_harness_skip_reason();
        if (why.empty()) FAIL() << "copilot " << m_pin.version << " is not installed";
        GTEST_SKIP() << "copilot " << m_pin.version << " is not installed: " << why;
    }

    /// One acceptEdits run as the planner maps it, with the package directory the mapping names
    /// moved to `shared`, in `scratch`'s world against a model that answers `token`; its stdout.
    std::string run(const probes::Scratch& scratch, const std::string& shared,
                    const std::string& token) {
        auto decided = testing::decide_real({"copilot", m_bin, m_pin.version, Mode::accept_edits,
                                             RoleKind::write, m_dir.make_dir("support")});
        EXPECT_TRUE(decided && decided->runs());
        if (!decided || !decided->runs()) return {};
        Decision decision = *decided;
        Invocation& planned = std::get<Invocation>(decision.outcome);
        // The mapping names the machine's directory; the test's own starts empty.
        const auto& spec = (**adapters::find_adapter("copilot")).spec();
        const auto named = planned.env.find(k_variable);
        EXPECT_TRUE(named != planned.env.end() &&
                    named->second == adapters::unpacked_package_dir(spec, current_environment()))
            << testing::show(planned);
        if (named != planned.env.end()) named->second = shared;
        auto script = probes::parse_script(
            nlohmann::json{{"steps", nlohmann::json::array()}, {"final", token}}.dump());
        EXPECT_TRUE(script);
        if (!script) return {};
        probes::ModelServer server(*script, (**adapters::find_adapter("copilot")).tools(),
                                   scratch.workspace());
        EXPECT_TRUE(server.start());
        auto aimed = testing::aimed_at(decision, server, scratch, scratch.workspace());
        EXPECT_TRUE(aimed) << aimed.error().message;
        if (!aimed) return {};
        const Invocation& inv = aimed->invocation();
        auto request = dispatch::headless_request(
            inv, "Answer with your final message.",
            dispatch::child_environment(scratch.environment(current_environment()), inv),
            scratch.workspace());
        request.timeout = std::chrono::seconds(180);
        auto result = make_system_runner()->run(request);
        EXPECT_TRUE(result && result->exit_code == 0)
            << (result ? result->err : result.error().message);
        if (!result) return {};
        std::cout << token << ": " << result->duration.count() << " ms\n";
        EXPECT_EQ((**adapters::find_adapter("copilot")).final_message(result->out), token);
        return result->out;
    }

    testing::Pin m_pin;
    std::string m_bin;
    testing::ScratchDir m_dir;
};

TEST_F(CopilotUnpack, TwoRunsUnderFreshHomesUnpackOnceAndShareNothingElse) {
    auto runner = make_system_runner();
    auto first = probes::Scratch::create(m_dir.path(), "", *runner);
    auto second = probes::Scratch::create(m_dir.path(), "", *runner);
    ASSERT_TRUE(first && second);
    const std::string shared = m_dir.path() + "/unpacked";
    const std::string package = shared + "/pkg/linux-x64/" + m_pin.version;

    const std::string out1 = run(*first, shared, "unpack-one");
    ASSERT_TRUE(fs::exists(package + "/.extraction-complete"));
    const ino_t unpacked = inode_of(package);
    const ino_t marker = inode_of(package + "/.extraction-complete");
    const std::string out2 = run(*second, shared, "unpack-two");

    // Unpacked once: the second run took the first run's package as it was.
    EXPECT_EQ(inode_of(package), unpacked);
    EXPECT_EQ(inode_of(package + "/.extraction-complete"), marker);
    // The shared directory holds the package and nothing else (no leftover temporary copy).
    EXPECT_EQ(names_in(shared), std::set<std::string>{"pkg"});
    EXPECT_EQ(names_in(shared + "/pkg"), std::set<std::string>{"linux-x64"});
    EXPECT_EQ(names_in(shared + "/pkg/linux-x64"), std::set<std::string>{m_pin.version});
    // Neither run's world holds a package, and each is small.
    for (const auto* scratch : {&*first, &*second}) {
        const auto [packages, bytes] = packages_and_size(fs::path(scratch->home()).parent_path());
        EXPECT_TRUE(packages.empty()) << packages.front();
        EXPECT_LT(bytes, 20U * 1024U * 1024U) << scratch->home();
    }
    // Each HOME keeps its own session, config and logs, and not the other's.
    const auto& copilot = **adapters::find_adapter("copilot");
    const std::string id1 = copilot.session_id(out1, "", first->home(), {});
    const std::string id2 = copilot.session_id(out2, "", second->home(), {});
    ASSERT_FALSE(id1.empty() || id2.empty());
    EXPECT_NE(id1, id2);
    const auto own = [](const probes::Scratch& s) {
        return s.home() + "/.config/sonata/support/copilot-home";
    };
    EXPECT_EQ(names_in(own(*first) + "/session-state").count(id1), 1U);
    EXPECT_EQ(names_in(own(*first) + "/session-state").count(id2), 0U);
    EXPECT_EQ(names_in(own(*second) + "/session-state").count(id2), 1U);
    EXPECT_EQ(names_in(own(*second) + "/session-state").count(id1), 0U);
    for (const auto* scratch : {&*first, &*second}) {
        EXPECT_TRUE(fs::exists(own(*scratch) + "/config.json"));
        EXPECT_FALSE(names_in(own(*scratch) + "/logs").empty());
    }
}

} // namespace
} // namespace sonata
