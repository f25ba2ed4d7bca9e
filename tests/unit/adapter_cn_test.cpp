// The cn mode table, whole invocations: `cn -p` with its shell excluded below bypass (its
// --readonly allows Bash), the file tools excluded in plan and allowed in acceptEdits, --auto only
// in bypass, default refused (no approval prompt headless), Continue's directory pinned in every
// mode (a repository's .env could move it); what configured arguments may not add; its session
// files, project files and probe endpoint.
#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "core/fs.hpp"
#include "tests/support/mode_table.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::testing {
namespace {

using Strings = std::vector<std::string>;

const char* k_note = "tool rules, not an OS sandbox";
const Strings k_excluded_shell{"--exclude", "Bash", "--exclude", "CheckBackgroundJob"};

Strings argv_of(const Strings& middle) {
    Strings argv{"cn", "-p"};
    argv.insert(argv.end(), middle.begin(), middle.end());
    return argv;
}

Strings with_edit_tools(const char* flag) {
    Strings argv = k_excluded_shell;
    for (const char* tool : {"Write", "Edit", "MultiEdit"})
        argv.insert(argv.end(), {flag, tool});
    return argv;
}

Invocation cn_run(Strings argv, Strings relies, Strings notes) {
    Invocation inv = headless_invocation(std::move(argv), std::move(relies), std::move(notes));
    inv.env = {{"CONTINUE_GLOBAL_DIR", "/home/user/.continue"}, {"CONTINUE_CLI_AUTO_UPDATED", "1"}};
    return inv;
}

Invocation invocation_of(const PlanCase& c) {
    auto decision = decide_case(c);
    EXPECT_TRUE(decision && decision->runs()) << (decision ? "" : decision.error().message);
    return decision && decision->runs() ? decision->invocation() : Invocation{};
}

TEST(CnAdapter, PlanExcludesTheShellAndTheFileTools) {
    EXPECT_EQ(invocation_of(plan_case("cn", Mode::plan, RoleKind::read_only)),
              cn_run(argv_of(with_edit_tools("--exclude")),
                     {"write-withheld", "shell-write-withheld", "delegation-escape",
                      "self-promotion", "hostile-workspace", "mcp-reachability", "tool-census"},
                     {k_note}));
}

TEST(CnAdapter, AcceptEditsAllowsTheFileToolsAndBypassAloneIsAuto) {
    EXPECT_EQ(invocation_of(plan_case("cn", Mode::accept_edits)),
              cn_run(argv_of(with_edit_tools("--allow")),
                     testing::guarded({"outside-workspace-write", "hostile-workspace",
                                       "tool-census", "rm-prompt", "delegation-escape"}),
                     {k_note}));
    EXPECT_EQ(invocation_of(plan_case("cn", Mode::bypass_permissions)),
              cn_run(argv_of({"--auto"}), {}, {"no sandbox: shell commands run unasked"}));
    const Invocation narrowed = invocation_of(no_bypass(plan_case("cn", Mode::bypass_permissions)));
    EXPECT_EQ(narrowed.argv, argv_of(with_edit_tools("--allow")));
}

TEST(CnAdapter, DefaultIsRefusedAndSoIsAnyModeWithoutAContinueDirectory) {
    auto decision = decide_case(plan_case("cn", Mode::default_mode));
    ASSERT_TRUE(decision);
    ASSERT_FALSE(decision->runs());
    EXPECT_NE(decision->refusal().reason.find("no approval prompt"), std::string::npos);
    EXPECT_FALSE(decision->refusal().alternatives.empty());
    PlanCase homeless = plan_case("cn", Mode::plan, RoleKind::read_only);
    homeless.host.env.erase("HOME");
    decision = decide_case(homeless);
    ASSERT_TRUE(decision);
    ASSERT_FALSE(decision->runs());
    EXPECT_NE(decision->refusal().reason.find("CONTINUE_GLOBAL_DIR"), std::string::npos);
    // cn's own host fact: Continue's directory, from CONTINUE_GLOBAL_DIR before HOME.
    PlanCase pinned = plan_case("cn", Mode::plan, RoleKind::read_only);
    pinned.host.env["CONTINUE_GLOBAL_DIR"] = "/srv/continue";
    decision = decide_case(pinned);
    ASSERT_TRUE(decision && decision->runs());
    EXPECT_EQ(decision->invocation().env.at("CONTINUE_GLOBAL_DIR"), "/srv/continue");
    pinned.host.env["CONTINUE_GLOBAL_DIR"] = "relative/continue";
    decision = decide_case(pinned);
    ASSERT_TRUE(decision && decision->runs());
    EXPECT_EQ(decision->invocation().env.at("CONTINUE_GLOBAL_DIR"), "/home/user/.continue");
}

TEST(CnAdapter, ResumeForksTheSessionWithTheSameRestrictions) {
    PlanCase c = plan_case("cn", Mode::plan, RoleKind::read_only);
    c.resume = "a5ae30de-a13c-4684-929a-1c6ccd8fbdd2";
    const Invocation inv = invocation_of(c);
    Strings want = argv_of(with_edit_tools("--exclude"));
    want.insert(want.end(), {"--fork", "a5ae30de-a13c-4684-929a-1c6ccd8fbdd2"});
    EXPECT_EQ(inv.argv, want);
    EXPECT_EQ(inv.relies_on.back(), "resume-keeps-mode");
}

TEST(CnAdapter, ConfigCannotWidenBelowBypass) {
    for (const Strings& args :
         {Strings{"--auto"}, Strings{"--readonly"}, Strings{"--allow", "Bash"},
          Strings{"--ask", "Bash"}, Strings{"--config", "/x.yaml"}, Strings{"--resume"},
          Strings{"--fork", "x"}, Strings{"--mcp", "o/p"}, Strings{"--agent", "o/p"},
          Strings{"--org", "o"}, Strings{"--beta-subagent-tool"}, Strings{"--format", "json"}}) {
        PlanCase c = plan_case("cn", Mode::plan, RoleKind::read_only);
        c.extra_args = args;
        EXPECT_FALSE(decide_case(c)) << args.front();
    }
    EXPECT_EQ(extra_args_error(plan_case("cn", Mode::accept_edits), {"--readonly"}).message,
              "flag '--readonly' is forbidden for cn in acceptEdits mode (config)");
    PlanCase narrowed = plan_case("cn", Mode::accept_edits);
    narrowed.extra_args = {"--exclude", "Fetch"};
    EXPECT_TRUE(decide_case(narrowed));
}

TEST(CnAdapter, ReadsTheTokensAndSessionOfTheRunFromItsSessionFile) {
    const auto& cn = **adapters::find_adapter("cn");
    ScratchDir dir;
    const std::string sessions = dir.path() + "/.continue/sessions/";
    const auto session = [](const char* id, const char* answer, int prompt) {
        return std::string(R"({"sessionId":")") + id +
               R"(","history":[{"message":{"role":"user","content":"task"}},)"
               R"({"message":{"role":"assistant","content":")" +
               answer + R"("}}],"usage":{"promptTokens":)" + std::to_string(prompt) +
               R"(,"completionTokens":3}})";
    };
    write_text(sessions + "a5ae30de-a13c-4684-929a-1c6ccd8fbdd2.json",
               session("a5ae30de-a13c-4684-929a-1c6ccd8fbdd2", "the report", 1379));
    write_text(sessions + "sessions.json", "[]");
    const std::string out = "the report\n";
    EXPECT_EQ(cn.session_id(out, "", dir.path(), {}), "a5ae30de-a13c-4684-929a-1c6ccd8fbdd2");
    const auto cost = cn.run_cost(out, "", dir.path());
    EXPECT_EQ(cost.source, CostSource::unknown);
    EXPECT_FALSE(cost.usd);
    EXPECT_EQ(cost.input_tokens, 1379);
    EXPECT_EQ(cost.output_tokens, 3);
    // Another run's session, newer, whose answer is not this run's: not this run's.
    write_text(sessions + "c0191067-7711-4f19-a841-91b3265db0af.json",
               session("c0191067-7711-4f19-a841-91b3265db0af", "another report", 7));
    EXPECT_EQ(cn.session_id(out, "", dir.path(), {}), "a5ae30de-a13c-4684-929a-1c6ccd8fbdd2");
    // The directory the invocation named, and ids that are no UUID.
    Invocation named;
    named.env["CONTINUE_GLOBAL_DIR"] = dir.path() + "/elsewhere";
    EXPECT_EQ(cn.session_id(out, "", dir.path(), named), "");
    write_text(dir.path() + "/elsewhere/sessions/x.json", session("-rf /", "the report", 1));
    EXPECT_EQ(cn.session_id(out, "", dir.path(), named), "");
}

TEST(CnAdapter, ProbedThroughAConfigInItsOwnDirectory) {
    const auto& cn = **adapters::find_adapter("cn");
    const auto injected =
        cn.inject_endpoint(invocation_of(plan_case("cn", Mode::plan, RoleKind::read_only)),
                           {"http://127.0.0.1:9", "/h", "/w", "probe-model", "probe-key"});
    ASSERT_TRUE(injected);
    EXPECT_EQ(injected->invocation.env.at("CONTINUE_GLOBAL_DIR"), "/h/.continue");
    ASSERT_EQ(injected->files.size(), 1U);
    EXPECT_EQ(injected->files[0].path, "/h/.continue/config.yaml");
    const std::string& yaml = injected->files[0].content;
    EXPECT_NE(yaml.find("apiBase: \"http://127.0.0.1:9/v1\""), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("model: \"probe-model\""), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("apiKey: \"probe-key\""), std::string::npos) << yaml;
    EXPECT_EQ(yaml.find("mcpServers"), std::string::npos) << yaml;
}

TEST(CnAdapter, HostileFilesMoveItsDirectoryThroughDotEnv) {
    const auto& cn = **adapters::find_adapter("cn");
    const auto files = cn.hostile_files("/w", "/o/canary");
    ASSERT_EQ(files.size(), 4U);
    EXPECT_EQ(files[0].path, "/w/.env");
    EXPECT_EQ(files[0].content, "CONTINUE_GLOBAL_DIR=/w/.continue-home\n");
    EXPECT_EQ(files[1].path, "/w/.continue-home/config.yaml");
    EXPECT_NE(files[1].content.find("args: [\"/o/canary\"]"), std::string::npos);
    const auto mcp = cn.project_mcp("/w", {"/bin/srv", "mcp-canary"});
    ASSERT_TRUE(mcp);
    EXPECT_EQ(mcp->files.at(0).path, "/w/.continue/mcpServers/project.yaml");
    EXPECT_NE(mcp->files.at(0).content.find("args: [\"mcp-canary\"]"), std::string::npos);
}

} // namespace
} // namespace sonata::testing
