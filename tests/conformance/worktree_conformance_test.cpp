// Worktree runs on the pinned real harnesses, hermetic: three write dispatches in acceptEdits
// (claude, codex and pi), started at once in one repository with an uncommitted edit, each in the
// worktree `--worktree` reserves for it and against a scripted model of its own that writes a file
// of its own. Each run reaches `done` having written its change in its worktree only; the user's
// tree, index, branch and uncommitted edit stay as they were; `sonata apply` of one lands exactly
// its change and keeps the user's edit; an apply that conflicts changes nothing and names the file;
// `sonata discard` leaves no worktree, branch or process behind. The invocation is the planner's,
// with the adapter's endpoint injection (as a probe cell has it).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "core/process.hpp"
#include "dispatch/caller/run.hpp"
#include "dispatch/caller/worktree_dispatch.hpp"
#include "probes/model_server.hpp"
#include "probes/script.hpp"
#include "probes/workspace.hpp"
#include "tests/support/nothing_left.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/real_dispatch.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::write_text;

/// One harness's worktree run: its model, its reserved worktree, its run directory.
struct WorktreeRun {
    testing::Pin pin;
    std::unique_ptr<probes::ModelServer> server;
    dispatch::ReservedWorktree reserved;
    std::string dir;
};

class WorktreeConformance : public ::testing::Test {
protected:
    void SetUp() override {
        auto runner = make_system_runner();
        auto created = probes::Scratch::create(m_dir.path(), "", *runner);
        ASSERT_TRUE(created) << created.error().message;
        m_scratch.emplace(std::move(*created));
        m_env = m_scratch->environment(current_environment());
        m_env["GIT_AUTHOR_NAME"] = m_env["GIT_COMMITTER_NAME"] = "user";
        m_env["GIT_AUTHOR_EMAIL"] = m_env["GIT_COMMITTER_EMAIL"] = "user@example.com";
        m_repo = m_scratch->workspace();
        write_text(m_repo + "/shared.txt", "the shared file\n");
        write_text(m_repo + "/user.txt", "committed\n");
        write_text(m_repo + "/.gitignore", ".sonata/\n");
        git({"add", "-A"});
        git({"commit", "--quiet", "-m", "first"});
        // The user's work in progress: a tracked edit, and a file git does not know yet.
        write_text(m_repo + "/user.txt", "committed\nthe user's uncommitted line\n");
        write_text(m_repo + "/draft.txt", "the user's untracked draft\n");
    }

    std::string git(const std::vector<std::string>& args) {
        return testing::git_in(m_repo, args, m_env);
    }

    /// What git says of the user's tree, index, stash and branches.
    std::string users_state() {
        return git({"status", "--porcelain", "--untracked-files=all"}) + git({"diff"}) +
               git({"diff", "--cached"}) + git({"stash", "list"}) +
               git({"rev-parse", "--abbrev-ref", "HEAD"}) + git({"rev-parse", "HEAD"});
    }

    /// Reserves `pin`'s worktree, plans its acceptEdits write mapping and starts it against a
    /// scripted model that writes `steps` and answers `token`.
    WorktreeRun start(const testing::Pin& pin, const json& steps, const std::string& token) {
        WorktreeRun run{pin, nullptr, {}, {}};
        const char* path = std::getenv("PATH");
        const auto bin = search_path(pin.binary, path != nullptr ? path : "/usr/bin:/bin");
        EXPECT_TRUE(bin) << pin.id << " is not installed";
        adapters::DispatchRequest request;
        request.cwd = m_repo;
        request.env = m_env;
        auto reserved = dispatch::reserve_worktree(request);
        EXPECT_TRUE(reserved) << reserved.error().message;
        if (!bin || !reserved) return run;
        run.reserved = *reserved;
        const std::string worktree = request.cwd;
        auto decision = testing::decide_real({pin.id, *bin, pin.version, Mode::accept_edits,
                                              RoleKind::write, m_dir.path() + "/support"});
        EXPECT_TRUE(decision && decision->runs()) << pin.id << " runs no acceptEdits write";
        auto script = probes::parse_script(json{{"steps", steps}, {"final", token}}.dump());
        EXPECT_TRUE(script);
        if (!decision || !decision->runs() || !script) return run;
        const auto& adapter = **adapters::find_adapter(pin.id);
        run.server = std::make_unique<probes::ModelServer>(*script, adapter.tools(), worktree);
        EXPECT_TRUE(run.server->start());
        auto aimed = testing::aimed_at(*decision, *run.server, *m_scratch, worktree);
        EXPECT_TRUE(aimed) << aimed.error().message;
        if (!aimed) return run;
        dispatch::Receipt receipt = dispatch::receipt_for(*decision);
        receipt.worktree = dispatch::record_of(reserved->worktree);
        dispatch::StartRequest start{
            *aimed,
            receipt,
            "Write your file, then answer with your final message.",
            worktree,
            m_env,
            reserved->runs_root,
            SONATA_BIN,
            {std::chrono::seconds(240), std::chrono::seconds(240), 1U << 20U}};
        start.id = reserved->id;
        auto dir = dispatch::start_run(start);
        EXPECT_TRUE(dir) << dir.error().message;
        run.dir = dir ? *dir : std::string();
        return run;
    }

    /// Waits for the run; one that does not reach `done` shows its logs and receipt.
    static dispatch::Receipt finish(const WorktreeRun& run) {
        SCOPED_TRACE(run.pin.id);
        return testing::wait_for_run(run.dir, dispatch::RunState::done, std::chrono::seconds(300));
    }

    testing::SonataRun sonata(const std::vector<std::string>& args) {
        return testing::run_sonata(args, m_env, m_repo);
    }

    /// The user's files (sonata's own directory aside).
    probes::Snapshot users_files() const {
        auto files = probes::snapshot(m_repo);
        std::erase_if(files, [](const auto& file) { return file.first.starts_with(".sonata/"); });
        return files;
    }

    testing::ScratchDir m_dir;
    std::optional<probes::Scratch> m_scratch;
    Environment m_env;
    std::string m_repo;
};

/// The pins of `ids`; a missing pin or an uninstalled harness skips or fails as every real test.
std::vector<testing::Pin> pins_of(const std::vector<std::string>& ids, std::string& skip) {
    std::vector<testing::Pin> out;
    const char* path = std::getenv("PATH");
    for (const auto& pin : testing::pins()) {
        if (std::find(ids.begin(), ids.end(), pin.id) == ids.end()) continue;
        if (!search_path(pin.binary, path != nullptr ? path : "/usr/bin:/bin")) {
            skip = testing::missing_harness_skip_reason();
            if (skip.empty()) ADD_FAILURE() << pin.id << " is not installed";
            return {};
        }
        out.push_back(pin);
    }
    return out;
}

json write_step(const std::string& path, const std::string& content) {
    return {{"intent", "write_file"}, {"path", path}, {"content", content}};
}

TEST_F(WorktreeConformance, ThreeWriteRunsAtOnceEachChangeOnlyTheirOwnWorktree) {
    std::string skip;
    const auto chosen = pins_of({"claude", "codex", "pi"}, skip);
    if (chosen.size() != 3) {
        if (!skip.empty()) GTEST_SKIP() << skip;
        FAIL() << "claude, codex and pi must be pinned and installed";
    }
    const std::string before = users_state();
    std::vector<WorktreeRun> runs;
    for (const auto& pin : chosen) {
        json steps = json::array({write_step("from-" + pin.id + ".txt", pin.id + " was here\n")});
        if (pin.id == "codex") {
            // codex exec offers no file tool to a model it has no metadata for: a model writes
            // with the shell. It also rewrites the shared file, which the user edits meanwhile,
            // so its apply conflicts.
            steps = json::array({{{"intent", "shell"},
                                  {"command", "printf 'codex was here\\n' > from-codex.txt && "
                                              "printf 'the version of codex\\n' > shared.txt"}}});
        }
        runs.push_back(start(pin, steps, "worktree-token-" + pin.id));
    }
    for (const auto& run : runs)
        ASSERT_FALSE(run.dir.empty()) << run.pin.id << " did not start";
    EXPECT_EQ(users_state(), before) << "starting three worktree runs changed the user's tree";

    for (const auto& run : runs) {
        const auto receipt = finish(run);
        const std::string id = run.reserved.id;
        const std::string worktree = run.reserved.worktree.path;
        EXPECT_EQ(receipt.cwd, worktree) << run.pin.id;
        ASSERT_TRUE(receipt.worktree) << run.pin.id;
        EXPECT_EQ(receipt.worktree->branch, "sonata/" + id);
        EXPECT_TRUE(receipt.worktree->base_dirty) << "the base holds the user's edit";
        EXPECT_FALSE(receipt.worktree->head.empty()) << run.pin.id;
        EXPECT_EQ(testing::text_or_empty(worktree + "/from-" + run.pin.id + ".txt"),
                  run.pin.id + " was here\n")
            << run.pin.id << " wrote no change in its worktree; its log:\n"
            << testing::text_or_empty(run.dir + "/harness.log");
        EXPECT_EQ(testing::text_or_empty(worktree + "/user.txt"),
                  "committed\nthe user's uncommitted line\n");
        EXPECT_TRUE(fs::exists(worktree + "/draft.txt")) << "the untracked draft is in the base";
        for (const auto& other : runs) {
            if (other.pin.id == run.pin.id) continue;
            EXPECT_FALSE(fs::exists(worktree + "/from-" + other.pin.id + ".txt"))
                << other.pin.id << "'s change reached " << run.pin.id << "'s worktree";
        }
        EXPECT_FALSE(fs::exists(m_repo + "/from-" + run.pin.id + ".txt"))
            << run.pin.id << "'s change reached the user's tree";
        const std::string report = testing::text_or_empty(run.dir + "/report.md");
        EXPECT_NE(report.find("worktree-token-" + run.pin.id), std::string::npos) << report;
        EXPECT_NE(report.find("changes in worktree " + worktree), std::string::npos) << report;
        const auto stat = sonata({"diff", id, "--stat"});
        EXPECT_EQ(stat.exit_code, 0) << stat.err;
        EXPECT_NE(stat.out.find("from-" + run.pin.id + ".txt"), std::string::npos) << stat.out;
        EXPECT_EQ(stat.out.find("user.txt"), std::string::npos) << stat.out;
    }
    EXPECT_EQ(users_state(), before) << "the runs changed the user's tree";

    // The user edits the shared file meanwhile: codex's apply conflicts and changes nothing.
    write_text(m_repo + "/shared.txt", "the user's own version\n");
    const auto snapshot = users_files();
    const auto id_of = [&](const std::string& harness) {
        for (const auto& run : runs)
            if (run.pin.id == harness) return run.reserved.id;
        return std::string();
    };
    const std::string codex_id = id_of("codex");
    const auto conflict = sonata({"apply", codex_id});
    EXPECT_EQ(conflict.exit_code, 1) << conflict.out;
    EXPECT_EQ(conflict.err, "sonata: nothing applied: run " + codex_id +
                                "'s changes conflict with yours in shared.txt\n");
    EXPECT_EQ(users_files(), snapshot) << "a conflicting apply changed the tree";

    // claude's apply lands exactly its file and keeps every edit of the user's.
    const std::string claude_id = id_of("claude");
    const auto applied = sonata({"apply", claude_id});
    ASSERT_EQ(applied.exit_code, 0) << applied.err;
    EXPECT_EQ(applied.out, "applied run " + claude_id + ": from-claude.txt\n");
    EXPECT_EQ(probes::diff(snapshot, users_files(), ""),
              std::vector<std::string>{"created from-claude.txt"});
    EXPECT_EQ(read_text(m_repo + "/user.txt"), "committed\nthe user's uncommitted line\n");

    for (const auto& run : runs) {
        const auto discarded = sonata({"discard", run.reserved.id});
        EXPECT_EQ(discarded.exit_code, 0) << discarded.err;
        EXPECT_FALSE(fs::exists(run.reserved.worktree.path)) << run.pin.id;
    }
    EXPECT_EQ(git({"branch", "--list", "sonata/*"}), "");
    EXPECT_EQ(git({"worktree", "list", "--porcelain"}).find(".sonata/worktrees"),
              std::string::npos);
    testing::expect_nothing_left(m_dir.path());
}

} // namespace
} // namespace sonata
