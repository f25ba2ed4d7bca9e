// A run's worktree is the run's: through the real binary and a hostile stand-in harness that
// rewrites its worktree's git link to a git directory of its own (with clean, smudge and process
// filters, directly or through an include), replaces the link by a .git directory, or empties the
// worktree, sonata runs nothing the run planted — at the run's end, on diff, diff --stat, apply,
// discard, gc, in a write fan-out and through the MCP tools — shows and applies nothing from git's
// view of such a worktree, and still removes what it made. A large file lands byte for byte or
// not at all; the first worktree run of a new user can be applied; links in sonata's own
// directories are never followed.
#include <chrono>
#include <filesystem>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/matrix.hpp"
#include "core/session.hpp"
#include "tests/support/dispatch_fixture.hpp"
#include "tests/support/mcp_session.hpp"

namespace sonata {
namespace worktree_attack_test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::write_text;

const std::string k_link_changed = "changed its worktree's git link";

class WorktreeAttack : public testing::DispatchFixture {
protected:
    void SetUp() override {
        use_stand_in({"pi", "grok"}, SONATA_DISPATCH_HARNESS);
        init_git_project();
    }

    /// The marks a planted command left: none, unless sonata ran one.
    std::vector<std::string> marks() const {
        std::vector<std::string> out;
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(m_project + "/.sonata", ec))
            if (entry.path().filename().string().starts_with("pwned-"))
                out.push_back(entry.path().filename().string());
        return out;
    }

    /// A --worktree dispatch of `scenario`; its receipt.
    json attack(const std::string& scenario) {
        const auto run =
            dispatch("pi", "code", "acceptEdits", "scenario: " + scenario + " T", {"--worktree"});
        EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
        return receipt_of(run);
    }

    /// What sonata made for the run is gone: its worktree, its registration and its branch.
    void expect_worktree_removed(const json& r) {
        EXPECT_FALSE(
            fs::exists(fs::symlink_status(r.at("worktree").at("path").get<std::string>())));
        EXPECT_EQ(git({"branch", "--list", "sonata/*"}), "");
        EXPECT_EQ(git({"worktree", "list", "--porcelain"}).find(".sonata/worktrees"),
                  std::string::npos);
        EXPECT_EQ(git({"worktree", "prune", "--dry-run", "-v"}), "");
    }
};

class WorktreeLinkAttack : public WorktreeAttack,
                           public ::testing::WithParamInterface<const char*> {};

TEST_P(WorktreeLinkAttack, NothingPlantedRunsNothingOfItIsShownAndDiscardRemovesTheWorktree) {
    const std::string status = git({"status", "--porcelain"});
    const json r = attack(GetParam());
    const std::string id = r.at("id");
    EXPECT_EQ(marks(), std::vector<std::string>{}) << "at the run's end";
    const std::string report = read_text(run_dir(id) + "/report.md");
    EXPECT_NE(report.find(k_link_changed), std::string::npos) << report;

    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"diff", id}, std::vector<std::string>{"diff", id, "--stat"},
          std::vector<std::string>{"apply", id}}) {
        const auto answer = sonata(args);
        EXPECT_EQ(answer.exit_code, to_int(ExitCode::bad_data)) << args[0] << answer.out;
        EXPECT_EQ(answer.out, "") << args[0] << ": nothing of the user's repository is shown";
        EXPECT_NE(answer.err.find("run " + id + " " + k_link_changed), std::string::npos)
            << answer.err;
        EXPECT_NE(answer.err.find("sonata discard " + id), std::string::npos) << answer.err;
        EXPECT_EQ(marks(), std::vector<std::string>{}) << "on " << args[0];
    }
    EXPECT_EQ(git({"status", "--porcelain"}), status) << "apply changed nothing";
    EXPECT_EQ(read_text(m_project + "/a.txt"), "one\n");

    const auto discarded = sonata({"discard", id});
    EXPECT_EQ(discarded.exit_code, 0) << discarded.err;
    EXPECT_EQ(marks(), std::vector<std::string>{}) << "on discard";
    expect_worktree_removed(r);
    expect_nothing_left();
}

INSTANTIATE_TEST_SUITE_P(Attacks, WorktreeLinkAttack,
                         ::testing::Values("wt-gitfile-filter", "wt-gitfile-include",
                                           "wt-gitdir-own", "wt-empty"),
                         [](const ::testing::TestParamInfo<const char*>& attack) {
                             return std::regex_replace(std::string(attack.param), std::regex("-"),
                                                       "_");
                         });

TEST_F(WorktreeAttack, GcRemovesAWorktreeWhoseLinkTheRunChangedAndRunsNothingPlanted) {
    const json r = attack("wt-gitdir-own");
    const auto gc = sonata({"gc", "--older-than", "0s"});
    EXPECT_EQ(gc.exit_code, 0) << gc.err;
    EXPECT_NE(gc.out.find("removed " + r.at("id").get<std::string>()), std::string::npos) << gc.out;
    EXPECT_EQ(marks(), std::vector<std::string>{});
    expect_worktree_removed(r);
}

TEST_F(WorktreeAttack, AWriteFanOutRunsNothingItsRunsPlanted) {
    const auto run = sonata({"dispatch", "--fanout", "pi,grok", "--role", "code", "--mode",
                             "acceptEdits", "--task", "scenario: wt-gitfile-filter F"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(marks(), std::vector<std::string>{});
    std::size_t said = 0;
    for (auto at = run.out.find(k_link_changed); at != std::string::npos;
         at = run.out.find(k_link_changed, at + 1))
        ++said;
    EXPECT_EQ(said, 2U) << run.out;
    expect_nothing_left();
}

using testing::stateless_tool_call;

TEST_F(WorktreeAttack, TheMcpToolsRunNothingPlantedAndShowNothingOfALinkTheRunChanged) {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    write_text(m_project + "/.sonata/session-s4.json",
               session_record_to_json({"s4", Mode::accept_edits, now}));
    m_env["CLAUDE_CODE_SESSION_ID"] = "s4";
    testing::McpSession server(m_env, m_project);
    const json done =
        server.request(stateless_tool_call(1, "dispatch",
                                           {{"harness", "pi"},
                                            {"role", "code"},
                                            {"task", "scenario: wt-gitfile-include M"},
                                            {"worktree", true}}));
    const json& run = done["result"]["structuredContent"];
    ASSERT_EQ(run["state"], "done") << done.dump();
    const std::string id = run["run_id"];
    int call = 2;
    for (const auto& [tool, args] :
         std::vector<std::pair<std::string, json>>{{"diff", {{"id", id}}},
                                                   {"diff", {{"id", id}, {"stat", true}}},
                                                   {"apply", {{"id", id}}}}) {
        const json answer = server.request(stateless_tool_call(call++, tool, args));
        EXPECT_EQ(answer["result"]["isError"], true) << answer.dump();
        EXPECT_NE(answer["result"]["content"][0]["text"].get<std::string>().find(k_link_changed),
                  std::string::npos)
            << answer.dump();
        EXPECT_EQ(marks(), std::vector<std::string>{}) << tool;
    }
    const json discarded = server.request(stateless_tool_call(call, "discard", {{"id", id}}));
    EXPECT_EQ(discarded["result"]["isError"], false) << discarded.dump();
    EXPECT_EQ(marks(), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(m_project + "/.sonata/worktrees/" + id));
    server.close();
    expect_nothing_left();
}

TEST_F(WorktreeAttack, ALargeBinaryFileLandsByteForByteOrApplySaysSo) {
    const json r = attack("wt-big");
    const std::string id = r.at("id");
    const std::string worktree = r.at("worktree").at("path");
    const auto applied = sonata({"apply", id});
    ASSERT_EQ(applied.exit_code, 0) << applied.err;
    EXPECT_EQ(applied.out, "applied run " + id + ": big.bin, harness-file.txt\n");
    ASSERT_TRUE(fs::exists(m_project + "/big.bin"));
    EXPECT_EQ(fs::file_size(m_project + "/big.bin"), 90U << 20U);
    EXPECT_TRUE(read_text(m_project + "/big.bin") == read_text(worktree + "/big.bin"))
        << "big.bin landed byte for byte";
    EXPECT_EQ(read_text(m_project + "/harness-file.txt"), "written by the run\n");
}

TEST_F(WorktreeAttack, AFileOverWhatSonataHandlesIsAnErrorNamingItBeforeAnythingChanges) {
    const json r = attack("wt-huge");
    const std::string id = r.at("id");
    const std::string status = git({"status", "--porcelain"});
    const auto applied = sonata({"apply", id});
    EXPECT_EQ(applied.exit_code, to_int(ExitCode::usage)) << applied.out;
    EXPECT_NE(applied.err.find("huge.bin"), std::string::npos) << applied.err;
    EXPECT_NE(applied.err.find("nothing applied"), std::string::npos) << applied.err;
    EXPECT_EQ(git({"status", "--porcelain"}), status);
    EXPECT_FALSE(fs::exists(m_project + "/harness-file.txt"));
}

/// A new user's repository: no sonata.toml and no .sonata/ until sonata makes one.
class FirstWorktreeRun : public WorktreeAttack {
protected:
    void SetUp() override {
        write_text(m_env.at("XDG_CONFIG_HOME") + "/sonata/config.toml",
                   "[harnesses.pi]\npath = \"" SONATA_DISPATCH_HARNESS "\"\n");
        init_git_project();
        ASSERT_FALSE(fs::exists(m_project + "/.sonata"));
    }
};

TEST_F(FirstWorktreeRun, IsFoundAndAppliedLikeEveryLaterOneAndAnEarlierRunInPlaceStaysFound) {
    const auto in_place = dispatch("pi", "code", "acceptEdits", "scenario: final P-1");
    ASSERT_EQ(in_place.exit_code, 0) << in_place.err;
    const std::string first = receipt_of(in_place).at("id");
    const json r = attack("edit");
    const std::string id = r.at("id");
    const auto applied = sonata({"apply", id});
    ASSERT_EQ(applied.exit_code, 0) << applied.err;
    EXPECT_EQ(applied.out, "applied run " + id + ": T.txt, a.txt\n");
    EXPECT_EQ(read_text(m_project + "/T.txt"), "T\n");
    for (const std::string& run : {first, id}) {
        const auto found = sonata({"status", run});
        EXPECT_EQ(found.exit_code, 0) << run << ": " << found.err;
    }
    const auto later = dispatch("pi", "code", "acceptEdits", "scenario: final P-2");
    ASSERT_EQ(later.exit_code, 0) << later.err;
    EXPECT_EQ(sonata({"status", receipt_of(later).at("id")}).exit_code, 0);
    const auto runs = sonata({"runs"});
    for (const std::string& run : {first, id, receipt_of(later).at("id").get<std::string>()})
        EXPECT_NE(runs.out.find(run), std::string::npos) << runs.out;
}

// A worktree run's changes to paths Claude Code guards (it asks before writing them) land only
// when the user confirms them at a terminal: apply lands the rest and says what it held back, and
// the MCP apply, whose arguments the model sets, never lands them.
TEST_F(WorktreeAttack, ApplyHoldsBackGuardedPathsUntilTheUserIncludesThem) {
    const std::string id = attack("wt-sensitive").at("id");
    const std::string guarded = ".claude/settings.json, .mcp.json, sub/.vscode/tasks.json";
    const auto first = sonata({"apply", id});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(first.out, "applied run " + id + ": ordinary.txt\n" +
                             "held back, as paths Claude Code asks before it writes: " + guarded +
                             " (read them with `sonata diff " + id +
                             "`; land them with `sonata "
                             "apply " +
                             id + " --include-sensitive`)\n");
    EXPECT_EQ(read_text(m_project + "/ordinary.txt"), "an ordinary change\n");
    for (const char* path : {".mcp.json", ".claude/settings.json", "sub/.vscode/tasks.json"})
        EXPECT_FALSE(fs::exists(m_project + "/" + path)) << path;

    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    write_text(m_project + "/.sonata/session-s5.json",
               session_record_to_json({"s5", Mode::accept_edits, now}));
    m_env["CLAUDE_CODE_SESSION_ID"] = "s5";
    testing::McpSession server(m_env, m_project);
    const json answer = server.request(stateless_tool_call(1, "apply", {{"id", id}}));
    EXPECT_EQ(answer["result"]["content"][0]["text"],
              "run " + id +
                  "'s changes are in your tree already: ordinary.txt\nheld back, as "
                  "paths Claude Code asks before it writes: " +
                  guarded +
                  " (read them with `sonata "
                  "diff " +
                  id + "`; land them with `sonata apply " + id + " --include-sensitive`)\n")
        << answer.dump();
    EXPECT_FALSE(fs::exists(m_project + "/.mcp.json"));
    server.close();

    const auto second = sonata({"apply", id, "--include-sensitive"});
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(second.out, "applied run " + id +
                              ": .claude/settings.json, .mcp.json, ordinary.txt, "
                              "sub/.vscode/tasks.json\n");
    EXPECT_EQ(read_text(m_project + "/.mcp.json"), R"({"mcpServers":{"planted":{"command":"sh"}}})"
                                                   "\n");
    EXPECT_EQ(read_text(m_project + "/sub/.vscode/tasks.json"), "{}\n");
}

// The parent's guard gates a dispatch: a harness measured writing .mcp.json unasked in acceptEdits
// is refused in place, the refusal proposing a worktree, and runs there (its apply holds the
// guarded paths back, as the test above shows).
TEST_F(WorktreeAttack, AChildThatWritesGuardedPathsRunsOnlyInAWorktree) {
    const json plan = json::parse(
        sonata({"plan", "--harness", "grok", "--role", "code", "--mode", "acceptEdits", "--json"})
            .out);
    Matrix matrix;
    for (const auto& probe : plan.at("relies_on")) {
        Cell c;
        c.harness = "grok";
        c.version = "1.0.0";
        c.probe = probe;
        c.mode = "acceptEdits";
        c.role = "write";
        c.verdict = probe == "protected-path-write" ? Verdict::violated : Verdict::enforced;
        c.evidence.reason = "wrote 1 path(s) the parent guards, unasked: work/.mcp.json";
        c.evidence.files_changed = {"created work/.mcp.json"};
        matrix.merge({c});
    }
    ASSERT_TRUE(save_matrix(matrix, m_dir.path() + "/matrix.json"));
    const std::vector<std::string> args{"dispatch",
                                        "--harness",
                                        "grok",
                                        "--role",
                                        "code",
                                        "--mode",
                                        "acceptEdits",
                                        "--task",
                                        "scenario: edit G-1",
                                        "--matrix",
                                        m_dir.path() + "/matrix.json"};
    const auto refused = sonata(args);
    EXPECT_EQ(refused.exit_code, to_int(ExitCode::refused)) << refused.out;
    EXPECT_NE(refused.out.find("probe protected-path-write measured 'violated' for grok@1.0.0"),
              std::string::npos)
        << refused.out;
    EXPECT_NE(refused.out.find("the same harness in a git worktree of its own"), std::string::npos)
        << refused.out;
    EXPECT_FALSE(fs::exists(m_project + "/G-1.txt"));

    auto in_worktree = args;
    in_worktree.insert(in_worktree.end(), {"--worktree", "--json"});
    const auto ran = sonata(in_worktree);
    ASSERT_EQ(ran.exit_code, 0) << ran.err << ran.out;
    const json r = receipt_of(ran);
    EXPECT_EQ(r.at("state"), "done");
    EXPECT_TRUE(fs::exists(r.at("worktree").at("path").get<std::string>() + "/G-1.txt"));
    expect_nothing_left();
}

TEST_F(WorktreeAttack, TheUsersOwnIgnoreRulesStillHoldForARunsFiles) {
    write_text(m_dir.path() + "/user-ignore", "T.txt\n");
    write_text(m_env.at("HOME") + "/.gitconfig",
               "[core]\n\texcludesFile = " + m_dir.path() + "/user-ignore\n");
    const std::string id = attack("edit").at("id");
    const auto applied = sonata({"apply", id});
    ASSERT_EQ(applied.exit_code, 0) << applied.err;
    EXPECT_EQ(applied.out, "applied run " + id + ": a.txt\n");
    EXPECT_FALSE(fs::exists(m_project + "/T.txt"));
}

TEST_F(WorktreeAttack, ALinkInSonatasOwnDirectoriesIsAnErrorNamingItAndNothingGoesThroughIt) {
    const std::string elsewhere = m_dir.make_dir("elsewhere");
    write_text(elsewhere + "/runs/20000101-000000000-000000/keep.txt", "kept\n");
    for (const std::string& link : {std::string(".sonata/runs"), std::string(".sonata")}) {
        fs::remove_all(m_project + "/.sonata");
        if (link == ".sonata/runs") fs::create_directories(m_project + "/.sonata");
        fs::create_directory_symlink(link == ".sonata" ? elsewhere : elsewhere + "/runs",
                                     m_project + "/" + link);
        const auto run = dispatch("pi", "code", "acceptEdits", "scenario: final L-1");
        EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << link << run.out;
        EXPECT_NE(run.err.find(m_project + "/" + link + " is a link"), std::string::npos)
            << run.err;
        const auto gc = sonata({"gc", "--older-than", "0s"});
        EXPECT_EQ(gc.exit_code, to_int(ExitCode::bad_data)) << link << gc.out;
        EXPECT_NE(gc.err.find(m_project + "/" + link + " is a link"), std::string::npos) << gc.err;
        std::size_t entries = 0;
        for ([[maybe_unused]] const auto& entry : fs::directory_iterator(elsewhere + "/runs"))
            ++entries;
        EXPECT_EQ(entries, 1U) << link << ": nothing written or removed through the link";
        EXPECT_EQ(read_text(elsewhere + "/runs/20000101-000000000-000000/keep.txt"), "kept\n");
    }
}

} // namespace worktree_attack_test
} // namespace sonata
