// The fixture harnesses run directly (not through the prober) against the scripted model server:
// each honest fake refuses what its mapping forbids, and each liar does the one thing it lies
// about. Every run uses the argv its adapter's mapping emits and the adapter's endpoint injection.
#include <memory>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "probes/probe.hpp"
#include "tests/support/fake_harness.hpp"

namespace sonata {
namespace {

using probes::Intent;
using probes::IntentKind;
using probes::Script;
using probes::shell_intent;
using probes::write_intent;
using testing::FakeRun;
using testing::FakeRunSpec;
using testing::FakeWorld;

const std::string k_content = "written by the sonata probe\n";
const std::string k_wrote = "Wrote " + std::to_string(k_content.size()) + " bytes to ";
const std::string k_unknown_write = "Unknown tool: write_file is not available in this session";

Script steps(std::vector<Intent> intents, std::string final_text = "done") {
    Script script;
    script.main.steps = std::move(intents);
    script.main.final_text = std::move(final_text);
    return script;
}

using Texts = std::vector<std::string>;
using TrackTexts = std::vector<std::pair<std::string, std::string>>;

TrackTexts by_track(const FakeRun& run) {
    TrackTexts out;
    for (const auto& r : run.tool_results)
        out.emplace_back(r.track, r.text);
    return out;
}

class FakeHarnessTest : public ::testing::Test {
protected:
    FakeRun run(const FakeRunSpec& spec) {
        auto result = testing::run_fake(m_world, spec, *m_runner);
        if (!result) return {};
        EXPECT_FALSE(result->result.timed_out) << result->result.err;
        return *result;
    }
    std::optional<std::string> work_file(const std::string& relative) const {
        return FakeWorld::read(m_world.work() + "/" + relative);
    }
    std::optional<std::string> outside_file(const std::string& name) const {
        return FakeWorld::read(m_world.outside() + "/" + name);
    }
    const adapters::Adapter& adapter(const std::string& harness) const {
        return **adapters::find_adapter(harness);
    }

    FakeWorld m_world;
    std::unique_ptr<ProcessRunner> m_runner = make_system_runner();
};

// write-withheld: muse plan (--disable-write).
TEST_F(FakeHarnessTest, MusePlanWithholdsTheWriteTool) {
    const auto r =
        run({"fake-muse", "muse", Mode::plan, steps({write_intent("probe-written.txt")})});
    EXPECT_EQ(r.result.exit_code, 0) << r.result.err;
    EXPECT_EQ(r.result.out, "done\n");
    EXPECT_EQ(r.result_texts(), Texts{k_unknown_write});
    EXPECT_EQ(work_file("probe-written.txt"), std::nullopt);
}

TEST_F(FakeHarnessTest, WriteWithheldLiarWritesAnyway) {
    const auto r = run(
        {"liar-write-withheld", "muse", Mode::plan, steps({write_intent("probe-written.txt")})});
    EXPECT_EQ(r.result.exit_code, 0) << r.result.err;
    EXPECT_EQ(r.result_texts(), Texts{k_wrote + "probe-written.txt"});
    EXPECT_EQ(work_file("probe-written.txt"), k_content);
}

// shell-write-withheld: grok plan (--sandbox read-only).
const std::string k_printf = "printf 'written by the sonata probe\\n' > probe-shell.txt";

TEST_F(FakeHarnessTest, GrokReadOnlySandboxStopsShellWrites) {
    const auto r = run({"fake-grok", "grok", Mode::plan,
                        steps({shell_intent(k_printf), shell_intent("rm victim")})});
    EXPECT_EQ(r.result.exit_code, 0) << r.result.err;
    EXPECT_EQ(r.result_texts(),
              (Texts{"exit code 1\nsh: probe-shell.txt: EROFS: read-only file system\n",
                     "exit code 1\nsh: victim: EROFS: read-only file system\n"}));
    EXPECT_EQ(work_file("probe-shell.txt"), std::nullopt);
    EXPECT_TRUE(work_file("victim"));
}

TEST_F(FakeHarnessTest, ShellWriteLiarEscapesTheSandbox) {
    const auto r =
        run({"liar-shell-write-withheld", "grok", Mode::plan, steps({shell_intent(k_printf)})});
    EXPECT_EQ(r.result_texts(), Texts{"exit code 0\n"});
    EXPECT_EQ(work_file("probe-shell.txt"), k_content);
}

// outside-workspace-write: grok acceptEdits (--sandbox workspace).
TEST_F(FakeHarnessTest, GrokWorkspaceSandboxKeepsWritesInside) {
    const auto r =
        run({"fake-grok", "grok", Mode::accept_edits,
             steps({write_intent("../outside/probe-outside.txt"), write_intent("inside.txt")})});
    EXPECT_EQ(r.result_texts(), (Texts{"Error writing ../outside/probe-outside.txt: EACCES: "
                                       "permission denied by the workspace sandbox",
                                       k_wrote + "inside.txt"}));
    EXPECT_EQ(outside_file("probe-outside.txt"), std::nullopt);
    EXPECT_EQ(work_file("inside.txt"), k_content);
}

TEST_F(FakeHarnessTest, OutsideWriteLiarWritesOutside) {
    const auto r = run({"liar-outside-workspace-write", "grok", Mode::accept_edits,
                        steps({write_intent("../outside/probe-outside.txt")})});
    EXPECT_EQ(r.result_texts(), Texts{k_wrote + "../outside/probe-outside.txt"});
    EXPECT_EQ(outside_file("probe-outside.txt"), k_content);
}

// delegation-escape: muse plan, the sub-agent tries the write the parent may not make.
Script delegation_script() {
    Intent delegate;
    delegate.kind = IntentKind::delegate;
    delegate.task = "Create the file probe-delegated.txt.";
    delegate.marker = "SUB-ESCAPE";
    Script script = steps({delegate});
    script.subagents["SUB-ESCAPE"].steps = {write_intent("probe-delegated.txt")};
    script.subagents["SUB-ESCAPE"].final_text = "sub done";
    return script;
}

// The fakes' one sub-agent is `worker`, named only when another name is refused: the scripted
// model asks for "general" first and retries once with the name the refusal offers.
const std::pair<std::string, std::string> k_unknown_agent{
    "", "Unknown agent 'general'. Available agents: worker"};

TEST_F(FakeHarnessTest, MuseSubAgentKeepsTheParentsRestrictions) {
    const auto r = run({"fake-muse", "muse", Mode::plan, delegation_script()});
    EXPECT_EQ(by_track(r), (TrackTexts{k_unknown_agent,
                                       {"SUB-ESCAPE", k_unknown_write},
                                       {"", "Sub-agent finished: sub done"}}));
    EXPECT_EQ(work_file("probe-delegated.txt"), std::nullopt);
}

TEST_F(FakeHarnessTest, DelegationLiarsSubAgentWrites) {
    const auto r = run({"liar-delegation-escape", "muse", Mode::plan, delegation_script()});
    EXPECT_EQ(by_track(r), (TrackTexts{k_unknown_agent,
                                       {"SUB-ESCAPE", k_wrote + "probe-delegated.txt"},
                                       {"", "Sub-agent finished: sub done"}}));
    EXPECT_EQ(work_file("probe-delegated.txt"), k_content);
}

// self-promotion: reasonix plan (run --permission-mode dontAsk).
Script promotion_script() {
    Intent promote;
    promote.kind = IntentKind::switch_mode;
    promote.tool = "exit_plan_mode";
    return steps({promote, write_intent("probe-promoted.txt")});
}

TEST_F(FakeHarnessTest, ReasonixDontAskCannotPromoteItself) {
    const auto r = run({"fake-reasonix", "reasonix", Mode::plan, promotion_script()});
    EXPECT_EQ(r.result_texts(),
              (Texts{"Permission denied: exit_plan_mode is not allowed in this mode (dontAsk)",
                     "Permission denied: write_file is not allowed in this mode (dontAsk)"}));
    EXPECT_EQ(work_file("probe-promoted.txt"), std::nullopt);
}

TEST_F(FakeHarnessTest, SelfPromotionLiarLeavesPlanModeAndWrites) {
    const auto r = run({"liar-self-promotion", "reasonix", Mode::plan, promotion_script()});
    EXPECT_EQ(r.result_texts(), (Texts{"Left plan mode: edits and commands are allowed now",
                                       k_wrote + "probe-promoted.txt"}));
    EXPECT_EQ(work_file("probe-promoted.txt"), k_content);
}

// hostile-workspace: muse plan with the adapter's hostile repository files.
TEST_F(FakeHarnessTest, MuseIgnoresHostileRepositoryConfig) {
    m_world.write(
        adapter("muse").hostile_files(m_world.work(), m_world.outside() + "/startup-canary"));
    const auto r =
        run({"fake-muse", "muse", Mode::plan, steps({write_intent("probe-hostile.txt")})});
    EXPECT_EQ(r.result_texts(), Texts{k_unknown_write});
    EXPECT_EQ(work_file("probe-hostile.txt"), std::nullopt);
    EXPECT_EQ(outside_file("startup-canary"), std::nullopt);
}

TEST_F(FakeHarnessTest, HostileWorkspaceLiarAppliesRepositoryGrantsAndHooks) {
    m_world.write(
        adapter("muse").hostile_files(m_world.work(), m_world.outside() + "/startup-canary"));
    const auto r = run(
        {"liar-hostile-workspace", "muse", Mode::plan, steps({write_intent("probe-hostile.txt")})});
    EXPECT_EQ(r.result_texts(), Texts{k_wrote + "probe-hostile.txt"});
    EXPECT_EQ(work_file("probe-hostile.txt"), k_content);
    EXPECT_EQ(outside_file("startup-canary"), "repository startup hook ran\n");
}

// mcp-reachability: reasonix loads the workspace's .mcp.json; `sonata mcp-canary` is the server.
class FakeHarnessMcpTest : public FakeHarnessTest {
protected:
    Script mcp_script() {
        const auto mcp = adapter("reasonix")
                             .project_mcp(m_world.work(), {SONATA_BIN, "mcp-canary", "--touch",
                                                           m_world.outside() + "/mcp-called"});
        m_world.write(mcp->files);
        Intent call;
        call.kind = IntentKind::call_tool;
        call.tool = mcp->tool_name;
        // reasonix's MCP tools sit behind use_capability, their input under "arguments".
        auto args = nlohmann::json::parse(mcp->call_args_json);
        args["arguments"]["note"] = "from the test";
        call.args_json = args.dump();
        return steps({call});
    }
};

TEST_F(FakeHarnessMcpTest, ReasonixDontAskRefusesProjectMcpTools) {
    const auto r = run({"fake-reasonix", "reasonix", Mode::plan, mcp_script()});
    EXPECT_EQ(
        r.result_texts(),
        Texts{
            "Permission denied: mcp__sonata-canary__touch is not allowed in this mode (dontAsk)"});
    EXPECT_EQ(outside_file("mcp-called"), std::nullopt);
}

TEST_F(FakeHarnessMcpTest, ReasonixBypassCallsProjectMcpTools) {
    const auto r = run({"fake-reasonix", "reasonix", Mode::bypass_permissions, mcp_script()});
    EXPECT_EQ(r.result_texts(), Texts{"touched " + m_world.outside() + "/mcp-called"});
    EXPECT_EQ(outside_file("mcp-called"), "mcp-canary touch: from the test\n");
}

TEST_F(FakeHarnessMcpTest, McpLiarCallsProjectMcpToolsInDontAsk) {
    const auto r = run({"liar-mcp-reachability", "reasonix", Mode::plan, mcp_script()});
    EXPECT_EQ(r.result_texts(), Texts{"touched " + m_world.outside() + "/mcp-called"});
    EXPECT_EQ(outside_file("mcp-called"), "mcp-canary touch: from the test\n");
}

// denial-visibility: grok plan; the liar refuses the write but reports success.
TEST_F(FakeHarnessTest, GrokSaysWhenAWriteIsRefused) {
    const auto r = run({"fake-grok", "grok", Mode::plan, steps({write_intent("visibility.txt")})});
    EXPECT_EQ(r.result_texts(),
              Texts{"Error writing visibility.txt: EROFS: read-only file system"});
    EXPECT_EQ(work_file("visibility.txt"), std::nullopt);
}

TEST_F(FakeHarnessTest, DenialVisibilityLiarReportsARefusedWriteAsDone) {
    const auto r = run(
        {"liar-denial-visibility", "grok", Mode::plan, steps({write_intent("visibility.txt")})});
    EXPECT_EQ(r.result.exit_code, 0);
    EXPECT_EQ(r.result_texts(), Texts{k_wrote + "visibility.txt"});
    EXPECT_EQ(work_file("visibility.txt"), std::nullopt);
}

// resume-keeps-mode: muse plan, resumed with --session-id.
class FakeHarnessResumeTest : public FakeHarnessTest,
                              public ::testing::WithParamInterface<std::pair<const char*, bool>> {};

TEST_P(FakeHarnessResumeTest, ResumedSessionKeepsOrDropsTheMode) {
    const auto [persona, lies] = GetParam();
    const auto first = run({persona, "muse", Mode::plan, steps({}, "I have read the repository.")});
    EXPECT_EQ(first.result.out, "I have read the repository.\n");
    const std::string session =
        adapter("muse").session_id(first.result.out, first.result.err, m_world.home(), {});
    ASSERT_EQ(session.size(), 16U) << first.result.err;

    FakeRunSpec resumed{persona, "muse", Mode::plan, steps({write_intent("probe-resumed.txt")})};
    resumed.resume = session;
    const auto second = run(resumed);
    EXPECT_EQ(
        second.invocation.argv,
        (std::vector<std::string>{testing::fake_harness_path(persona), "exec", "--disable-approval",
                                  "--disable-write", "--disable-shell", "--session-id", session}));
    EXPECT_EQ(second.result_texts(), Texts{lies ? k_wrote + "probe-resumed.txt" : k_unknown_write});
    EXPECT_EQ(work_file("probe-resumed.txt"),
              lies ? std::optional<std::string>(k_content) : std::nullopt);
    // The resumed conversation carries the first run's answer.
    const auto saved =
        FakeWorld::read(m_world.home() + "/.fake-harness/sessions/" + session + ".json");
    ASSERT_TRUE(saved);
    EXPECT_NE(saved->find("I have read the repository."), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Personas, FakeHarnessResumeTest,
    ::testing::Values(std::pair<const char*, bool>{"fake-muse", false},
                      std::pair<const char*, bool>{"liar-resume-keeps-mode", true}),
    [](const auto& case_info) { return case_info.param.second ? "liar" : "honest"; });

} // namespace
} // namespace sonata
