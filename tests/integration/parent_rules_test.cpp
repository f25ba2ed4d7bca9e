// The parent's rules through the real binary: `sonata plan` reads the deny and ask rules of the
// session directory's .claude settings and of the command line of the process that started it (the
// session), carries them to claude as --disallowedTools, and refuses a harness that cannot hold
// them, naming each rule; an allow rule in the project never widens anything.
#include <gtest/gtest.h>

#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace parent_rules_cli_test {

using testing::run_program;
using testing::run_sonata;
using testing::write_text;

class ParentRulesCli : public ::testing::Test {
protected:
    void SetUp() override {
        m_project = m_dir.make_dir("project");
        write_text(m_project + "/.claude/settings.json",
                   R"json({"permissions": {"deny": ["Read(./.env)"], "allow": ["WebFetch"]}})json");
    }

    testing::ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project;
};

TEST_F(ParentRulesCli, APlanCarriesTheProjectsRulesToClaudeAndRefusesAHarnessThatCannotHoldThem) {
    const std::vector<std::string> plan{"plan", "--role", "code", "--mode", "acceptEdits"};
    auto claude = plan;
    claude.insert(claude.end(), {"--harness", "claude"});
    const auto carried = run_sonata(claude, m_env, m_project);
    EXPECT_EQ(carried.exit_code, 0) << carried.out << carried.err;
    EXPECT_NE(carried.out.find("'--disallowedTools=Read(./.env)' --output-format=json"),
              std::string::npos)
        << carried.out;
    EXPECT_NE(carried.out.find("note: parent rule deny Read(./.env) (project)"), std::string::npos);
    EXPECT_EQ(carried.out.find("WebFetch"), std::string::npos) << "an allow rule was carried";
    auto pi = plan;
    pi.insert(pi.end(), {"--harness", "pi"});
    const auto refused = run_sonata(pi, m_env, m_project);
    EXPECT_EQ(refused.exit_code, to_int(ExitCode::refused)) << refused.out << refused.err;
    EXPECT_NE(
        refused.out.find("refuse: pi cannot hold the parent's rule deny Read(./.env) (project)"),
        std::string::npos)
        << refused.out;
    EXPECT_NE(refused.out.find("instead: use harness claude, grok or qwen, which hold them all"),
              std::string::npos);
}

TEST_F(ParentRulesCli, TheStartingSessionsDisallowedToolsAreRulesToo) {
    // The process that starts sonata stands in for the session: its command line carries
    // --disallowedTools, as a claude session started with them would.
    const std::vector<std::string> started_by_session{
        "/bin/sh",
        "-c",
        "\"$SONATA\" plan --harness claude --role code --mode acceptEdits; exit $?",
        "claude",
        "--disallowedTools",
        "Bash(curl:*)",
        "WebFetch"};
    Environment env = m_env;
    env["SONATA"] = SONATA_BIN;
    const auto run = run_program(started_by_session, env, m_project);
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_NE(run.out.find("note: parent rule deny Bash(curl:*) (command line): "
                           "--disallowedTools=Bash(curl:*)"),
              std::string::npos)
        << run.out;
    EXPECT_NE(run.out.find("note: parent rule deny WebFetch (command line)"), std::string::npos);
}

TEST_F(ParentRulesCli, ASettingsFileItCannotReadRefusesTheDispatchNamingIt) {
    write_text(m_project + "/.claude/settings.local.json",
               "{\"permissions\": {\"deny\": [\"Bash(\"]}}");
    const auto run =
        run_sonata({"plan", "--harness", "claude", "--role", "code", "--mode", "acceptEdits"},
                   m_env, m_project);
    EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << run.out << run.err;
    EXPECT_NE(run.err.find(m_project + "/.claude/settings.local.json: rule 'Bash(' "),
              std::string::npos)
        << run.err;
}

} // namespace parent_rules_cli_test
} // namespace sonata
