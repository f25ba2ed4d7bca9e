// A write run's git worktree against real git: the workspace frozen with its uncommitted changes
// (ignored files excepted) while the user's index, stash, branches and files stay as they were;
// the run's changes as a diff; applied as a three-way merge that keeps the user's own edits and
// changes nothing on a conflict; discarded without a trace; and the repository's hooks never run.
#include <atomic>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "dispatch/git_worktree.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::dispatch {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::write_text;

class GitWorktree : public ::testing::Test {
protected:
    void SetUp() override {
        m_env["GIT_AUTHOR_NAME"] = m_env["GIT_COMMITTER_NAME"] = "user";
        m_env["GIT_AUTHOR_EMAIL"] = m_env["GIT_COMMITTER_EMAIL"] = "user@example.com";
        git({"init", "--quiet", "-b", "main"});
        write_text(m_repo + "/a.txt", "one\ntwo\nthree\n");
        write_text(m_repo + "/.gitignore", "secret.env\n");
        git({"add", "-A"});
        git({"commit", "--quiet", "-m", "first"});
    }

    /// `git ARGS` in the repository, as the user runs it; its stdout.
    std::string git(const std::vector<std::string>& args) {
        return testing::git_in(m_repo, args, m_env);
    }

    /// The user's repository as git sees it: index, stash, the branch checked out and every
    /// branch but the runs' own, HEAD, status.
    std::string state() {
        return git({"diff", "--cached"}) + "|" + git({"stash", "list"}) + "|" +
               git({"rev-parse", "--abbrev-ref", "HEAD"}) + "|" +
               git({"show-ref", "--verify", "refs/heads/main"}) + "|" + git({"rev-parse", "HEAD"}) +
               "|" + git({"status", "--porcelain", "--untracked-files=all"});
    }

    /// A dirty workspace: a staged edit, an unstaged edit, an untracked file, an ignored one.
    void make_dirty() {
        write_text(m_repo + "/staged.txt", "staged\n");
        git({"add", "staged.txt"});
        write_text(m_repo + "/a.txt", "one\ntwo\nthree\nfour (the user's)\n");
        write_text(m_repo + "/new.txt", "untracked\n");
        write_text(m_repo + "/secret.env", "ignored\n");
    }

    RunWorktree started(const std::string& id) {
        auto base = m_git.snapshot(m_repo);
        EXPECT_TRUE(base) << base.error().message;
        auto run = m_git.add(m_repo, id, *base);
        EXPECT_TRUE(run) << run.error().message;
        return *run;
    }

    testing::ScratchDir m_dir;
    std::string m_repo = m_dir.make_dir("repo");
    Environment m_env = testing::hermetic_env(m_dir);
    std::unique_ptr<ProcessRunner> m_runner = make_system_runner();
    Git m_git{*m_runner, m_env};
};

TEST_F(GitWorktree, TheWorktreeStartsFromTheWorkspaceAsItIsAndTouchesNothingOfTheUsers) {
    make_dirty();
    const std::string before = state();
    const std::string index = read_text(m_repo + "/.git/index");
    const RunWorktree run = started("r1");
    EXPECT_TRUE(run.base.dirty);
    EXPECT_NE(run.base.snapshot, run.base.head);
    EXPECT_EQ(run.branch, "sonata/r1");
    EXPECT_EQ(run.path, m_repo + "/.sonata/worktrees/r1");
    EXPECT_EQ(read_text(run.path + "/a.txt"), "one\ntwo\nthree\nfour (the user's)\n");
    EXPECT_EQ(read_text(run.path + "/new.txt"), "untracked\n");
    EXPECT_EQ(read_text(run.path + "/staged.txt"), "staged\n");
    EXPECT_FALSE(fs::exists(run.path + "/secret.env")) << "ignored files stay out";
    // The user's index, stash, branch, HEAD and files are as they were.
    EXPECT_EQ(read_text(m_repo + "/.git/index"), index);
    EXPECT_EQ(state(), before);
    EXPECT_NE(git({"branch", "--list", "sonata/r1"}), "") << "the run's branch exists";
}

TEST_F(GitWorktree, RunsWritingTheirFilesUnderSonataNeverStopAnotherRunsWorktree) {
    // Fan-out starts its worktree runs one after another while the first ones already write their
    // receipts under .sonata/runs: the freeze of the workspace must not read those files at all
    // (read, then changed, they once failed the freeze's removal of .sonata from its index).
    write_text(m_repo + "/.sonata/tracked.txt", "committed\n"); // .sonata in HEAD stays out too
    git({"add", "-f", ".sonata/tracked.txt"});
    git({"commit", "--quiet", "-m", "with .sonata"});
    write_text(m_repo + "/.sonata/tracked.txt", "changed\n");
    make_dirty();
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        for (unsigned n = 0; !stop.load(); ++n) {
            for (int run = 0; run < 8; ++run)
                write_text(m_repo + "/.sonata/runs/r" + std::to_string(run) + "/receipt.json",
                           std::string(n % 64 + 1, 'x'));
        }
    });
    std::vector<std::string> errors;
    std::vector<std::string> trees;
    for (int i = 0; i < 16; ++i) {
        // Half the time the user ignores .sonata, half the time not.
        if (i == 8) write_text(m_repo + "/.gitignore", "secret.env\n.sonata/\n");
        auto base = m_git.snapshot(m_repo);
        if (!base)
            errors.push_back(base.error().message);
        else
            trees.push_back(git({"ls-tree", "-r", "--name-only", base->snapshot}));
    }
    stop = true;
    writer.join();
    EXPECT_TRUE(errors.empty()) << errors.front();
    for (const auto& tree : trees) {
        EXPECT_EQ(tree, ".gitignore\na.txt\nnew.txt\nstaged.txt\n") << "nothing of .sonata";
    }
}

TEST_F(GitWorktree, ACleanWorkspaceStartsAtHead) {
    const RunWorktree run = started("r2");
    EXPECT_FALSE(run.base.dirty);
    EXPECT_EQ(run.base.snapshot, run.base.head);
    EXPECT_EQ(read_text(run.path + "/a.txt"), "one\ntwo\nthree\n");
}

TEST_F(GitWorktree, TheRunsChangesApplyAsAMergeThatKeepsTheUsersEdits) {
    make_dirty();
    const RunWorktree run = started("r3");
    // The run changes the first line and adds a file, without committing.
    write_text(run.path + "/a.txt", "ONE\ntwo\nthree\nfour (the user's)\n");
    write_text(run.path + "/added.txt", "by the run\n");
    // Meanwhile the user edits the end of the same file.
    write_text(m_repo + "/a.txt", "one\ntwo\nthree\nfour (the user's, edited)\n");
    const auto stat = m_git.diff(run, true);
    ASSERT_TRUE(stat) << stat.error().message;
    EXPECT_NE(stat->find("a.txt"), std::string::npos) << *stat;
    EXPECT_NE(stat->find("added.txt"), std::string::npos) << *stat;
    EXPECT_NE(stat->find("2 files changed"), std::string::npos) << *stat;
    const std::string index = read_text(m_repo + "/.git/index");
    const auto applied = m_git.apply(run, dispatch::GuardedPaths::hold_back);
    ASSERT_TRUE(applied) << applied.error().message;
    EXPECT_TRUE(applied->applied);
    EXPECT_TRUE(applied->conflicts.empty());
    EXPECT_EQ(applied->files, (std::vector<std::string>{"a.txt", "added.txt"}));
    EXPECT_EQ(read_text(m_repo + "/a.txt"), "ONE\ntwo\nthree\nfour (the user's, edited)\n");
    EXPECT_EQ(read_text(m_repo + "/added.txt"), "by the run\n");
    EXPECT_EQ(read_text(m_repo + "/secret.env"), "ignored\n");
    EXPECT_EQ(read_text(m_repo + "/.git/index"), index) << "the index is left alone";
}

TEST_F(GitWorktree, AConflictChangesNothingAndNamesTheFile) {
    const RunWorktree run = started("r4");
    write_text(run.path + "/a.txt", "one\nTWO (the run)\nthree\n");
    write_text(run.path + "/b.txt", "the run's\n");
    write_text(m_repo + "/a.txt", "one\ntwo (the user)\nthree\n");
    const std::string before = state();
    const auto applied = m_git.apply(run, dispatch::GuardedPaths::hold_back);
    ASSERT_TRUE(applied) << applied.error().message;
    EXPECT_FALSE(applied->applied);
    EXPECT_EQ(applied->conflicts, std::vector<std::string>{"a.txt"});
    EXPECT_EQ(read_text(m_repo + "/a.txt"), "one\ntwo (the user)\nthree\n");
    EXPECT_FALSE(fs::exists(m_repo + "/b.txt")) << "nothing of the run landed";
    EXPECT_EQ(state(), before);
}

TEST_F(GitWorktree, DiscardLeavesNoWorktreeNoBranch) {
    const RunWorktree run = started("r5");
    write_text(run.path + "/junk.txt", "x\n");
    ASSERT_TRUE(m_git.discard(run));
    EXPECT_FALSE(fs::exists(run.path));
    EXPECT_EQ(git({"branch", "--list", "sonata/r5"}), "");
    EXPECT_EQ(git({"worktree", "list", "--porcelain"}).find(".sonata/worktrees"),
              std::string::npos);
    // A worktree removed by hand is discarded too.
    const RunWorktree gone = started("r6");
    fs::remove_all(gone.path);
    ASSERT_TRUE(m_git.discard(gone));
    EXPECT_EQ(git({"branch", "--list", "sonata/r6"}), "");
    EXPECT_EQ(git({"worktree", "list", "--porcelain"}).find("r6"), std::string::npos);
}

TEST_F(GitWorktree, HostileAndOddRepositoriesGetClearErrors) {
    const std::string plain = m_dir.make_dir("plain");
    const auto top = m_git.top_level(plain);
    ASSERT_FALSE(top);
    EXPECT_NE(top.error().message.find("is not in a git repository"), std::string::npos);
    EXPECT_EQ(*m_git.top_level(m_repo + "/"), fs::canonical(m_repo).string());
    // A branch of that name exists already: nothing is created.
    git({"branch", "sonata/r7"});
    auto base = m_git.snapshot(m_repo);
    ASSERT_TRUE(base);
    const auto taken = m_git.add(m_repo, "r7", *base);
    ASSERT_FALSE(taken);
    EXPECT_NE(taken.error().message.find("a branch sonata/r7 exists already"), std::string::npos);
    EXPECT_FALSE(fs::exists(m_repo + "/.sonata/worktrees/r7"));
    // A repository with no commit.
    const std::string empty = m_dir.make_dir("empty");
    testing::run_program({"/usr/bin/git", "-C", empty, "init", "--quiet"}, m_env, empty);
    const auto none = m_git.snapshot(empty);
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("has no commit yet"), std::string::npos);
    // A detached HEAD is a base like any other.
    git({"checkout", "--quiet", "--detach"});
    EXPECT_TRUE(m_git.snapshot(m_repo));
}

TEST_F(GitWorktree, TheRepositorysHooksNeverRun) {
    write_text(m_repo + "/.git/hooks/post-checkout",
               "#!/bin/sh\necho ran > \"" + m_dir.path() + "/hook-ran\"\n");
    fs::permissions(m_repo + "/.git/hooks/post-checkout", fs::perms::owner_all);
    const RunWorktree run = started("r8");
    EXPECT_TRUE(fs::exists(run.path + "/a.txt"));
    EXPECT_FALSE(fs::exists(m_dir.path() + "/hook-ran")) << "post-checkout ran";
}

TEST_F(GitWorktree, ACheckedOutSubmoduleIsAClearErrorAndAnUninitialisedOneIsNot) {
    const std::string lib = m_dir.make_dir("lib");
    const auto in_lib = [&](const std::vector<std::string>& args) {
        testing::git_in(lib, args, m_env);
    };
    in_lib({"init", "--quiet", "-b", "main"});
    write_text(lib + "/lib.txt", "lib\n");
    in_lib({"add", "-A"});
    in_lib({"commit", "--quiet", "-m", "lib"});
    git({"-c", "protocol.file.allow=always", "submodule", "add", "--quiet", lib, "lib"});
    git({"commit", "--quiet", "-m", "a submodule"});
    write_text(m_repo + "/lib/lib.txt", "edited inside the submodule\n");
    const std::string before = state();
    // Its files, and the user's edit in them, would be missing from the worktree.
    const auto refused = m_git.snapshot(m_repo);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message,
              m_repo + " has submodules checked out (lib), which a run's worktree would not "
                       "hold: dispatch without a worktree");
    EXPECT_EQ(state(), before);
    EXPECT_EQ(read_text(m_repo + "/lib/lib.txt"), "edited inside the submodule\n");
    // Not checked out, it is an empty directory in the workspace and in the worktree alike.
    git({"submodule", "deinit", "--quiet", "--force", "lib"});
    const RunWorktree run = started("r9");
    EXPECT_TRUE(fs::is_directory(run.path + "/lib"));
    EXPECT_TRUE(fs::is_empty(run.path + "/lib"));
}

} // namespace
} // namespace sonata::dispatch
