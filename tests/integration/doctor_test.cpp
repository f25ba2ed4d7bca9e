// `sonata doctor` with the real binary in a scratch project and HOME: what a fresh machine lacks is
// a warning with its fix, a role that cannot run without the hook and a broken config are
// blockers (exit 1), and `sonata init` clears the hook and MCP warnings.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/fake_harness.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

using nlohmann::json;
using testing::run_sonata;

class Doctor : public ::testing::Test {
protected:
    testing::ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");

    /// check name → {status, fix} from `doctor --json`, and the exit code.
    std::map<std::string, std::pair<std::string, std::string>> doctor(int& exit_code) {
        const auto run = run_sonata({"doctor", "--json"}, m_env, m_project);
        exit_code = run.exit_code;
        std::map<std::string, std::pair<std::string, std::string>> out;
        const auto list = json::parse(run.out, nullptr, false);
        EXPECT_TRUE(list.is_array()) << run.out << run.err;
        if (!list.is_array()) return out;
        for (const auto& c : list) {
            out[c["check"]] = {c["status"], c["fix"].is_null() ? "" : c["fix"].get<std::string>()};
        }
        return out;
    }
};

TEST_F(Doctor, AFreshProjectGetsWarningsWithTheirFixesAndInitClearsThem) {
    int code = -1;
    auto checks = doctor(code);
    EXPECT_EQ(code, 0);
    EXPECT_EQ(checks["hook"],
              std::make_pair(std::string("warning"), std::string("sonata init --yes")));
    EXPECT_EQ(checks["mcp"].first, "warning");
    EXPECT_EQ(checks["matrix"],
              std::make_pair(std::string("warning"), std::string("sonata probe")));
    EXPECT_EQ(checks["config"].first, "ok");
    EXPECT_TRUE(checks.count("tmux"));

    ASSERT_EQ(run_sonata({"init", "--yes"}, m_env, m_project).exit_code, 0);
    checks = doctor(code);
    EXPECT_EQ(code, 0);
    EXPECT_EQ(checks["hook"].first, "ok");
    EXPECT_EQ(checks["mcp"].first, "ok");
    // Registered in the project's .mcp.json, sonata's tools reach the harnesses that load it.
    EXPECT_EQ(checks["recursion"].first, "warning");

    const auto text = run_sonata({"doctor"}, m_env, m_project);
    EXPECT_NE(text.out.find("ok       hook: sonata's PreToolUse hook is in "), std::string::npos)
        << text.out;
}

TEST_F(Doctor, ARoleThatCannotRunWithoutTheHookIsABlocker) {
    testing::write_text(m_project + "/sonata.toml",
                        "[roles.quick]\nkind = \"write\"\nharness = \"pi\"\n");
    int code = -1;
    auto checks = doctor(code);
    EXPECT_EQ(code, 1);
    EXPECT_EQ(checks["hook"],
              std::make_pair(std::string("blocker"), std::string("sonata init --yes")));
}

TEST_F(Doctor, ABrokenConfigIsABlockerNamingItsLine) {
    testing::write_text(m_project + "/sonata.toml", "gate = \"sometimes\"\n");
    const auto run = run_sonata({"doctor"}, m_env, m_project);
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.out.find("blocker  config: "), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("sonata.toml"), std::string::npos) << run.out;
}

// codex's plan and acceptEdits runs pass --ignore-user-config: a provider the user set in
// ~/.codex/config.toml does not reach them, and doctor says so with the fix (sonata's own args).
TEST_F(Doctor, ACodexProviderInTheUsersConfigIsAWarningWithItsFix) {
    const std::string bin = m_dir.make_dir("bin");
    testing::write_text(bin + "/codex", "#!/bin/sh\necho 'codex-cli 0.171.0'\n");
    std::filesystem::permissions(bin + "/codex", std::filesystem::perms::owner_all);
    m_env["PATH"] = bin + ":/usr/bin:/bin";
    int code = -1;
    auto checks = doctor(code);
    EXPECT_EQ(checks["codex config"].first, "ok");
    EXPECT_EQ(checks.count("codex trust"), 0U) << "trusting the project is not advised";

    const std::string home = m_env["HOME"];
    std::filesystem::create_directories(home + "/.codex");
    testing::write_text(home + "/.codex/config.toml",
                        "model = \"o4\"\nmodel_provider = \"corp\"\n\n[model_providers.corp]\n"
                        "base_url = \"https://llm.example\"\n");
    checks = doctor(code);
    EXPECT_EQ(checks["codex config"].first, "warning");
    EXPECT_NE(checks["codex config"].second.find("[harnesses.codex] args"), std::string::npos)
        << checks["codex config"].second;
    const auto text = run_sonata({"doctor"}, m_env, m_project);
    EXPECT_NE(text.out.find("sets model_provider and model"), std::string::npos) << text.out;
}

// With deny rules in the project's settings, each installed harness says whether its acceptEdits
// mapping holds them (the fixture grok, which takes them as --deny) or which it cannot (codex).
TEST_F(Doctor, EachInstalledHarnessSaysWhetherItHoldsTheParentsRules) {
    const std::string bin = m_dir.make_dir("bin");
    testing::write_text(bin + "/codex", "#!/bin/sh\necho 'codex-cli 0.171.0'\n");
    std::filesystem::permissions(bin + "/codex", std::filesystem::perms::owner_all);
    m_env["PATH"] = bin + ":/usr/bin:/bin";
    const auto config = m_env.count("XDG_CONFIG_HOME") != 0U ? m_env["XDG_CONFIG_HOME"]
                                                             : m_env["HOME"] + "/.config";
    std::filesystem::create_directories(config + "/sonata");
    testing::write_text(config + "/sonata/config.toml",
                        "[harnesses.grok]\npath = \"" + testing::fake_harness_path("fake-grok") +
                            "\"\n");
    testing::write_text(m_project + "/.claude/settings.json",
                        R"json({"permissions": {"deny": ["Read(./.env)", "WebFetch"]}})json");
    int code = -1;
    auto checks = doctor(code);
    EXPECT_EQ(checks["parent rules in grok"].first, "ok");
    EXPECT_EQ(checks["parent rules in codex"].first, "warning");
    EXPECT_EQ(checks.count("parent rules in pi"), 0U) << "pi is not installed";
    const auto text = run_sonata({"doctor"}, m_env, m_project);
    EXPECT_NE(text.out.find("ok       parent rules in grok: its acceptEdits mapping holds all 2"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("parent rules in codex: codex cannot hold the parent's rules deny "
                            "Read(./.env) (project)"),
              std::string::npos)
        << text.out;
}

} // namespace
} // namespace sonata
