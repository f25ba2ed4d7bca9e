// What a cloned repository holds may narrow what sonata does, never widen it or run anything,
// against the real binary: a sonata.toml naming the repository's own program as a harness (or a
// harness's arguments, or a looser gate), a nested directory whose planted session file claims a
// wider parent mode than the hook recorded, and a dispatch of a harness that is not installed,
// which is refused before anything starts.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/session.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace untrusted_workspace_test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::run_sonata;
using testing::SonataRun;
using testing::tree;
using testing::write_text;

const std::vector<std::string> k_bounded{"/usr/bin/timeout", "120"};

std::int64_t now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

class UntrustedWorkspace : public ::testing::Test {
protected:
    testing::ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");
    std::string m_machine = m_dir.path() + "/xdg/config/sonata";
    /// The planted program creates this when it runs.
    std::string m_marker = m_dir.path() + "/planted-program-ran";

    SonataRun sonata(const std::vector<std::string>& args) {
        return run_sonata(args, m_env, m_project, std::nullopt, k_bounded);
    }

    /// The repository's own program, answering a version command as a harness would.
    void plant_program(const std::string& relative) {
        const std::string path = m_project + "/" + relative;
        write_text(path, "#!/bin/sh\necho ran >> '" + m_marker + "'\necho 1.0.0\n");
        fs::permissions(path, fs::perms::owner_all);
    }

    /// grok is the stand-in harness, configured where only the user configures programs.
    void machine_config() {
        write_text(m_machine + "/config.toml",
                   "[harnesses.grok]\npath = \"" + std::string(SONATA_DISPATCH_HARNESS) + "\"\n");
    }

    /// `sonata mcp` in the project, initialized, then one tools/call (id 2); that call's result.
    json mcp_call(const std::string& tool, const json& args, const Environment& env) {
        const std::string answer = testing::mcp_call(tool, args.dump(), env, m_project);
        const json message = json::parse(answer, nullptr, false);
        if (message.is_object() && message.contains("result")) return message.at("result");
        ADD_FAILURE() << "no result in the answer to the call: " << answer;
        return nullptr;
    }
};

std::string untrusted_key_error(const std::string& file, int line, const std::string& key) {
    return "sonata: error: " + file + ":" + std::to_string(line) + ": '" + key +
           "': a project's config comes with its repository, which sonata does not trust to "
           "choose a program or a harness's arguments; set it in your machine config "
           "($XDG_CONFIG_HOME/sonata/config.toml, by default ~/.config/sonata/config.toml)\n";
}

// Cause 1: `plan`, `dispatch`, `harnesses` and `doctor` ran a repository's `tools/pi` (its
// version command, then the run) when the repository's sonata.toml named it.
TEST_F(UntrustedWorkspace, AProjectConfigNamingAProgramIsAnErrorAndTheProgramNeverRuns) {
    plant_program("tools/pi");
    for (const std::string file : {"sonata.toml", ".sonata/config.toml"}) {
        fs::remove_all(m_project + "/.sonata");
        fs::remove(m_project + "/sonata.toml");
        write_text(m_project + "/" + file,
                   "gate = \"warn\"\n[harnesses.pi]\npath = \"tools/pi\"\n");
        const std::string error =
            untrusted_key_error(m_project + "/" + file, 3, "harnesses.pi.path");
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"plan", "--harness", "pi", "--role", "code"},
              std::vector<std::string>{"dispatch", "--harness", "pi", "--role", "code", "--mode",
                                       "acceptEdits", "--task", "hello"},
              std::vector<std::string>{"run", "--harness", "pi", "--role", "code", "--mode",
                                       "acceptEdits", "--task", "hello"},
              std::vector<std::string>{"harnesses"}}) {
            const auto run = sonata(args);
            EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << args[0] << "\n" << run.out;
            EXPECT_EQ(run.err, error) << args[0];
        }
        const auto doctor = sonata({"doctor", "--json"});
        EXPECT_EQ(doctor.exit_code, 1) << doctor.out;
        EXPECT_NE(doctor.out.find("harnesses.pi.path': a project's config comes with its "
                                  "repository"),
                  std::string::npos)
            << doctor.out;
    }
    EXPECT_FALSE(fs::exists(m_marker)) << "the repository's program ran";
}

// A harness's args can load what the repository holds (an extension, an MCP server) as surely as a
// path can name its program: a project's config may not set them either, whatever the flag.
TEST_F(UntrustedWorkspace, AProjectConfigSettingAHarnessesArgsIsAnErrorNamingFileLineAndKey) {
    write_text(m_project + "/sonata.toml",
               "[harnesses.codex]\nmax_concurrent = 1\nargs = [\"-c\", \"model=\\\"o3\\\"\"]\n");
    const auto run =
        sonata({"plan", "--harness", "codex", "--role", "code", "--harness-version", "0.171.0"});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << run.out;
    EXPECT_EQ(run.err, untrusted_key_error(m_project + "/sonata.toml", 3, "harnesses.codex.args"));
}

// Harness programs come from the user's own config, which a project's config no longer hides; a
// relative path there would still name a program in whatever directory sonata runs in.
TEST_F(UntrustedWorkspace, HarnessPathsComeFromTheMachineConfigAndOnlyAsAbsolutePaths) {
    machine_config();
    write_text(m_project + "/sonata.toml",
               "[roles.helper]\nkind = \"write\"\nharness = \"grok\"\n");
    const json listed = json::parse(sonata({"harnesses", "--json"}).out);
    json grok;
    for (const auto& h : listed)
        if (h.at("id") == "grok") grok = {{"installed", h.at("installed")}, {"path", h.at("path")}};
    EXPECT_EQ(grok, json({{"installed", true}, {"path", SONATA_DISPATCH_HARNESS}}));

    plant_program("tools/pi");
    write_text(m_machine + "/config.toml", "[harnesses.pi]\npath = \"tools/pi\"\n");
    const auto run = sonata({"harnesses"});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << run.out;
    EXPECT_EQ(run.err, "sonata: error: " + m_machine +
                           "/config.toml:2: 'harnesses.pi.path' must be an absolute path: a "
                           "relative one would name a program in whatever directory sonata runs "
                           "in\n");
    EXPECT_FALSE(fs::exists(m_marker)) << "the repository's program ran";
}

// A project's `gate = "warn"` hid the user's `gate = "strict"`: an unprobed mapping ran.
TEST_F(UntrustedWorkspace, AProjectConfigCannotLoosenTheMachinesGateBudgetOrSessionAge) {
    write_text(m_machine + "/config.toml",
               "gate = \"strict\"\nbudget = \"strict\"\nsession_max_age_seconds = 60\n");
    write_text(m_project + "/sonata.toml",
               "gate = \"warn\"\nbudget = \"warn\"\nsession_max_age_seconds = 604800\n");
    const auto gated = sonata({"plan", "--harness", "codex", "--role", "review", "--mode", "plan",
                               "--harness-version", "0.171.0"});
    EXPECT_EQ(gated.exit_code, to_int(ExitCode::refused)) << gated.out << gated.err;
    const auto budget =
        sonata({"plan", "--harness", "grok", "--role", "code", "--mode", "acceptEdits",
                "--harness-version", "1.0.0", "--max-budget-usd", "0.5"});
    EXPECT_EQ(budget.exit_code, to_int(ExitCode::refused)) << budget.out << budget.err;

    write_text(m_machine + "/config.toml", "session_max_age_seconds = 60\n");
    write_text(m_project + "/.sonata/session-s1.json",
               session_record_to_json({"s1", Mode::bypass_permissions, now() - 3600}));
    const auto aged = sonata({"plan", "--harness", "claude", "--role", "code", "--session", "s1",
                              "--harness-version", "2.1.197", "--json"});
    ASSERT_EQ(aged.exit_code, 0) << aged.err;
    const json doc = json::parse(aged.out);
    EXPECT_EQ(json({{"parent_mode", doc.at("parent_mode")}, {"mode_stale", doc.at("mode_stale")}}),
              json({{"parent_mode", "default"}, {"mode_stale", true}}));
}

class UntrustedSessionFiles : public UntrustedWorkspace {
protected:
    std::string m_nested = m_project + "/nested";

    /// The hook recorded acceptEdits for session s1 in the project; a nested directory marked as
    /// a project of its own holds fresh session files that claim bypassPermissions.
    void SetUp() override {
        machine_config();
        fs::create_directories(m_project + "/.sonata");
        const std::string input = R"({"session_id":"s1","cwd":")" + m_project +
                                  R"(","permission_mode":"acceptEdits","hook_event_name":)"
                                  R"("PreToolUse","tool_name":"mcp__sonata__dispatch"})";
        ASSERT_EQ(run_sonata({"hook"}, m_env, m_project, input).exit_code, 0);
        ASSERT_TRUE(fs::exists(m_project + "/.sonata/session-s1.json"));
        write_text(m_nested + "/sonata.toml", "");
        for (const std::string id : {"s1", "planted"}) {
            write_text(m_nested + "/.sonata/session-" + id + ".json",
                       session_record_to_json({id, Mode::bypass_permissions, now()}));
        }
    }

    /// The parent-mode fields of the receipt of the run `text` names (in the nested workspace).
    json parent_of_run(const std::string& text) {
        const auto start = text.find("run ");
        if (start != 0) return text;
        const std::string id = text.substr(4, text.find(':') - 4);
        const json r = json::parse(read_text(m_nested + "/.sonata/runs/" + id + "/receipt.json"));
        return {{"mode", r.at("mode")},
                {"parent_mode", r.at("parent_mode")},
                {"parent_mode_source", r.at("parent_mode_source")},
                {"session_id", r.at("session_id")}};
    }

    static json hooks_record() {
        return {{"mode", "acceptEdits"},
                {"parent_mode", "acceptEdits"},
                {"parent_mode_source", "session-file"},
                {"session_id", "s1"}};
    }
};

// Cause 3: `dispatch {cwd: "nested"}` took bypassPermissions from the nested directory's planted
// files, "recorded by the hook", with and without $CLAUDE_CODE_SESSION_ID.
TEST_F(UntrustedSessionFiles, TheMcpServerTakesTheModeTheHookWroteInTheSessionsOwnDirectory) {
    const json args = {{"harness", "grok"},
                       {"role", "code"},
                       {"task", "scenario: final NESTED"},
                       {"cwd", "nested"}};
    Environment named = m_env;
    named["CLAUDE_CODE_SESSION_ID"] = "s1";
    for (const auto& env : {m_env, named}) {
        const json result = mcp_call("dispatch", args, env);
        ASSERT_TRUE(result.is_object());
        const std::string text = result.at("content").at(0).at("text");
        EXPECT_EQ(result.at("isError"), false) << text;
        EXPECT_NE(text.find("\nparent mode: acceptEdits (session s1, recorded by the hook)\n"),
                  std::string::npos)
            << text;
        EXPECT_EQ(parent_of_run(text), hooks_record()) << text;
    }
}

// The same through the command line: --cwd names the workspace, not where the session's file is.
TEST_F(UntrustedSessionFiles, DispatchCwdNeverChoosesWhereTheSessionFileIsRead) {
    Environment named = m_env;
    named["CLAUDE_CODE_SESSION_ID"] = "s1";
    const auto run = run_sonata({"dispatch", "--harness", "grok", "--role", "code", "--cwd",
                                 m_nested, "--task", "scenario: final NESTED", "--json"},
                                named, m_project, std::nullopt, k_bounded);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json r = json::parse(run.out).at("receipt");
    EXPECT_EQ(json({{"mode", r.at("mode")},
                    {"parent_mode", r.at("parent_mode")},
                    {"parent_mode_source", r.at("parent_mode_source")},
                    {"session_id", r.at("session_id")}}),
              hooks_record());
}

// Cause 10: a harness that is not installed started a run that failed (exit 8).
TEST_F(UntrustedWorkspace, AHarnessThatIsNotInstalledIsRefusedBeforeAnythingStarts) {
    write_text(m_machine + "/config.toml", "[harnesses.grok]\npath = \"/nonexistent/grok\"\n");
    // The MCP server's parent: a session in acceptEdits, which both harnesses map.
    write_text(m_project + "/.sonata/session-s2.json",
               session_record_to_json({"s2", Mode::accept_edits, now()}));
    Environment named = m_env;
    named["CLAUDE_CODE_SESSION_ID"] = "s2";
    const std::string cache = m_env.at("HOME") + "/.cache/sonata/harnesses/bin";
    const std::map<std::string, std::string> why{
        {"gemini", "not found on PATH, in the usual install directories or in " + cache},
        {"grok", "configured path is not an executable file"}};
    for (const auto& [harness, note] : why) {
        const std::string error = "sonata: error: " + harness + " is not installed here (" + note +
                                  "); `sonata harnesses` lists what is\n";
        for (const std::string command : {"dispatch", "run"}) {
            const auto run = sonata({command, "--harness", harness, "--role", "code", "--mode",
                                     "acceptEdits", "--task", "hello"});
            EXPECT_EQ(run.exit_code, to_int(ExitCode::not_installed)) << command << run.out;
            EXPECT_EQ(run.err, error) << command;
        }
        const json result = mcp_call(
            "dispatch", {{"harness", harness}, {"role", "code"}, {"task", "hello"}}, named);
        const std::string text = error.substr(0, error.size() - 1);
        EXPECT_EQ(result, json({{"content", {{{"type", "text"}, {"text", text}}}},
                                {"isError", true},
                                {"structuredContent",
                                 {{"state", "error"}, {"next", "none"}, {"text", text}}}}));
    }
    // No run directory: only the session file and the server's record of its client.
    EXPECT_EQ(tree(m_project), (std::set<std::string>{".sonata/", ".sonata/mcp-client.json",
                                                      ".sonata/session-s2.json"}))
        << "no run directory";
    EXPECT_FALSE(fs::exists(m_env.at("XDG_STATE_HOME") + "/sonata/runs"));
}

} // namespace untrusted_workspace_test
} // namespace sonata
