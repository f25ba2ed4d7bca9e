// `sonata dispatch --fanout` through the real binary and the stand-in harness: one task on several
// harnesses at once, each planned and gated on its own; the combined report has a section per
// harness (its status line and report, or why it was refused), exit 0 when one run is done; a
// write role's runs each work in a worktree of their own, and each section ends with its changes.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/dispatch_fixture.hpp"
#include "tests/support/mcp_session.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::write_text;

class Fanout : public testing::DispatchFixture {
protected:
    void SetUp() override { use_stand_in({"pi", "grok", "agy"}, SONATA_DISPATCH_HARNESS); }
};

TEST_F(Fanout, AReadOnlyFanoutRunsEachHarnessAndListsTheRefusedOne) {
    const auto run = sonata({"dispatch", "--fanout", "pi,grok,agy", "--role", "review", "--mode",
                             "default", "--task", "scenario: final F-1"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out.rfind("fan-out to 3 harness(es): 2 ran\n", 0), 0U) << run.out;
    for (const std::string h : {"pi", "grok"}) {
        const auto at = run.out.find("\n## " + h + ": ");
        ASSERT_NE(at, std::string::npos) << h << "\n" << run.out;
        EXPECT_NE(run.out.find("  done  " + h + "@1.0.0  plan  review", at), std::string::npos)
            << run.out;
    }
    EXPECT_NE(run.out.find("\n## agy: refused: agy has no read-only mode"), std::string::npos)
        << run.out;
    const std::size_t answers = [&] {
        std::size_t n = 0;
        for (auto at = run.out.find("final answer F-1"); at != std::string::npos;
             at = run.out.find("final answer F-1", at + 1))
            ++n;
        return n;
    }();
    EXPECT_EQ(answers, 2U) << run.out;
    expect_nothing_left();
}

TEST_F(Fanout, AWriteFanoutRunsEachInItsOwnWorktree) {
    Environment& env = m_env;
    env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = "user";
    env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = "user@example.com";
    for (const std::vector<std::string>& step :
         {std::vector<std::string>{"init", "--quiet", "-b", "main"},
          std::vector<std::string>{"add", "-A"},
          std::vector<std::string>{"commit", "--quiet", "--allow-empty", "-m", "first"}}) {
        testing::git_in(m_project, step, m_env);
    }
    ASSERT_FALSE(HasFailure());
    write_text(m_project + "/a.txt", "the user's\n");
    const auto run = sonata({"dispatch", "--fanout", "pi,grok", "--role", "code", "--mode",
                             "acceptEdits", "--task", "scenario: edit F-2"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(read_text(m_project + "/a.txt"), "the user's\n") << "the runs wrote elsewhere";
    EXPECT_FALSE(fs::exists(m_project + "/F-2.txt"));
    std::size_t worktrees = 0;
    for (const auto& entry : fs::directory_iterator(m_project + "/.sonata/worktrees")) {
        if (!entry.is_directory()) continue;
        ++worktrees;
        EXPECT_EQ(read_text(entry.path().string() + "/a.txt"), "the user's\nedited F-2\n");
    }
    EXPECT_EQ(worktrees, 2U);
    // Each section ends with its run's changes.
    std::size_t changes = 0;
    for (auto at = run.out.find("changes in worktree "); at != std::string::npos;
         at = run.out.find("changes in worktree ", at + 1))
        ++changes;
    EXPECT_EQ(changes, 2U) << run.out;
    expect_nothing_left();
}

TEST_F(Fanout, TheMcpDispatchFansOutAndAnswersWithTheCombinedReportEvenToATaskClient) {
    testing::McpSession server(m_env, m_project);
    json params = {
        {"name", "dispatch"},
        {"arguments",
         {{"role", "review"}, {"fanout", {"pi", "grok", "agy"}}, {"task", "scenario: final F-3"}}}};
    params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                       {"io.modelcontextprotocol/clientCapabilities",
                        {{"extensions", {{"io.modelcontextprotocol/tasks", json::object()}}}}}};
    const json answer = server.request(
        {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", params}});
    const json& r = answer["result"];
    ASSERT_EQ(r["resultType"], "complete") << "several runs are not one task: " << answer.dump();
    EXPECT_EQ(r["isError"], false);
    EXPECT_EQ(r["structuredContent"]["state"], "fanout");
    EXPECT_EQ(r["structuredContent"]["runs"].size(), 2U);
    const std::string text = r["content"][0]["text"];
    EXPECT_NE(text.find("## agy: refused: agy has no read-only mode"), std::string::npos) << text;
    EXPECT_NE(text.find("final answer F-3"), std::string::npos) << text;
    // A fan-out names its role, not a harness.
    params["arguments"]["harness"] = "pi";
    const json bad = server.request(
        {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"}, {"params", params}});
    EXPECT_NE(bad["result"]["content"][0]["text"].get<std::string>().find(
                  "a fan-out names its own harnesses"),
              std::string::npos)
        << bad.dump();
    server.close();
    expect_nothing_left();
}

TEST_F(Fanout, ARoleWithAFanoutFansOutADispatchThatNamesNoHarness) {
    write_text(m_project + "/sonata.toml",
               "[roles.second]\nkind = \"read-only\"\nfanout = [\"pi\", \"grok\"]\n");
    const auto run = sonata(
        {"dispatch", "--role", "second", "--mode", "default", "--task", "scenario: final F-4"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out.rfind("fan-out to 2 harness(es): 2 ran\n", 0), 0U) << run.out;
    // "all": every installed harness whose cells hold here; agy, refused read-only, is left out.
    const auto all = sonata({"dispatch", "--fanout", "all", "--role", "review", "--mode", "default",
                             "--task", "scenario: final F-5"});
    EXPECT_EQ(all.exit_code, 0) << all.err;
    EXPECT_EQ(all.out.find("## agy"), std::string::npos) << all.out;
    EXPECT_NE(all.out.find("\n## pi: "), std::string::npos) << all.out;
    expect_nothing_left();
}

TEST_F(Fanout, AWriteFanoutInPlanModeIsPlannedAsASingleDispatchIs) {
    // A parent in plan mode: a write role runs read-only in plan where the harness has a plan
    // mapping (pi), and is refused where it has none (agy), each exactly as a single dispatch.
    // Nothing writes, so no run needs a worktree: the workspace need not be a git repository.
    const auto pi = dispatch("pi", "code", "plan", "scenario: final F-6", {});
    ASSERT_EQ(pi.exit_code, 0) << pi.err;
    EXPECT_EQ(receipt_of(pi).at("mode"), "plan");
    const auto agy = dispatch("agy", "code", "plan", "scenario: final F-6", {});
    ASSERT_EQ(agy.exit_code, to_int(ExitCode::refused)) << agy.out;
    const std::string agy_reason = agy.out.substr(agy.out.find("refuse: ") + 8);
    const auto run = sonata({"dispatch", "--fanout", "pi,agy", "--role", "code", "--mode", "plan",
                             "--task", "scenario: final F-6"});
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(run.out.rfind("fan-out to 2 harness(es): 1 ran\n", 0), 0U) << run.out;
    EXPECT_NE(run.out.find("  done  pi@1.0.0  plan  code"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("\n## agy: refused: " + agy_reason.substr(0, agy_reason.find('\n'))),
              std::string::npos)
        << run.out << "\nthe single dispatch's refusal: " << agy_reason;
    EXPECT_FALSE(fs::exists(m_project + "/.sonata/worktrees")) << "a plan run got a worktree";
    expect_nothing_left();
}

TEST_F(Fanout, BadListsAreUsageErrors) {
    for (const std::string list : {"pi", "pi,pi", "pi,nosuch", ","}) {
        const auto run = sonata(
            {"dispatch", "--fanout", list, "--role", "review", "--mode", "default", "--task", "x"});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::usage)) << list << ": " << run.err;
        EXPECT_NE(run.err.find("--fanout"), std::string::npos) << run.err;
    }
    const auto both = sonata({"dispatch", "--fanout", "pi,grok", "--harness", "pi", "--role",
                              "review", "--mode", "default", "--task", "x"});
    EXPECT_EQ(both.exit_code, to_int(ExitCode::usage)) << both.err;
}

} // namespace
} // namespace sonata
