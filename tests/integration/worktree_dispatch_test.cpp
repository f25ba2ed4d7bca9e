// `sonata dispatch --worktree` through the real binary and the stand-in harness: the run works in
// a worktree of its own from the workspace as it is (an uncommitted edit included), the user's
// tree, index and branch stay as they were while it runs, `diff` shows its change, `apply` lands
// exactly it and keeps the user's edit, a conflicting `apply` changes nothing and names the file,
// `discard` and `gc` leave no worktree or branch; a workspace that is not a git repository is a
// clear error, and a refused dispatch leaves nothing behind.
#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/session.hpp"
#include "tests/support/dispatch_fixture.hpp"
#include "tests/support/mcp_session.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::write_text;

class WorktreeDispatch : public testing::DispatchFixture {
protected:
    void SetUp() override {
        use_stand_in({"pi"}, SONATA_DISPATCH_HARNESS);
        init_git_project();
    }

    /// A --worktree dispatch of the code role in acceptEdits; its receipt.
    json dispatch_in_worktree(const std::string& task) {
        const auto run = dispatch("pi", "code", "acceptEdits", task, {"--worktree"});
        EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
        return receipt_of(run);
    }
};

TEST_F(WorktreeDispatch, TheRunWorksInItsOwnWorktreeAndApplyLandsExactlyItsChange) {
    write_text(m_project + "/user.txt", "the user's uncommitted file\n");
    const std::string status = git({"status", "--porcelain"});
    const json r = dispatch_in_worktree("scenario: edit W-1");
    const std::string id = r.at("id");
    const json& w = r.at("worktree");
    EXPECT_EQ(w.at("path"), m_project + "/.sonata/worktrees/" + id);
    EXPECT_EQ(w.at("branch"), "sonata/" + id);
    EXPECT_EQ(w.at("base_dirty"), true);
    EXPECT_EQ(r.at("cwd"), w.at("path"));
    // The harness worked in the worktree, where the user's uncommitted file is too.
    EXPECT_EQ(read_text(w.at("path").get<std::string>() + "/a.txt"), "one\nedited W-1\n");
    EXPECT_TRUE(fs::exists(w.at("path").get<std::string>() + "/user.txt"));
    EXPECT_EQ(read_text(m_project + "/a.txt"), "one\n") << "the user's tree is untouched";
    EXPECT_EQ(w.at("head"), w.at("base_snapshot")) << "the harness committed nothing";
    // The report ends with the run's changes, then the run's signature.
    const std::string report = read_text(run_dir(id) + "/report.md");
    EXPECT_NE(report.find("changes in worktree " + w.at("path").get<std::string>() +
                          " (branch sonata/" + id + "; `sonata diff " + id + "`"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("2 files changed"), std::string::npos) << report;
    EXPECT_EQ(git({"status", "--porcelain"}), status);
    EXPECT_EQ(git({"rev-parse", "--abbrev-ref", "HEAD"}), "main\n");

    const auto diff = sonata({"diff", id, "--stat"});
    ASSERT_EQ(diff.exit_code, 0) << diff.err;
    EXPECT_NE(diff.out.find("a.txt"), std::string::npos) << diff.out;
    EXPECT_NE(diff.out.find("W-1.txt"), std::string::npos) << diff.out;
    EXPECT_EQ(diff.out.find("user.txt"), std::string::npos) << "the base holds the user's file";

    write_text(m_project + "/user.txt", "edited again by the user\n");
    const auto applied = sonata({"apply", id});
    ASSERT_EQ(applied.exit_code, 0) << applied.err;
    EXPECT_EQ(applied.out, "applied run " + id + ": W-1.txt, a.txt\n");
    EXPECT_EQ(read_text(m_project + "/a.txt"), "one\nedited W-1\n");
    EXPECT_EQ(read_text(m_project + "/W-1.txt"), "W-1\n");
    EXPECT_EQ(read_text(m_project + "/user.txt"), "edited again by the user\n");

    const auto discarded = sonata({"discard", id});
    ASSERT_EQ(discarded.exit_code, 0) << discarded.err;
    EXPECT_FALSE(fs::exists(w.at("path").get<std::string>()));
    EXPECT_EQ(git({"branch", "--list", "sonata/*"}), "");
    const auto again = sonata({"diff", id});
    EXPECT_NE(again.exit_code, 0);
    EXPECT_NE(again.err.find("is gone (discarded)"), std::string::npos) << again.err;
    expect_nothing_left();
}

TEST_F(WorktreeDispatch, AConflictingApplyChangesNothingAndNamesTheFile) {
    const json r = dispatch_in_worktree("scenario: edit W-2");
    const std::string id = r.at("id");
    write_text(m_project + "/a.txt", "one\nthe user's own line\n");
    const auto applied = sonata({"apply", id});
    EXPECT_EQ(applied.exit_code, 1) << applied.out;
    EXPECT_EQ(applied.err,
              "sonata: nothing applied: run " + id + "'s changes conflict with yours in a.txt\n");
    EXPECT_EQ(read_text(m_project + "/a.txt"), "one\nthe user's own line\n");
    EXPECT_FALSE(fs::exists(m_project + "/W-2.txt"));
    // gc takes a finished run's worktree and branch with it.
    const auto gc = sonata({"gc", "--older-than", "0s"});
    ASSERT_EQ(gc.exit_code, 0) << gc.err;
    EXPECT_FALSE(fs::exists(r.at("worktree").at("path").get<std::string>()));
    EXPECT_EQ(git({"branch", "--list", "sonata/*"}), "");
}

TEST_F(WorktreeDispatch, OutsideARepositoryOrRefusedNothingIsLeft) {
    const std::string plain = m_dir.make_dir("plain");
    auto run = testing::run_sonata({"dispatch", "--harness", "pi", "--role", "code", "--mode",
                                    "acceptEdits", "--task", "scenario: edit W-3", "--worktree"},
                                   m_env, plain);
    EXPECT_EQ(run.exit_code, to_int(ExitCode::usage)) << run.out;
    EXPECT_NE(run.err.find("--worktree: " + plain + " is not in a git repository"),
              std::string::npos)
        << run.err;
    // pi cannot ask, so `default` refuses a write role: no worktree, branch or run is left.
    run = dispatch("pi", "code", "default", "scenario: edit W-4", {"--worktree"});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::refused)) << run.err;
    EXPECT_EQ(git({"branch", "--list", "sonata/*"}), "");
    EXPECT_EQ(git({"worktree", "list", "--porcelain"}).find(".sonata/worktrees"),
              std::string::npos);
    EXPECT_TRUE(sonata({"runs"}).out.find("no runs") != std::string::npos ||
                !fs::exists(m_project + "/.sonata/runs") ||
                fs::is_empty(m_project + "/.sonata/runs"));
}

using testing::stateless_tool_call;

TEST_F(WorktreeDispatch, TheMcpToolsTakeAWorktreeRunOnAndApplyObeysTheParentsMode) {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    testing::write_text(m_project + "/.sonata/session-s3.json",
                        session_record_to_json({"s3", Mode::accept_edits, now}));
    m_env["CLAUDE_CODE_SESSION_ID"] = "s3";
    testing::McpSession server(m_env, m_project);
    const json done = server.request(stateless_tool_call(
        1, "dispatch",
        {{"harness", "pi"}, {"role", "code"}, {"task", "scenario: edit W-5"}, {"worktree", true}}));
    const json& run = done["result"]["structuredContent"];
    ASSERT_EQ(run["state"], "done") << done.dump();
    const std::string id = run["run_id"];
    EXPECT_TRUE(fs::exists(m_project + "/.sonata/worktrees/" + id + "/W-5.txt"));
    EXPECT_FALSE(fs::exists(m_project + "/W-5.txt"));
    const json diff = server.request(stateless_tool_call(2, "diff", {{"id", id}, {"stat", true}}));
    EXPECT_NE(diff["result"]["content"][0]["text"].get<std::string>().find("W-5.txt"),
              std::string::npos)
        << diff.dump();
    // The session moves to plan: apply, a write to the working tree, is refused.
    testing::write_text(m_project + "/.sonata/session-s3.json",
                        session_record_to_json({"s3", Mode::plan, now}));
    json applied = server.request(stateless_tool_call(3, "apply", {{"id", id}}));
    EXPECT_EQ(applied["result"]["isError"], true);
    EXPECT_NE(applied["result"]["content"][0]["text"].get<std::string>().find(
                  "refuse: apply writes to the working tree, and this session is in plan mode"),
              std::string::npos)
        << applied.dump();
    EXPECT_FALSE(fs::exists(m_project + "/W-5.txt"));
    testing::write_text(m_project + "/.sonata/session-s3.json",
                        session_record_to_json({"s3", Mode::accept_edits, now}));
    applied = server.request(stateless_tool_call(4, "apply", {{"id", id}}));
    EXPECT_EQ(applied["result"]["content"][0]["text"], "applied run " + id + ": W-5.txt, a.txt\n")
        << applied.dump();
    EXPECT_EQ(read_text(m_project + "/W-5.txt"), "W-5\n");
    const json discarded = server.request(stateless_tool_call(5, "discard", {{"id", id}}));
    EXPECT_EQ(discarded["result"]["isError"], false) << discarded.dump();
    EXPECT_FALSE(fs::exists(m_project + "/.sonata/worktrees/" + id));
    server.close();
    expect_nothing_left();
}

} // namespace
} // namespace sonata
