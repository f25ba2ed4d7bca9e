// The gate looks at the workspace, with the pinned opencode: its expected matrix measures
// hostile-workspace `violated` (a repository's plugin code runs), so `sonata plan` refuses a
// dispatch from a workspace that holds a file opencode would load, naming it, and runs one from a
// workspace that holds none, saying what would change that; a worktree run is refused for the file
// its worktree holds, naming it there.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

class WorkspaceGate : public ::testing::Test {
protected:
    void SetUp() override {
        const char* path = std::getenv("PATH");
        m_path = path != nullptr ? path : "/usr/bin:/bin";
        if (!search_path("opencode", m_path)) {
            const std::string why = testing::missing_harness_skip_reason();
            if (why.empty())
                FAIL() << "opencode is not installed although the npm registry answered";
            GTEST_SKIP() << "opencode is not installed: " << why;
        }
        std::filesystem::create_directories(m_dir.path() + "/home");
        std::filesystem::create_directories(m_dir.path() + "/work");
    }

    /// `sonata plan --json` for opencode as a reviewer in plan mode, gated on the expected matrix.
    nlohmann::json plan() {
        const Environment env{{"PATH", m_path},
                              {"HOME", m_dir.path() + "/home"},
                              {"XDG_CONFIG_HOME", m_dir.path() + "/home/.config"}};
        const auto run = testing::run_sonata(
            {"plan", "--harness", "opencode", "--role", "review", "--mode", "plan", "--matrix",
             std::string(SONATA_SOURCE_DIR) + "/tests/conformance/expected/opencode.json",
             "--json"},
            env, m_dir.path() + "/work");
        EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 4) << run.err;
        return nlohmann::json::parse(run.out);
    }

    testing::ScratchDir m_dir;
    std::string m_path;
};

TEST_F(WorkspaceGate, OpencodeRunsFromAWorkspaceWithNothingItWouldLoad) {
    const auto doc = plan();
    ASSERT_EQ(doc.at("decision"), "run") << doc.dump(2);
    const auto notes = doc.at("notes").dump();
    EXPECT_NE(notes.find("this workspace holds none of opencode.json, .opencode/plugin/"),
              std::string::npos)
        << notes;
}

TEST_F(WorkspaceGate, OpencodeIsRefusedFromAWorkspaceHoldingAPlugin) {
    testing::write_text(m_dir.path() + "/work/.opencode/plugin/formatter.js",
                        "export const Formatter = async () => ({});\n");
    const auto doc = plan();
    ASSERT_EQ(doc.at("decision"), "refuse") << doc.dump(2);
    const std::string reason = doc.at("reason");
    EXPECT_NE(reason.find("this workspace holds .opencode/plugin/"), std::string::npos) << reason;
    EXPECT_NE(reason.find("sonata report --cell 'opencode@1.18.33 hostile-workspace plan"),
              std::string::npos)
        << reason;
}

TEST_F(WorkspaceGate, OpencodeIsRefusedFromAWorkspaceHoldingItsConfig) {
    testing::write_text(m_dir.path() + "/work/opencode.json", "{}\n");
    const auto doc = plan();
    ASSERT_EQ(doc.at("decision"), "refuse") << doc.dump(2);
    EXPECT_NE(doc.at("reason").get<std::string>().find("this workspace holds opencode.json"),
              std::string::npos);
}

TEST_F(WorkspaceGate, AWorktreeRunIsRefusedNamingTheFileInItsWorktreeAndLeavesNothing) {
    const std::string work = m_dir.path() + "/work";
    const Environment env{{"PATH", m_path},
                          {"HOME", m_dir.path() + "/home"},
                          {"XDG_CONFIG_HOME", m_dir.path() + "/home/.config"},
                          {"GIT_AUTHOR_NAME", "user"},
                          {"GIT_AUTHOR_EMAIL", "user@example.com"},
                          {"GIT_COMMITTER_NAME", "user"},
                          {"GIT_COMMITTER_EMAIL", "user@example.com"}};
    const auto git = [&](const std::vector<std::string>& args) {
        return testing::git_in(work, args, env);
    };
    git({"init", "--quiet", "-b", "main"});
    testing::write_text(work + "/a.txt", "one\n");
    git({"add", "-A"});
    git({"commit", "--quiet", "-m", "first"});
    // Not yet committed: the worktree starts from the workspace as it is, so it holds the plugin.
    testing::write_text(work + "/.opencode/plugin/formatter.js",
                        "export const Formatter = async () => ({});\n");
    const auto run = testing::run_sonata(
        {"dispatch", "--worktree", "--harness", "opencode", "--role", "write", "--mode",
         "acceptEdits", "--task", "hello", "--matrix",
         std::string(SONATA_SOURCE_DIR) + "/tests/conformance/expected/opencode.json"},
        env, work);
    EXPECT_EQ(run.exit_code, to_int(ExitCode::refused)) << run.err << run.out;
    EXPECT_NE(
        run.out.find("this workspace holds .opencode/plugin/ (in " + work + "/.sonata/worktrees/"),
        std::string::npos)
        << run.out;
    EXPECT_EQ(git({"branch", "--list", "sonata/*"}), "");
    EXPECT_EQ(git({"worktree", "list", "--porcelain"}).find(".sonata/worktrees/"),
              std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(work + "/.sonata/runs") &&
                 !std::filesystem::is_empty(work + "/.sonata/runs"));
}

} // namespace
} // namespace sonata
