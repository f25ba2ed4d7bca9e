// The cline mode table (measured on 3.0.65): plan and acceptEdits on the closed settings (no shell,
// no sub-agent), bypass on the open ones, default and resume refused; every run on sonata's data
// directory; the settings files themselves, the endpoint injection, and the run's JSON result.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "tests/support/plan_helpers.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata::testing {
namespace adapter_cline_test {

using nlohmann::json;
using Strings = std::vector<std::string>;

/// Where the support files go: a scratch directory of the test's.
const std::string& support() {
    static const ScratchDir dir;
    return dir.path();
}

PlanCase cline(Mode parent, RoleKind role = RoleKind::write) {
    PlanCase c = plan_case("cline", parent, role);
    c.version = "3.0.65";
    c.support_dir = support();
    return c;
}

Invocation invocation_of(const PlanCase& c) {
    auto decision = decide_case(c);
    EXPECT_TRUE(decision && decision->runs()) << (decision ? show(decision->refusal()) : "");
    return decision && decision->runs() ? decision->invocation() : Invocation{};
}

TEST(ClineAdapter, PlanAndAcceptEditsRunClosedBypassRunsOpen) {
    const auto plan = invocation_of(cline(Mode::plan, RoleKind::read_only));
    EXPECT_EQ(plan.argv,
              (Strings{"cline", "--json", "--plan", "--data-dir", support() + "/cline-data"}));
    EXPECT_EQ(plan.env.at("CLINE_GLOBAL_SETTINGS_PATH"), support() + "/cline-closed-settings.json");
    EXPECT_EQ(plan.env.at("CLINE_NO_AUTO_UPDATE"), "1");
    EXPECT_EQ(plan.prompt, PromptChannel::argument);

    const auto edits = invocation_of(cline(Mode::accept_edits));
    EXPECT_EQ(edits.argv, (Strings{"cline", "--json", "--data-dir", support() + "/cline-data"}));
    EXPECT_EQ(edits.env.at("CLINE_GLOBAL_SETTINGS_PATH"),
              support() + "/cline-closed-settings.json");

    const auto bypass = invocation_of(cline(Mode::bypass_permissions));
    EXPECT_EQ(bypass.env.at("CLINE_GLOBAL_SETTINGS_PATH"), support() + "/cline-open-settings.json");
    EXPECT_TRUE(bypass.relies_on.empty());
}

TEST(ClineAdapter, DefaultAndResumeAreRefused) {
    auto asked = decide_case(cline(Mode::default_mode));
    ASSERT_TRUE(asked);
    ASSERT_FALSE(asked->runs());
    EXPECT_NE(asked->refusal().reason.find("cannot ask"), std::string::npos);
    PlanCase resumed = cline(Mode::plan, RoleKind::read_only);
    resumed.resume = "1796652099860_zfzqi";
    auto again = decide_case(resumed);
    ASSERT_TRUE(again);
    ASSERT_FALSE(again->runs());
    EXPECT_NE(again->refusal().reason.find("only in its interactive terminal UI"),
              std::string::npos);
}

TEST(ClineAdapter, TheClosedSettingsOfferNoShellAndNoSubAgent) {
    const auto& adapter = **adapters::find_adapter("cline");
    const auto files = adapter.support_files(support());
    ASSERT_EQ(files.size(), 2U);
    const auto closed = json::parse(files[0].content);
    const auto open = json::parse(files[1].content);
    EXPECT_EQ(files[0].path, support() + "/cline-closed-settings.json");
    for (const auto& settings : {closed, open}) {
        EXPECT_EQ(settings.at("telemetryOptOut"), true);
        EXPECT_EQ(settings.at("autoUpdateEnabled"), false);
        EXPECT_EQ(settings.at("toolAutoApprove"), true);
    }
    const auto disabled = closed.at("disabledTools").get<Strings>();
    for (const char* tool : {"run_commands", "spawn_agent", "team_spawn_teammate", "team_run_task"})
        EXPECT_NE(std::find(disabled.begin(), disabled.end(), tool), disabled.end()) << tool;
    EXPECT_FALSE(open.contains("disabledTools"));
}

TEST(ClineAdapter, TheEndpointIsAProviderInTheRunsOwnDataDirectory) {
    const auto& adapter = **adapters::find_adapter("cline");
    adapters::EndpointSpec ep;
    ep.base_url = "http://127.0.0.1:40124";
    ep.home = "/run/home";
    const auto plan = invocation_of(cline(Mode::plan, RoleKind::read_only));
    auto injected = adapter.inject_endpoint(plan, ep);
    ASSERT_TRUE(injected) << injected.error().message;
    EXPECT_EQ(injected->invocation.argv,
              (Strings{"cline", "--json", "--plan", "--data-dir", "/run/home/cline-data"}));
    EXPECT_EQ(injected->invocation.env, plan.env) << "the settings stay the mapping's";
    ASSERT_EQ(injected->files.size(), 1U);
    EXPECT_EQ(injected->files[0].path, "/run/home/cline-data/settings/providers.json");
    const auto providers = json::parse(injected->files[0].content);
    // The full form: cline replaces a shorter file with its own cloud provider, silently.
    const auto& entry = providers.at("providers").at("openai-compatible");
    EXPECT_EQ(entry.at("settings").at("baseUrl"), "http://127.0.0.1:40124/v1");
    EXPECT_TRUE(entry.contains("updatedAt") && entry.contains("tokenSource"));
    EXPECT_TRUE(providers.contains("modes"));
}

TEST(ClineAdapter, OnlyACompletedRunHasAReportAndItsTokensAreCounted) {
    const auto& adapter = **adapters::find_adapter("cline");
    const std::string done =
        R"({"type":"agent_event","event":{}})"
        "\n"
        R"({"type":"run_result","finishReason":"completed","iterations":1,"usage":)"
        R"({"inputTokens":5437,"outputTokens":4,"cacheReadTokens":0,"cacheWriteTokens":0,)"
        R"("totalCost":0},"text":"FINAL","model":{"id":"m","provider":"openai-compatible"}})"
        "\n";
    EXPECT_EQ(adapter.final_message(done), std::optional<std::string>("FINAL"));
    const auto cost = adapter.run_cost(done, "", "");
    EXPECT_EQ(cost.input_tokens, 5437);
    EXPECT_EQ(cost.output_tokens, 4);
    EXPECT_FALSE(cost.usd.has_value()) << "a 0 for a model it has no price for is no price";
    // Stopped at its mistake limit, exit 0: no report, so the run is not done.
    std::string aborted = done;
    aborted.replace(aborted.find("completed"), 9, "aborted");
    EXPECT_EQ(adapter.final_message(aborted), std::nullopt);
    EXPECT_EQ(adapter.final_message("not json\n"), std::nullopt);
}

} // namespace adapter_cline_test
} // namespace sonata::testing
