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
    // The parent's rules cannot be read: every dispatch is refused, and doctor says so as a
    // blocker naming the first file (the user's, after the managed one that is not there).
    for (auto& check : expected) {
        if (check.at("check") != "parent rules") continue;
        check = {{"check", "parent rules"},
                 {"status", "blocker"},
                 {"detail", m_home + "/.claude/settings.json: not JSON (" + why + ")"},
                 {"fix", "fix the file: sonata refuses every dispatch while it cannot read the "
                         "rules"}};
    }
    EXPECT_EQ(doctor(1), expected);
}

// Cause 11: a .mcp.json the project had before `init` lost it at `init --remove`, which deleted
// any file that taking sonata's server out left empty. Only a file init created goes.
TEST_F(HostileHome, InitRemoveKeepsAMcpJsonThatWasThereBefore) {
    for (const std::string theirs : {"{}\n", "{}"}) {
        const std::string project = m_dir.make_dir("before-" + std::to_string(theirs.size()));
        write_text(project + "/.mcp.json", theirs);
        const auto added = sonata({"init", "--yes"}, project);
        ASSERT_EQ(added.exit_code, 0) << added.err;
        ASSERT_NE(read_text(project + "/.mcp.json").find("\"sonata\""), std::string::npos);
        const auto removed = sonata({"init", "--remove", "--yes"}, project);
        EXPECT_EQ(removed.exit_code, 0) << removed.err;
        ASSERT_TRUE(fs::exists(project + "/.mcp.json")) << "deleted a file init did not create";
        EXPECT_EQ(read_text(project + "/.mcp.json"), theirs);
    }
    // The file init created itself still goes, and so does the note that it did.
    ASSERT_EQ(sonata({"init", "--yes"}).exit_code, 0);
    ASSERT_EQ(sonata({"init", "--remove", "--yes"}).exit_code, 0);
    EXPECT_EQ(tree(m_project), (std::set<std::string>{".claude/", ".claude/settings.json"}));
    write_text(m_project + "/.mcp.json", "{}\n");
    ASSERT_EQ(sonata({"init", "--yes"}).exit_code, 0);
    ASSERT_EQ(sonata({"init", "--remove", "--yes"}).exit_code, 0);
    EXPECT_EQ(read_text(m_project + "/.mcp.json"), "{}\n");
}

// Cause 11: a dangling ~/.claude.json (or ~/.claude/settings.json) link, say into a dotfiles
// checkout not yet cloned, was silently replaced by a file of init's own.
TEST_F(HostileHome, InitGlobalRefusesADanglingSymlinkAndChangesNothing) {
    const std::string dotfiles = m_dir.path() + "/dotfiles";
    for (const std::string name : {".claude.json", ".claude/settings.json"}) {
        const std::string link = m_home + "/" + name;
        const std::string target = dotfiles + "/" + fs::path(name).filename().string();
        fs::create_directories(fs::path(link).parent_path());
        fs::create_symlink(target, link);
        const auto before = tree(m_dir.path());
        const auto run = sonata({"init", "--scope", "global", "--yes"});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << run.out;
        EXPECT_EQ(run.err, "sonata: error: " + link + " is a symlink to " + target +
                               ", which does not exist: create the file there or remove the "
                               "link (nothing was changed)\n");
        EXPECT_TRUE(fs::is_symlink(link));
        EXPECT_EQ(fs::read_symlink(link), target);
        EXPECT_EQ(tree(m_dir.path()), before);
        fs::remove(link);
    }
}

// Cause 11: with HOME=home, `init --scope global` wrote home/.claude/settings.json and
// home/.claude.json under whatever directory it ran in.
TEST_F(HostileHome, InitGlobalRefusesARelativeHome) {
    m_env["HOME"] = "home";
    const auto before = tree(m_dir.path());
    for (const auto& flags :
         {std::vector<std::string>{"init", "--scope", "global", "--yes"},
          std::vector<std::string>{"init", "--scope", "global", "--remove", "--yes"}}) {
        const auto run = sonata(flags);
        EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << run.out;
        EXPECT_EQ(run.err, "sonata: error: HOME is a relative path ('home'): init --scope global "
                           "edits files under HOME, which must be absolute\n");
        EXPECT_EQ(run.out, "");
        EXPECT_EQ(tree(m_dir.path()), before);
    }
}

// The receipt reader took 4294967296 as exit code 0, 0.5 as 0 and -1 as 2^64-1: a planted
// receipt's numbers must be integers of the field's range, or the receipt is malformed.
TEST_F(HostileHome, AReceiptWhoseNumbersAreNotWhatSonataWritesIsMalformed) {
    const std::string id = "20260101-000000000-abcdef";
    const std::string dir = m_project + "/.sonata/runs/" + id;
    dispatch::Receipt receipt;
    receipt.id = id;
    receipt.harness = "claude";
    receipt.state = dispatch::RunState::done;
    receipt.exit_code = 0;
    const json valid = json::parse(dispatch::receipt_to_json(receipt));
    write_text(dir + "/receipt.json", valid.dump());
    const auto control = sonata({"status", id});
    ASSERT_EQ(control.exit_code, 0) << "control: the unchanged receipt reads\n" << control.err;
    const std::vector<std::pair<json::json_pointer, json>> cases{
        {json::json_pointer("/exit_code"), 4294967296LL},
        {json::json_pointer("/exit_code"), 0.5},
        {json::json_pointer("/term_signal"), 1e300},
        {json::json_pointer("/supervisor_start"), -1},
        {json::json_pointer("/queue_slot"), 2.5},
        {json::json_pointer("/cost/input_tokens"), 1.5},
    };
    for (const auto& [pointer, value] : cases) {
        json planted = valid;
        planted[pointer] = value;
        write_text(dir + "/receipt.json", planted.dump());
        const auto run = sonata({"status", id});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << pointer << " " << run.out;
        const std::string key = pointer.back();
        EXPECT_EQ(run.err, "sonata: error: " + dir + "/receipt.json: malformed receipt ('" + key +
                               "' is not an integer in its range)\n")
            << pointer;
    }
}

} // namespace
} // namespace sonata
