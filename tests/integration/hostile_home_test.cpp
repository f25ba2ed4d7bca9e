// A home directory and a cloned repository in odd states, against the real binary: Claude Code
// files nested past any stack or holding the wrong types (`doctor` still prints every check and
// names the file it skipped), a .mcp.json that was there before `init`, a dangling ~/.claude.json
// link, a relative HOME, and a planted receipt whose numbers are not what sonata writes.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "dispatch/receipt.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::run_sonata;
using testing::ScratchDir;
using testing::SonataRun;
using testing::tree;
using testing::write_text;

/// A run that would hang ends after this, as exit 124, instead of holding the suite.
const std::vector<std::string> k_bounded{"/usr/bin/timeout", "60"};

/// 100 KB of valid JSON nested 50 000 deep: what a cloned repository can plant.
std::string nested_deep() { return std::string(50000, '[') + std::string(50000, ']'); }

class HostileHome : public ::testing::Test {
protected:
    ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_home = m_env.at("HOME");
    std::string m_project = m_dir.make_dir("project");

    SonataRun sonata(const std::vector<std::string>& args, const std::string& cwd = {}) {
        return run_sonata(args, m_env, cwd.empty() ? m_project : cwd, std::nullopt, k_bounded);
    }

    /// `doctor --json`'s whole list; fails the test when the output is not a JSON array.
    json doctor(int expected_exit) {
        const auto run = sonata({"doctor", "--json"});
        EXPECT_EQ(run.exit_code, expected_exit) << run.out << run.err;
        auto list = json::parse(run.out, nullptr, false);
        EXPECT_TRUE(list.is_array()) << "exit " << run.exit_code << "\n" << run.out << run.err;
        return list.is_array() ? list : json::array();
    }

    static json skipped(const std::string& path, const std::string& why) {
        return {{"check", "unreadable file"},
                {"status", "warning"},
                {"detail", path + ": " + why + "; doctor could not look inside it"},
                {"fix", "fix or move " + path}};
    }
};

// Cause 9: `hooks` of the wrong type aborted doctor with "internal error: type_error.306" and no
// checks at all. Now every check is there, as in a project without the file, and the file is named.
TEST_F(HostileHome, DoctorNamesASettingsFileWhoseHooksIsNotAnObjectAndRunsEveryCheck) {
    const json baseline = doctor(0);
    ASSERT_EQ(baseline.at(0).at("check"), "config");
    ASSERT_EQ(baseline.at(1).at("check"), "hook");
    const std::string settings = m_project + "/.claude/settings.json";
    for (const std::string hooks : {R"("none")", "[]", "7"}) {
        write_text(settings, R"({"hooks": )" + hooks + "}\n");
        json expected = baseline;
        expected.insert(expected.begin() + 1, skipped(settings, "'hooks' is not an object"));
        EXPECT_EQ(doctor(0), expected) << hooks;
    }
    write_text(settings, R"({"hooks": {"PreToolUse": {"matcher": "*"}}})");
    json expected = baseline;
    expected.insert(expected.begin() + 1, skipped(settings, "'hooks.PreToolUse' is not an array"));
    EXPECT_EQ(doctor(0), expected);
}

// Cause 9: any JSON file doctor reads, nested 50 000 deep, was a segfault (exit 139).
TEST_F(HostileHome, DoctorSkipsEveryFileNestedPastAnyStackAndRunsEveryCheck) {
    const json baseline = doctor(0);
    ASSERT_EQ(baseline.at(1).at("check"), "hook");
    ASSERT_EQ(baseline.at(2).at("check"), "mcp");
    const std::string why = "nested deeper than 512 levels";
    // In the order doctor reads them: the plugin list, then the hook's files, then the MCP ones.
    const std::vector<std::string> before_hook{
        m_home + "/.claude/plugins/installed_plugins.json", m_project + "/.claude/settings.json",
        m_project + "/.claude/settings.local.json", m_home + "/.claude/settings.json"};
    const std::vector<std::string> before_mcp{m_project + "/.mcp.json", m_home + "/.claude.json"};
    json expected = json::array({baseline.at(0)});
    for (const auto& path : before_hook) {
        write_text(path, nested_deep());
        expected.push_back(skipped(path, why));
    }
    expected.push_back(baseline.at(1));
    for (const auto& path : before_mcp) {
        write_text(path, nested_deep());
        expected.push_back(skipped(path, why));
    }
    expected.insert(expected.end(), baseline.begin() + 2, baseline.end());
    EXPECT_EQ(doctor(0), expected);
}

} // namespace
} // namespace sonata
