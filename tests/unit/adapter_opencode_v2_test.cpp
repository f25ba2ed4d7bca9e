// OpenCode 2.x's own forms, against what 2.1.2 accepted and printed
// (fixtures/captured/opencode/2.1.2): the injected agent in one form only (2.1.2 silently opens an
// agent whose config mixes 1.x and 2.x keys), its run events, and the `session export` document.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "adapters/support/opencode_v2.hpp"
#include "core/fs.hpp"

namespace sonata::testing {
namespace {

using nlohmann::json;

std::string captured(const std::string& name) {
    auto text = read_file_bounded(
        std::string(SONATA_SOURCE_DIR) + "/fixtures/captured/opencode/2.1.2/" + name, 1U << 20U);
    EXPECT_TRUE(text) << name;
    return text ? *text : std::string();
}

/// Every key anywhere in `doc`.
void keys_of(const json& doc, std::vector<std::string>& out) {
    if (doc.is_object()) {
        for (const auto& [key, value] : doc.items()) {
            out.push_back(key);
            keys_of(value, out);
        }
    } else if (doc.is_array()) {
        for (const auto& value : doc)
            keys_of(value, out);
    }
}

TEST(OpenCodeV2, TheAgentIsInTwoXsOwnFormDenyingByDefault) {
    const auto config =
        json::parse(adapters::opencode_v2::agent_config("sonata-edit", {"read", "edit"}));
    std::vector<std::string> keys;
    keys_of(config, keys);
    // 1.x's keys beside 2.x's leave the agent open to everything, without a word.
    EXPECT_EQ(std::count(keys.begin(), keys.end(), "agent"), 0) << config.dump();
    EXPECT_EQ(std::count(keys.begin(), keys.end(), "permission"), 0) << config.dump();
    const auto& rules = config.at("agents").at("sonata-edit").at("permissions");
    ASSERT_TRUE(rules.is_array());
    ASSERT_GE(rules.size(), 4U);
    EXPECT_EQ(rules.front(), (json{{"action", "*"}, {"resource", "*"}, {"effect", "deny"}}));
    EXPECT_EQ(rules.back(),
              (json{{"action", "external_directory"}, {"resource", "*"}, {"effect", "deny"}}));
    // The last rule that matches wins: the guarded paths' denials come after the edit allowance.
    const auto at = [&](const json& rule) {
        return std::find(rules.begin(), rules.end(), rule) - rules.begin();
    };
    const auto allow_edit = at({{"action", "edit"}, {"resource", "*"}, {"effect", "allow"}});
    for (const char* pattern : {".git/*", "*/.git/*", ".mcp.json", "*/.mcp.json",
                                ".claude/settings.local.json", ".vscode/*"}) {
        const auto deny = at({{"action", "edit"}, {"resource", pattern}, {"effect", "deny"}});
        EXPECT_LT(deny, static_cast<long>(rules.size())) << pattern;
        EXPECT_GT(deny, allow_edit) << pattern;
    }
    // A read-only agent has no edit rules at all.
    const auto plan = json::parse(adapters::opencode_v2::agent_config("p", {"read"}));
    EXPECT_EQ(plan.at("agents").at("p").at("permissions").size(), 3U) << plan.dump();
}

TEST(OpenCodeV2, RunEventsGiveTheSessionAndTheFinalText) {
    const auto& opencode = **adapters::find_adapter("opencode");
    const std::string out = captured("run-format-json.jsonl");
    EXPECT_EQ(opencode.session_id(out, "", "/nowhere", {}), "ses_daf1f6dcfffeVVc1pPubVplppl");
    EXPECT_EQ(opencode.final_message(out), std::optional<std::string>("Wrote hello.txt. ALL-DONE"));
    // Two steps started and one finish printed: the tokens of the last are in no event, so the
    // total is unknown rather than the first step's.
    EXPECT_EQ(opencode.run_cost(out, "", ""), RunCost{});
}

TEST(OpenCodeV2, TheSessionExportProvesACompletedRunAndNamesWhatIsMissingOtherwise) {
    const auto& opencode = **adapters::find_adapter("opencode");
    const std::string v2 = "2.1.2";
    const std::string session = "ses_daf1f6dcfffeVVc1pPubVplppl";
    const std::string task = "Write hello.txt containing hello";
    const std::string completed = captured("export-completed.json");
    const auto check = [&](const std::string& exported, const std::string& id,
                           const std::string& asked) {
        return opencode.check_completion(exported, id, asked, v2);
    };
    EXPECT_EQ(check(completed, session, task), "");
    // A refused tool call does not stop the run from completing.
    EXPECT_EQ(
        check(captured("export-denied.json"), "ses_daf1ec4f9ffeR5TWH2pLCj3C5G", "Write the files"),
        "");
    EXPECT_EQ(check(completed, "ses_other", task),
              "the export is of session " + session + ", not ses_other");
    EXPECT_EQ(check(completed, session, "Another task."),
              "the session's newest user message is not this run's task");
    EXPECT_EQ(check("", session, task), "opencode session export printed no session");
    // 1.x's reading finds no message of its shape in 2.x's document.
    EXPECT_EQ(opencode.check_completion(completed, session, task, "1.18.33"),
              "the session has no user turn");
    auto doc = json::parse(completed);
    doc["info"]["outcome"] = "failed";
    EXPECT_EQ(check(doc.dump(), session, task),
              "the session's outcome is \"failed\", not \"succeeded\"");
    doc = json::parse(completed);
    auto& last = doc["messages"][doc["messages"].size() - 2];
    last["finish"] = "tool-calls";
    EXPECT_EQ(check(doc.dump(), session, task),
              "the last assistant message finished with \"tool-calls\", not \"stop\"");
    last["finish"] = "stop";
    last["content"] = json::array();
    EXPECT_EQ(check(doc.dump(), session, task), "the last assistant message has no text");
    last["time"].erase("completed");
    EXPECT_EQ(check(doc.dump(), session, task),
              "the last assistant message never completed (interrupted)");
    last["error"] = {{"type", "provider.invalid-request"}};
    EXPECT_EQ(check(doc.dump(), session, task)
                  .rfind("the last assistant message ended with an "
                         "error",
                         0),
              0U);
    EXPECT_EQ(check(R"({"info":{"id":7},"messages":[]})", session, task)
                  .rfind("the export is malformed", 0),
              0U);
}

} // namespace
} // namespace sonata::testing
