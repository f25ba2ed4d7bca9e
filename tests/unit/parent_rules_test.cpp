// The parent's permission rules, read as Claude Code reads them: every scope's deny and ask rules,
// a project's allow rules listed but never carried, the session's --disallowedTools, and a file or
// rule sonata cannot read is an error naming it, never "no rules".
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/parent_rules.hpp"
#include "core/probe_ids.hpp"
#include "tests/support/plan_helpers.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace parent_rules_test {

std::vector<std::string> texts(const ParentRules& rules) {
    std::vector<std::string> out;
    for (const auto& r : rules.rules)
        out.push_back(std::string(to_string(r.scope)) + " " + std::string(to_string(r.effect)) +
                      " " + r.text);
    return out;
}

class ParentRulesFiles : public ::testing::Test {
protected:
    void SetUp() override {
        m_files = settings_files(m_dir.make_dir("home"), m_dir.make_dir("project"));
        m_files.managed = m_dir.path() + "/managed-settings.json";
        m_files.managed_dropins = m_dir.path() + "/managed-settings.d";
    }
    testing::ScratchDir m_dir;
    SettingsFiles m_files;
};

TEST(ParentRule, ToolAndSpecifier) {
    const auto bash = parse_rule("Bash(curl:*)");
    ASSERT_TRUE(bash);
    EXPECT_EQ(bash->tool, "Bash");
    EXPECT_EQ(bash->specifier, "curl:*");
    EXPECT_EQ(parse_rule("WebFetch")->specifier, "");
    EXPECT_EQ(parse_rule("Read(~/.aws/**)")->specifier, "~/.aws/**");
    EXPECT_EQ(parse_rule("mcp__github__create_issue")->tool, "mcp__github__create_issue");
    EXPECT_EQ(parse_rule("Bash(echo (a))")->specifier, "echo (a)");
    for (const std::string bad : {"", "(x)", "Bash(curl", "Bash curl", "Bash()"})
        EXPECT_FALSE(parse_rule(bad)) << bad;
}

TEST_F(ParentRulesFiles, EveryScopeCountsAndAProjectNeverWidens) {
    testing::write_text(m_files.managed, R"json({"permissions": {"deny": ["WebFetch"]}})json");
    testing::write_text(m_files.user, R"json({
        // Claude Code allows comments here.
        "permissions": {"deny": ["Bash(curl:*)"], "ask": ["Bash(git push:*)"], "allow": ["Bash"]}
    })json");
    testing::write_text(
        m_files.project,
        R"json({"permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(curl:*)"]}})json");
    testing::write_text(m_files.local,
                        R"json({"permissions": {"ask": ["Edit(./secrets/**)"]}})json");
    const auto rules = read_parent_rules(m_files);
    ASSERT_TRUE(rules) << rules.error().message;
    EXPECT_EQ(texts(*rules),
              (std::vector<std::string>{"managed deny WebFetch", "user deny Bash(curl:*)",
                                        "user ask Bash(git push:*)", "project deny Read(./.env)",
                                        "local ask Edit(./secrets/**)"}));
    EXPECT_EQ(rules->ignored_allows, std::vector<std::string>{"Bash(curl:*)"});
    EXPECT_EQ(rules->rules[3].source, m_files.project);
}

TEST_F(ParentRulesFiles, NoFilesNoRules) {
    const auto rules = read_parent_rules(m_files);
    ASSERT_TRUE(rules) << rules.error().message;
    EXPECT_TRUE(rules->empty());
}

TEST_F(ParentRulesFiles, WhatCannotBeReadIsAnErrorNamingTheFile) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"{not json", "not JSON"},
        {"[]", "not a JSON object"},
        {R"json({"permissions": []})json", "'permissions' is not an object"},
        {R"json({"permissions": {"deny": "Bash"}})json", "'permissions.deny' is not an array"},
        {R"json({"permissions": {"ask": [1]}})json", "'permissions.ask' holds something other"},
        {R"json({"permissions": {"deny": ["Bash(curl"]}})json", "unbalanced parentheses"}};
    for (const auto& [content, says] : cases) {
        testing::write_text(m_files.user, content);
        const auto rules = read_parent_rules(m_files);
        ASSERT_FALSE(rules) << content;
        EXPECT_EQ(rules.error().code, ExitCode::bad_data);
        EXPECT_EQ(rules.error().message.rfind(m_files.user + ": ", 0), 0U) << rules.error().message;
        EXPECT_NE(rules.error().message.find(says), std::string::npos) << rules.error().message;
    }
}

// The managed drop-ins count as managed settings, each *.json file in name order; a drop-in that
// cannot be read is an error naming it, like any settings file.
TEST_F(ParentRulesFiles, ManagedDropInsCountInNameOrder) {
    const auto dropins = m_dir.make_dir("managed-settings.d");
    testing::write_text(dropins + "/20-net.json", R"({"permissions": {"deny": ["WebFetch"]}})");
    testing::write_text(dropins + "/10-env.json",
                        R"json({"permissions": {"ask": ["Read(./.env)"]}})json");
    testing::write_text(dropins + "/README.txt", "not settings");
    testing::write_text(m_files.user, R"json({"permissions": {"deny": ["Bash(curl:*)"]}})json");
    const auto rules = read_parent_rules(m_files);
    ASSERT_TRUE(rules) << rules.error().message;
    EXPECT_EQ(texts(*rules),
              (std::vector<std::string>{"managed ask Read(./.env)", "managed deny WebFetch",
                                        "user deny Bash(curl:*)"}));
    EXPECT_EQ(rules->rules[1].source, dropins + "/20-net.json");
    testing::write_text(dropins + "/30-bad.json", "{not json");
    const auto bad = read_parent_rules(m_files);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message.rfind(dropins + "/30-bad.json: not JSON", 0), 0U)
        << bad.error().message;
}

TEST(ParentRulesCommandLine, DisallowedToolsAddRules) {
    ParentRules rules;
    ASSERT_TRUE(add_command_line_rules({"claude", "--disallowedTools", "Bash(git push:*)", "Edit",
                                        "--model", "x", "--disallowed-tools=WebFetch,Read(./.env)"},
                                       "/p", rules));
    EXPECT_EQ(texts(rules), (std::vector<std::string>{
                                "command line deny Bash(git push:*)", "command line deny Edit",
                                "command line deny WebFetch", "command line deny Read(./.env)"}));
    EXPECT_FALSE(add_command_line_rules({"claude", "--disallowedTools", "Bash(x"}, "/p", rules));
}

// A session's --settings adds its deny and ask rules, given as JSON text or as a file relative to
// the session's directory; one sonata cannot read refuses, naming it.
TEST(ParentRulesCommandLine, SettingsAddTheirRules) {
    testing::ScratchDir dir;
    const auto project = dir.make_dir("project");
    testing::write_text(
        project + "/strict.json",
        R"json({"permissions": {"deny": ["Edit(./secrets/**)"], "allow": ["Bash"]}})json");
    ParentRules rules;
    ASSERT_TRUE(add_command_line_rules({"claude", "--settings",
                                        R"json({"permissions": {"ask": ["Bash(git push:*)"]}})json",
                                        "--settings=strict.json"},
                                       project, rules));
    EXPECT_EQ(texts(rules), (std::vector<std::string>{"command line ask Bash(git push:*)",
                                                      "command line deny Edit(./secrets/**)"}));
    EXPECT_EQ(rules.rules[1].source, "--settings " + project + "/strict.json");
    EXPECT_TRUE(rules.ignored_allows.empty()) << "an allow rule is never even listed as carried";
    for (const auto& [value, says] : std::vector<std::pair<std::string, std::string>>{
             {"missing.json", "--settings " + project + "/missing.json: no such file"},
             {"{\"permissions\": [", "--settings: not JSON"},
             {R"json({"permissions": {"deny": ["Bash(x"]}})json", "--settings: rule 'Bash(x'"}}) {
        ParentRules more;
        const auto added = add_command_line_rules({"claude", "--settings", value}, project, more);
        ASSERT_FALSE(added) << value;
        EXPECT_EQ(added.error().message.rfind(says, 0), 0U) << added.error().message;
    }
}

} // namespace parent_rules_test
} // namespace sonata

namespace sonata::parent_rules_carried_test {

using testing::decide_case;
using testing::plan_case;

PermissionRule rule(const std::string& text, RuleEffect effect, RuleScope scope,
                    const std::string& source) {
    auto parsed = parse_rule(text);
    EXPECT_TRUE(parsed) << text;
    parsed->effect = effect;
    parsed->scope = scope;
    parsed->source = source;
    return *parsed;
}

/// The issue's parent: deny curl, .env reads, edits under secrets/ and web fetches, from every
/// place a rule can come from.
ParentRules the_parents_rules() {
    return {
        {rule("Bash(curl:*)", RuleEffect::deny, RuleScope::user, "/home/u/.claude/settings.json"),
         rule("Read(./.env)", RuleEffect::deny, RuleScope::project, "/p/.claude/settings.json"),
         rule("Edit(./secrets/**)", RuleEffect::ask, RuleScope::local,
              "/p/.claude/settings.local.json"),
         rule("WebFetch", RuleEffect::deny, RuleScope::command_line, "--disallowedTools")},
        {}};
}

TEST(ParentRulesCarried, ClaudeHoldsEachRuleAndSaysHow) {
    auto c = plan_case("claude", Mode::accept_edits);
    c.parent_rules = the_parents_rules();
    const auto decision = decide_case(c);
    ASSERT_TRUE(decision) << decision.error().message;
    ASSERT_TRUE(decision->runs()) << testing::show(decision->refusal());
    const auto& argv = decision->invocation().argv;
    const std::vector<std::string> tail(argv.end() - 4, argv.end());
    EXPECT_EQ(tail, (std::vector<std::string>{
                        "--disallowedTools=Read(./.env)", "--disallowedTools=Edit(./secrets/**)",
                        "--disallowedTools=WebFetch", "--output-format=json"}));
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "--disallowedTools=Bash(curl:*)"), 0)
        << "claude reads the user's settings file itself";
    const auto& notes = decision->invocation().notes;
    EXPECT_NE(std::find(notes.begin(), notes.end(),
                        "parent rule deny Bash(curl:*) (user): claude reads "
                        "/home/u/.claude/settings.json itself"),
              notes.end());
    EXPECT_NE(std::find(notes.begin(), notes.end(),
                        "parent rule ask Edit(./secrets/**) (local): "
                        "--disallowedTools=Edit(./secrets/**)"),
              notes.end());
    const auto& relies = decision->invocation().relies_on;
    EXPECT_NE(std::find(relies.begin(), relies.end(), probe_id::parent_rule), relies.end())
        << "the gate holds a mapping that carries rules to its parent-rule cell";
}

TEST(ParentRulesCarried, APathThatWouldChangeMeaningIsRefused) {
    auto moved = plan_case("claude", Mode::accept_edits);
    moved.parent_rules = the_parents_rules();
    moved.rule_paths = adapters::RulePaths::moved;
    auto decision = decide_case(moved);
    ASSERT_TRUE(decision);
    ASSERT_FALSE(decision->runs());
    EXPECT_NE(decision->refusal().reason.find("Read(./.env) (project): its path is relative to "
                                              "the parent's directory"),
              std::string::npos)
        << decision->refusal().reason;
    auto anchored = plan_case("claude", Mode::accept_edits);
    anchored.parent_rules = {{rule("Edit(/secrets/**)", RuleEffect::deny, RuleScope::project,
                                   "/p/.claude/settings.json")},
                             {}};
    decision = decide_case(anchored);
    ASSERT_TRUE(decision);
    ASSERT_FALSE(decision->runs());
    EXPECT_NE(decision->refusal().reason.find("relative to /p/.claude/settings.json"),
              std::string::npos)
        << decision->refusal().reason;
}

TEST(ParentRulesCarried, AHarnessThatCannotHoldARuleIsRefusedNamingItAndWhoCan) {
    for (const std::string harness : {"codex", "pi", "gemini", "opencode"}) {
        auto c = plan_case(harness, Mode::accept_edits);
        c.parent_rules = the_parents_rules();
        const auto decision = decide_case(c);
        ASSERT_TRUE(decision) << harness;
        ASSERT_FALSE(decision->runs()) << harness;
        const auto& refusal = decision->refusal();
        EXPECT_NE(refusal.reason.find("cannot hold the parent's rules deny Bash(curl:*) (user)"),
                  std::string::npos)
            << refusal.reason;
        EXPECT_NE(refusal.reason.find("WebFetch (command line)"), std::string::npos);
        EXPECT_EQ(refusal.alternatives.front(),
                  "use harness claude, grok or qwen, which hold them all");
    }
    auto none = plan_case("pi", Mode::accept_edits);
    EXPECT_TRUE(decide_case(none)->runs()) << "a parent without rules is not refused";
}

} // namespace sonata::parent_rules_carried_test

namespace sonata::parent_rules_opencode_test {

using testing::decide_case;
using testing::plan_case;

/// The permissions of the agent an opencode 2.x invocation injects.
nlohmann::json permissions_of(const Invocation& inv) {
    const auto config = nlohmann::json::parse(inv.env.at("OPENCODE_CONFIG_CONTENT"));
    return config.at("agents").begin()->at("permissions");
}

testing::PlanCase opencode2(Mode mode) {
    auto c = plan_case("opencode", mode);
    c.version = "2.1.2";
    c.parent_rules = parent_rules_carried_test::the_parents_rules();
    return c;
}

// Measured on 2.1.2: a read of .env (relative or absolute) is refused by {read, .env, deny}, a
// write or edit under secrets/ by {edit, secrets/**, deny}; the agent offers no shell and no
// webfetch.
TEST(ParentRulesOpenCodeTwo, TheInjectedAgentHoldsEachRuleAtTheEndOfItsList) {
    const auto decision = decide_case(opencode2(Mode::accept_edits));
    ASSERT_TRUE(decision) << decision.error().message;
    ASSERT_TRUE(decision->runs()) << testing::show(decision->refusal());
    const auto permissions = permissions_of(decision->invocation());
    const std::vector<nlohmann::json> tail(permissions.end() - 3, permissions.end());
    EXPECT_EQ(tail, (std::vector<nlohmann::json>{
                        {{"action", "read"}, {"resource", ".env"}, {"effect", "deny"}},
                        {{"action", "grep"}, {"resource", "*"}, {"effect", "deny"}},
                        {{"action", "edit"}, {"resource", "secrets/**"}, {"effect", "deny"}}}));
    const auto& notes = decision->invocation().notes;
    EXPECT_NE(std::find(notes.begin(), notes.end(),
                        "parent rule deny Bash(curl:*) (user): the injected agent denies shell "
                        "altogether"),
              notes.end());
    EXPECT_NE(std::find(notes.begin(), notes.end(),
                        "parent rule deny WebFetch (command line): the injected agent denies "
                        "webfetch altogether"),
              notes.end());
}

TEST(ParentRulesOpenCodeTwo, WhatItsAgentCannotHoldIsRefused) {
    // Bypass runs with --auto and no agent; 1.x is not measured; a shell prefix in an agent that
    // allowed the shell would be matched against the command's text, which FOO=1 curl passes.
    const auto bypass = decide_case(opencode2(Mode::bypass_permissions));
    ASSERT_TRUE(bypass);
    ASSERT_FALSE(bypass->runs());
    EXPECT_NE(bypass->refusal().reason.find("injects no agent"), std::string::npos);
    auto v1 = opencode2(Mode::accept_edits);
    v1.version = "1.18.33";
    const auto old = decide_case(v1);
    ASSERT_TRUE(old);
    ASSERT_FALSE(old->runs());
    EXPECT_NE(old->refusal().reason.find("1.x is not measured"), std::string::npos);
    auto moved = opencode2(Mode::accept_edits);
    moved.rule_paths = adapters::RulePaths::moved;
    ASSERT_FALSE(decide_case(moved)->runs());
    // In plan mode the agent allows no edit: the Edit rule is held by the agent as it is.
    const auto plan = decide_case(opencode2(Mode::plan));
    ASSERT_TRUE(plan && plan->runs());
    const auto permissions = permissions_of(plan->invocation());
    EXPECT_EQ(permissions.back(),
              (nlohmann::json{{"action", "grep"}, {"resource", "*"}, {"effect", "deny"}}));
}

} // namespace sonata::parent_rules_opencode_test
