// The kilo mode table, whole invocations: injected agents below bypass, `--auto` only in bypass,
// default refused, project config always off; and its project files.
#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "tests/support/mode_table.hpp"
#include "tests/support/plan_helpers.hpp"

namespace sonata::testing {
namespace adapter_kilo_test {

using Strings = std::vector<std::string>;
using Env = std::map<std::string, std::string>;

const Strings k_unset{"IS_SANDBOX",      "KILO_PERMISSION",         "KILO_CONFIG",
                      "KILO_CONFIG_DIR", "OPENCODE_CONFIG_CONTENT", "OPENCODE_PERMISSION",
                      "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR"};
const std::string k_plan_agent =
    R"({"agent":{"sonata-plan":{"mode":"primary","permission":{"*":"deny","read":"allow",)"
    R"("grep":"allow","glob":"allow","external_directory":"deny"}}},"snapshot":false})";
const std::string k_edit_agent =
    R"({"agent":{"sonata-edit":{"mode":"primary","permission":{"*":"deny","read":"allow",)"
    R"("grep":"allow","glob":"allow","edit":"allow","write":"allow","patch":"allow",)"
    R"("external_directory":"deny"}}},"snapshot":false})";
const char* k_agent_note = "tool permission rules of an injected agent, not an OS sandbox";

// Every run keeps kilo from loading the repository's own config and turns its workspace snapshots,
// file watcher and telemetry off (bypass, which injects no agent, sets a config for that alone).
Invocation kilo_run(Strings argv, Env env, Strings unset, Strings relies, Strings notes) {
    env["KILO_DISABLE_PROJECT_CONFIG"] = "1";
    env["KILO_EXPERIMENTAL_DISABLE_FILEWATCHER"] = "1";
    env["KILO_TELEMETRY_LEVEL"] = "off";
    env.emplace("KILO_CONFIG_CONTENT", R"({"snapshot":false})");
    return Invocation{.argv = std::move(argv),
                      .env = std::move(env),
                      .env_unset = std::move(unset),
                      .path_first = {},
                      .cwd = {},
                      .prompt = PromptChannel::argument,
                      .interactive = false,
                      .report = ReportSource::structured_stdout,
                      .relies_on = std::move(relies),
                      .notes = std::move(notes)};
}

Invocation invocation_of(const PlanCase& c) {
    auto decision = decide_case(c);
    EXPECT_TRUE(decision && decision->runs());
    return decision && decision->runs() ? decision->invocation() : Invocation{};
}

TEST(KiloAdapter, PlanRunsAnInjectedAgentThatDeniesEveryToolItDoesNotName) {
    EXPECT_EQ(invocation_of(plan_case("kilo", Mode::plan, RoleKind::read_only)),
              kilo_run({"kilo", "run", "--agent", "sonata-plan", "--format", "json", "--"},
                       {{"KILO_CONFIG_CONTENT", k_plan_agent}}, k_unset,
                       {"write-withheld", "shell-write-withheld", "delegation-escape",
                        "self-promotion", "hostile-workspace", "mcp-reachability", "tool-census"},
                       {k_agent_note}));
}

TEST(KiloAdapter, AcceptEditsAddsFileEditsOnlyAndBypassAloneAutoApproves) {
    EXPECT_EQ(invocation_of(plan_case("kilo", Mode::accept_edits)),
              kilo_run({"kilo", "run", "--agent", "sonata-edit", "--format", "json", "--"},
                       {{"KILO_CONFIG_CONTENT", k_edit_agent}}, k_unset,
                       testing::guarded({"outside-workspace-write", "hostile-workspace",
                                         "tool-census", "rm-prompt", "delegation-escape"}),
                       {k_agent_note}));
    EXPECT_EQ(invocation_of(plan_case("kilo", Mode::bypass_permissions)),
              kilo_run({"kilo", "run", "--auto", "--format", "json", "--"}, {}, k_unset, {},
                       {"no sandbox: shell commands run unasked"}));
    const Invocation narrowed =
        invocation_of(no_bypass(plan_case("kilo", Mode::bypass_permissions)));
    EXPECT_EQ(narrowed.argv,
              (Strings{"kilo", "run", "--agent", "sonata-edit", "--format", "json", "--"}));
}

TEST(KiloAdapter, DefaultIsRefusedWithAlternatives) {
    auto decision = decide_case(plan_case("kilo", Mode::default_mode));
    ASSERT_TRUE(decision);
    ASSERT_FALSE(decision->runs());
    EXPECT_NE(decision->refusal().reason.find("no approval UI"), std::string::npos);
    EXPECT_FALSE(decision->refusal().alternatives.empty());
}

TEST(KiloAdapter, ConfigCannotAutoApproveBelowBypassOrAttachElsewhere) {
    for (const auto& args :
         {Strings{"--auto"}, Strings{"--attach", "http://127.0.0.1:1"}, Strings{"--cloud-fork"}}) {
        PlanCase c = plan_case("kilo", Mode::accept_edits);
        c.extra_args = args;
        auto decision = decide_case(c);
        EXPECT_FALSE(decision) << args.front();
    }
}

TEST(KiloAdapter, ProjectFilesAreKilosAndOpencodesConfigAndAPlugin) {
    const auto& kilo = **adapters::find_adapter("kilo");
    const auto files = kilo.hostile_files("/w", "/o/canary");
    ASSERT_EQ(files.size(), 3U);
    EXPECT_EQ(files[0].path, "/w/kilo.json");
    EXPECT_EQ(files[1].path, "/w/opencode.json");
    EXPECT_EQ(files[2].path, "/w/.kilo/plugin/project-helper.js");
    const auto mcp = kilo.project_mcp("/w", {"/bin/srv", "mcp-canary"});
    ASSERT_TRUE(mcp);
    EXPECT_EQ(mcp->tool_name, "sonata-canary_touch");
    EXPECT_EQ(mcp->files.at(0).path, "/w/kilo.json");
    EXPECT_EQ(kilo.default_max_concurrent(), 1);
    EXPECT_EQ(kilo.completion_export_args("ses_1", "7.7.9"), (Strings{"export", "ses_1"}));
}

} // namespace adapter_kilo_test
} // namespace sonata::testing
