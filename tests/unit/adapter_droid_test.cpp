// The droid mode table, whole invocations: `droid exec` with a tool list that leaves out its
// shell below bypass (its autonomy levels trust the model's own riskLevel), default refused,
// sonata's runtime settings (no hooks, no MCP servers) in every mode; what configured arguments
// may not add; its result JSON, project files and probe endpoint.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "core/config.hpp"
#include "core/fs.hpp"
#include "tests/support/mode_table.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata::testing {
namespace adapter_droid_test {

using Strings = std::vector<std::string>;

const Strings k_unset{"IS_SANDBOX",
                      "FACTORY_RUNTIME_SETTINGS_PATH",
                      "FACTORY_RUNTIME_SETTINGS_SHA",
                      "FACTORY_RUNTIME_SETTINGS_SOURCE",
                      "FACTORY_HOME_OVERRIDE",
                      "FACTORY_PROJECT_DIR",
                      "FACTORY_FEATURE_FLAGS_OVERRIDES",
                      "FACTORY_FEATURE_FLAGS_SNAPSHOT_PATH"};
const char* k_note = "tool list and permission rules, not an OS sandbox";

// The settings file's place when no support dir is given: the machine dir of sonata's
// environment.
std::string settings_path() {
    return machine_dir(current_environment()) + "/support/droid-runtime-settings.json";
}

Strings argv_of(Strings middle) {
    Strings argv{"droid", "exec", "-o", "json"};
    argv.insert(argv.end(), middle.begin(), middle.end());
    argv.insert(argv.end(), {"--settings", settings_path()});
    return argv;
}

Invocation droid_run(Strings argv, Strings relies, Strings notes) {
    Invocation inv =
        headless_invocation(std::move(argv), std::move(relies), std::move(notes), k_unset);
    inv.report = ReportSource::structured_stdout;
    return inv;
}

Invocation invocation_of(const PlanCase& c) {
    auto decision = decide_case(c);
    EXPECT_TRUE(decision && decision->runs()) << (decision ? "" : decision.error().message);
    return decision && decision->runs() ? decision->invocation() : Invocation{};
}

TEST(DroidAdapter, PlanKeepsOnlyTheReadingTools) {
    EXPECT_EQ(invocation_of(plan_case("droid", Mode::plan, RoleKind::read_only)),
              droid_run(argv_of({"--only-tools", "Read,LS,Grep,Glob"}),
                        {"write-withheld", "shell-write-withheld", "delegation-escape",
                         "self-promotion", "hostile-workspace", "mcp-reachability", "tool-census"},
                        {k_note}));
}

TEST(DroidAdapter, AcceptEditsAddsTheFileToolsAndBypassAloneSkipsPermissions) {
    EXPECT_EQ(invocation_of(plan_case("droid", Mode::accept_edits)),
              droid_run(argv_of({"--auto", "low", "--only-tools",
                                 "Read,LS,Grep,Glob,Create,Edit,ApplyPatch"}),
                        testing::guarded({"outside-workspace-write", "hostile-workspace",
                                          "tool-census", "rm-prompt", "delegation-escape"}),
                        {k_note}));
    EXPECT_EQ(invocation_of(plan_case("droid", Mode::bypass_permissions)),
              droid_run(argv_of({"--skip-permissions-unsafe"}), {},
                        {"no sandbox: shell commands run unasked"}));
    const Invocation narrowed =
        invocation_of(no_bypass(plan_case("droid", Mode::bypass_permissions)));
    EXPECT_EQ(narrowed.argv, argv_of({"--auto", "low", "--only-tools",
                                      "Read,LS,Grep,Glob,Create,Edit,ApplyPatch"}));
}

TEST(DroidAdapter, DefaultIsRefusedWithAlternatives) {
    auto decision = decide_case(plan_case("droid", Mode::default_mode));
    ASSERT_TRUE(decision);
    ASSERT_FALSE(decision->runs());
    EXPECT_NE(decision->refusal().reason.find("no approval UI"), std::string::npos);
    EXPECT_FALSE(decision->refusal().alternatives.empty());
}

TEST(DroidAdapter, ResumeForksTheSessionWithTheSameRestrictions) {
    PlanCase c = plan_case("droid", Mode::plan, RoleKind::read_only);
    c.resume = "933b2734-91e6-46bf-8829-64da969750ac";
    c.model = "custom:m";
    const Invocation inv = invocation_of(c);
    Strings want = argv_of({"--only-tools", "Read,LS,Grep,Glob"});
    want.insert(want.end(),
                {"--model", "custom:m", "--fork", "933b2734-91e6-46bf-8829-64da969750ac"});
    EXPECT_EQ(inv.argv, want);
    EXPECT_EQ(inv.relies_on.back(), "resume-keeps-mode");
}

TEST(DroidAdapter, ConfigCannotWidenBelowBypass) {
    for (const Strings& args :
         {Strings{"--skip-permissions-unsafe"}, Strings{"--auto", "high"},
          Strings{"--add-tools", "Execute"}, Strings{"--only-tools", "Execute"},
          Strings{"--settings", "/x.json"}, Strings{"--cwd", "/"}, Strings{"--mission"},
          Strings{"--input-format", "stream-jsonrpc"}, Strings{"-s", "abc"}}) {
        PlanCase c = plan_case("droid", Mode::plan, RoleKind::read_only);
        c.extra_args = args;
        EXPECT_FALSE(decide_case(c)) << args.front();
    }
    EXPECT_EQ(
        extra_args_error(plan_case("droid", Mode::accept_edits), {"--auto", "medium"}).message,
        "flag '--auto' is forbidden for droid in acceptEdits mode (config)");
    PlanCase narrowed = plan_case("droid", Mode::accept_edits);
    narrowed.extra_args = {"--remove-tools", "Edit"};
    EXPECT_TRUE(decide_case(narrowed));
}

TEST(DroidAdapter, ItsRuntimeSettingsTurnOffHooksAndMcpServersAndAreWritten) {
    testing::ScratchDir dir;
    PlanCase plan = plan_case("droid", Mode::plan, RoleKind::read_only);
    plan.support_dir = dir.path() + "/support";
    ASSERT_TRUE(decide_case(plan));
    auto written = read_file_bounded(plan.support_dir + "/droid-runtime-settings.json", 4096);
    ASSERT_TRUE(written) << written.error().message;
    const auto settings = nlohmann::json::parse(*written);
    EXPECT_EQ(settings.at("hooks").at("hooksDisabled"), true);
    EXPECT_EQ(settings.at("mcpPolicy").at("allowlist"), nlohmann::json::array());
}

TEST(DroidAdapter, ReadsItsResultJson) {
    const auto& droid = **adapters::find_adapter("droid");
    const std::string out =
        "Tool \"ApplyPatch\" skipped.\n"
        R"({"type":"result","subtype":"success","is_error":false,"result":"the report",)"
        R"("session_id":"933b2734-91e6-46bf-8829-64da969750ac","usage":{"input_tokens":11090,)"
        R"("output_tokens":32,"factory_credits":0}})"
        "\n";
    EXPECT_EQ(droid.final_message(out), std::optional<std::string>("the report"));
    EXPECT_EQ(droid.session_id(out, "", "/h", {}), "933b2734-91e6-46bf-8829-64da969750ac");
    const auto cost = droid.run_cost(out, "", "/h");
    EXPECT_EQ(cost.source, CostSource::unknown);
    EXPECT_FALSE(cost.usd);
    EXPECT_EQ(cost.input_tokens, 11090);
    EXPECT_EQ(cost.output_tokens, 32);
    EXPECT_EQ(droid.run_cost("no json\n", "", "/h"), RunCost{});
    EXPECT_EQ(droid.final_message("no json\n"), std::nullopt);
    EXPECT_EQ(droid.session_id(R"({"session_id":"-rf /"})", "", "/h", {}), "");
}

TEST(DroidAdapter, ProbedThroughACustomModelInItsHome) {
    const auto& droid = **adapters::find_adapter("droid");
    const auto injected =
        droid.inject_endpoint(invocation_of(plan_case("droid", Mode::plan, RoleKind::read_only)),
                              {"http://127.0.0.1:9", "/h", "/w", "probe-model", "probe-key"});
    ASSERT_TRUE(injected);
    const auto& argv = injected->invocation.argv;
    EXPECT_EQ(Strings(argv.end() - 2, argv.end()), (Strings{"--model", "custom:probe-model"}));
    ASSERT_EQ(injected->files.size(), 1U);
    EXPECT_EQ(injected->files[0].path, "/h/.factory/settings.json");
    const auto settings = nlohmann::json::parse(injected->files[0].content);
    const auto& model = settings.at("customModels").at(0);
    EXPECT_EQ(model.at("baseUrl"), "http://127.0.0.1:9/v1");
    EXPECT_EQ(model.at("model"), "probe-model");
    EXPECT_EQ(model.at("provider"), "generic-chat-completion-api");
}

TEST(DroidAdapter, ProjectFilesAreFactorysSettingsHooksAndMcpServers) {
    const auto& droid = **adapters::find_adapter("droid");
    const auto files = droid.hostile_files("/w", "/o/canary");
    ASSERT_EQ(files.size(), 2U);
    EXPECT_EQ(files[0].path, "/w/.factory/settings.json");
    EXPECT_NE(files[0].content.find("SessionStart"), std::string::npos);
    EXPECT_EQ(files[1].path, "/w/.factory/mcp.json");
    const auto mcp = droid.project_mcp("/w", {"/bin/srv", "mcp-canary"});
    ASSERT_TRUE(mcp);
    EXPECT_EQ(mcp->files.at(0).path, "/w/.factory/mcp.json");
    // A shell call carries the risk level a model that wants it run claims.
    EXPECT_NE(droid.tools().shell_args_json.find(R"("riskLevel":"low")"), std::string::npos);
}

} // namespace adapter_droid_test
} // namespace sonata::testing
