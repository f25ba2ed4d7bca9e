// `sonata init` with the real binary in a scratch project and HOME: the hook lands in Claude
// Code's settings with every other setting kept, a second run changes nothing, --remove takes out
// only what init added, bad settings are reported and left alone, and nothing changes unconfirmed.
#include <pty.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "cli/init_support.hpp"
#include "core/session.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_sonata;
using testing::ScratchDir;
using testing::SonataRun;
using testing::tree;
using testing::write_text;

// The build puts sonata-hook beside sonata, so init installs it (a path that needs no quoting).
const std::string k_hook = SONATA_HOOK_BIN;

/// The settings file init writes into an empty project.
std::string hook_only_settings() {
    return "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"*\",\n       "
           " \"hooks\": [\n"
           "          {\n            \"type\": \"command\",\n            \"command\": \"" +
           k_hook + "\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
}

/// The .mcp.json init writes into an empty project.
std::string mcp_only() {
    return "{\n  \"mcpServers\": {\n    \"sonata\": {\n      \"type\": \"stdio\",\n      "
           "\"command\": \"" SONATA_BIN "\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n"
           "  }\n}\n";
}

const std::string k_mcp_note =
    "note: harnesses that load a project's .mcp.json (copilot, grok, reasonix) would see "
    "sonata's tools: sonata refuses to dispatch them from here while it is there; `--scope "
    "global` or the plugin keeps it out of the repository\n";

const std::string k_user_settings = R"json({
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ],
    "deny": []
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Write",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write"
          }
        ]
      }
    ]
  },
  "env": {
    "FOO": "bar"
  }
}
)json";

class Init : public ::testing::Test {
protected:
    ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");
    std::string m_settings = m_project + "/.claude/settings.json";

    SonataRun init(const std::vector<std::string>& extra, const std::string& cwd = {}) {
        std::vector<std::string> args{"init"};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_sonata(args, m_env, cwd.empty() ? m_project : cwd);
    }

    /// A stand-in `claude`, alone on PATH with the system's, that records each argv it is run
    /// with; the log's path.
    std::string recording_claude() {
        const std::string bin = m_dir.make_dir("bin");
        const std::string log = m_dir.path() + "/claude-argv.log";
        write_text(bin + "/claude", "#!/bin/sh\necho \"$*\" >> " + log + "\n");
        fs::permissions(bin + "/claude", fs::perms::owner_all);
        m_env["PATH"] = bin + ":/usr/bin:/bin";
        return log;
    }
};

TEST_F(Init, EmptyProjectGetsTheHookAndACommentedSonataToml) {
    const auto run = init({"--yes"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(read_text(m_settings), hook_only_settings());
    EXPECT_EQ(read_text(m_project + "/sonata.toml"), cli::project_config_template());
    EXPECT_EQ(read_text(m_project + "/.mcp.json"), mcp_only());
    EXPECT_EQ(tree(m_project), (std::set<std::string>{".claude/", ".claude/settings.json",
                                                      ".mcp.json", "sonata.toml"}));
    EXPECT_EQ(run.out, k_mcp_note + "sonata init will:\n  - add a PreToolUse hook running `" +
                           k_hook + "` to " + m_settings +
                           " (a new file)\n  - register the MCP server \"sonata\" (`" SONATA_BIN
                           " mcp`) in " +
                           m_project + "/.mcp.json (a new file)\n  - create " + m_project +
                           "/sonata.toml with every setting commented out at its default\nDone.\n");
}

TEST_F(Init, KeepsEveryOtherSettingAndIsIdempotent) {
    write_text(m_settings, k_user_settings);
    ASSERT_EQ(init({"--yes"}).exit_code, 0);
    const std::string expected = R"json({
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ],
    "deny": []
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Write",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": ")json" + k_hook +
                                 R"json("
          }
        ]
      }
    ]
  },
  "env": {
    "FOO": "bar"
  }
}
)json";
    EXPECT_EQ(read_text(m_settings), expected);
    const auto before = fs::last_write_time(m_settings);
    const auto again = init({"--yes"});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(read_text(m_settings), expected);
    EXPECT_EQ(fs::last_write_time(m_settings), before);
    EXPECT_EQ(again.out, "note: the hook `" + k_hook + "` is already in " + m_settings +
                             "\nnote: the MCP server `" SONATA_BIN " mcp` is already in " +
                             m_project + "/.mcp.json\nnote: sonata's project is " + m_project +
                             " (" + m_project +
                             "/sonata.toml); no sonata.toml is created\n"
                             "sonata init: nothing to do\n");
}

TEST_F(Init, RemoveTakesOutExactlyWhatInitAdded) {
    write_text(m_settings, k_user_settings);
    ASSERT_EQ(init({"--yes"}).exit_code, 0);
    const auto run = init({"--remove", "--yes"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(read_text(m_settings), k_user_settings);
    EXPECT_EQ(tree(m_project), (std::set<std::string>{".claude/", ".claude/settings.json"}));
    const auto again = init({"--remove", "--yes"});
    EXPECT_EQ(again.exit_code, 0);
    EXPECT_EQ(read_text(m_settings), k_user_settings);
}

TEST_F(Init, RemoveKeepsAnEditedSonataToml) {
    ASSERT_EQ(init({"--yes"}).exit_code, 0);
    write_text(m_project + "/sonata.toml", "gate = \"strict\"\n");
    const auto run = init({"--remove", "--yes"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(read_text(m_project + "/sonata.toml"), "gate = \"strict\"\n");
    EXPECT_EQ(read_text(m_settings), "{}\n");
    EXPECT_NE(run.out.find("note: leaving " + m_project + "/sonata.toml: it was changed"),
              std::string::npos)
        << run.out;
}

TEST_F(Init, SettingsThatAreNotJsonAreReportedAndLeftUntouched) {
    for (const std::string& bad : std::vector<std::string>{"{\"model\": \"opus\",}", "", "[1, 2]",
                                                           "{\"hooks\": \"none\"}"}) {
        write_text(m_settings, bad);
        const auto before = tree(m_dir.path());
        for (const auto& flags :
             {std::vector<std::string>{"--yes"}, std::vector<std::string>{"--remove", "--yes"}}) {
            const auto run = init(flags);
            EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << bad;
            EXPECT_EQ(run.err.rfind("sonata: error: " + m_settings + ": ", 0), 0U) << run.err;
            EXPECT_EQ(read_text(m_settings), bad);
            EXPECT_EQ(tree(m_dir.path()), before);
        }
    }
}

TEST_F(Init, WithoutATerminalOrYesItOnlySaysWhatItWouldDo) {
    write_text(m_settings, k_user_settings);
    const auto before = tree(m_dir.path());
    const auto run = init({});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::usage));
    EXPECT_EQ(run.out, k_mcp_note + "sonata init will:\n  - add a PreToolUse hook running `" +
                           k_hook + "` to " + m_settings +
                           "\n  - register the MCP server \"sonata\" (`" SONATA_BIN " mcp`) in " +
                           m_project + "/.mcp.json (a new file)\n  - create " + m_project +
                           "/sonata.toml with every setting commented out at its default\n");
    EXPECT_EQ(run.err, "sonata: error: nothing changed: not asking without a terminal; run `sonata "
                       "init --yes` to apply\n");
    EXPECT_EQ(read_text(m_settings), k_user_settings);
    EXPECT_EQ(tree(m_dir.path()), before);
}

TEST_F(Init, GlobalScopeEditsHomeSettingsOnly) {
    const std::string home_settings = m_env.at("HOME") + "/.claude/settings.json";
    const auto run = init({"--scope", "global", "--yes"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(read_text(home_settings), hook_only_settings());
    EXPECT_EQ(tree(m_project), std::set<std::string>{});
    EXPECT_NE(run.out.find("note: there is no machine config"), std::string::npos) << run.out;
    EXPECT_EQ(read_text(m_env.at("HOME") + "/.claude.json"), mcp_only());
    ASSERT_EQ(init({"--scope", "global", "--remove", "--yes"}).exit_code, 0);
    EXPECT_EQ(read_text(home_settings), "{}\n");
    EXPECT_EQ(read_text(m_env.at("HOME") + "/.claude.json"), "{}\n");
}

TEST_F(Init, WithPluginItInstallsThePluginThroughClaudesOwnCommands) {
    const std::string log = recording_claude();
    const auto run = init({"--plugin", "--yes"});
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(read_text(log), "plugin marketplace add " SONATA_SOURCE_DIR
                              "\nplugin install sonata@sonata --scope project\n");
    // The plugin brings the hook and the MCP server: init writes neither itself.
    // (The marketplace is this build's source tree: the test binary's sonata is not installed.)
    EXPECT_FALSE(fs::exists(m_settings));
    EXPECT_FALSE(fs::exists(m_project + "/.mcp.json"));
    EXPECT_TRUE(fs::exists(m_project + "/sonata.toml"));
    EXPECT_NE(run.out.find("note: the plugin starts `sonata` from PATH"), std::string::npos)
        << run.out;

    fs::remove(log);
    ASSERT_EQ(init({"--plugin", "--remove", "--scope", "global", "--yes"}).exit_code, 0);
    EXPECT_EQ(read_text(log),
              "plugin uninstall sonata@sonata --scope user\nplugin marketplace remove sonata\n");

    // A directory without a marketplace, or no claude at all: an error, and nothing runs.
    fs::remove(log);
    const auto bad = init({"--plugin", "--marketplace", m_dir.path(), "--yes"});
    EXPECT_EQ(bad.exit_code, to_int(ExitCode::usage));
    EXPECT_NE(bad.err.find("no .claude-plugin/marketplace.json in " + m_dir.path()),
              std::string::npos)
        << bad.err;
    m_env["PATH"] = "/usr/bin:/bin";
    EXPECT_EQ(init({"--plugin", "--yes"}).exit_code, to_int(ExitCode::usage));
    EXPECT_FALSE(fs::exists(log));
}

TEST_F(Init, WithPluginTheMarketplaceComesFromWhereSonataWasInstalled) {
    const std::string log = recording_claude();
    // As the npm package's launcher says where its plugin files are.
    const std::string package = m_dir.make_dir("package");
    fs::create_directories(package + "/.claude-plugin");
    write_text(package + "/.claude-plugin/marketplace.json", "{}\n");
    m_env["SONATA_MARKETPLACE_DIR"] = package;
    ASSERT_EQ(init({"--plugin", "--yes"}).exit_code, 0);
    EXPECT_EQ(read_text(log), "plugin marketplace add " + package +
                                  "\nplugin install sonata@sonata --scope project\n");
    // A place without one is passed over for the next.
    fs::remove(log);
    m_env["SONATA_MARKETPLACE_DIR"] = m_dir.make_dir("empty");
    ASSERT_EQ(init({"--plugin", "--yes"}).exit_code, 0);
    EXPECT_EQ(read_text(log), "plugin marketplace add " SONATA_SOURCE_DIR
                              "\nplugin install sonata@sonata --scope project\n");
    // --marketplace is the only place looked at when given.
    fs::remove(log);
    const auto bad = init({"--plugin", "--marketplace", m_dir.path() + "/empty", "--yes"});
    EXPECT_EQ(bad.exit_code, to_int(ExitCode::usage));
    EXPECT_FALSE(fs::exists(log));
}

TEST_F(Init, TheMcpServerJoinsTheOthersAndLeavesWithoutThem) {
    const std::string mcp = m_project + "/.mcp.json";
    const std::string theirs =
        "{\n  \"mcpServers\": {\n    \"github\": {\n      \"command\": \"gh-mcp\"\n    }\n  "
        "},\n  \"other\": 1\n}\n";
    write_text(mcp, theirs);
    ASSERT_EQ(init({"--yes"}).exit_code, 0);
    const std::string both = read_text(mcp);
    EXPECT_EQ(both.find("\"github\"") < both.find("\"sonata\""), true) << both;
    EXPECT_NE(both.find("\"other\": 1"), std::string::npos) << both;
    ASSERT_EQ(init({"--remove", "--yes"}).exit_code, 0);
    EXPECT_EQ(read_text(mcp), theirs);

    // A server named sonata that is not `sonata mcp` is not init's to replace.
    const std::string foreign = R"({"mcpServers": {"sonata": {"command": "npx", "args": ["x"]}}})";
    write_text(mcp, foreign);
    const auto run = init({"--yes"});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data));
    EXPECT_NE(run.err.find("already has an MCP server named \"sonata\""), std::string::npos)
        << run.err;
    EXPECT_EQ(read_text(mcp), foreign);
}

TEST_F(Init, SymlinkedSettingsStayALink) {
    const std::string real = m_dir.path() + "/dotfiles/claude-settings.json";
    write_text(real, k_user_settings);
    fs::create_directories(m_env.at("HOME") + "/.claude");
    fs::create_symlink(real, m_env.at("HOME") + "/.claude/settings.json");
    ASSERT_EQ(init({"--scope", "global", "--yes"}).exit_code, 0);
    EXPECT_TRUE(fs::is_symlink(m_env.at("HOME") + "/.claude/settings.json"));
    auto removed = cli::uninstall_hook(read_text(real), real);
    ASSERT_TRUE(removed);
    EXPECT_EQ(removed->removed, std::vector<std::string>{k_hook});
}

TEST_F(Init, TheInstalledCommandRecordsTheMode) {
    ASSERT_EQ(init({"--yes"}).exit_code, 0);
    // Claude Code runs the command through a shell; this path needs no quoting, so it is argv.
    ASSERT_EQ(k_hook, cli::hook_command(SONATA_HOOK_BIN));
    const std::string input = R"({"session_id":"e2e","cwd":")" + m_project +
                              R"(","permission_mode":"plan","hook_event_name":"PreToolUse"})";
    const auto run = testing::run_program({k_hook}, m_env, "/", input);
    EXPECT_EQ(run.exit_code, 0);
    auto record = parse_session_record(read_text(m_project + "/.sonata/session-e2e.json"), "f");
    ASSERT_TRUE(record);
    EXPECT_EQ(record->mode, Mode::plan);
}

TEST_F(Init, WithoutSonataHookBesideItInstallsSonataHookAndALaterInitUpgrades) {
    // A sonata binary installed alone: the hook is `<it> hook`.
    const std::string lone = m_dir.make_dir("lone") + "/sonata";
    fs::copy_file(SONATA_BIN, lone);
    const auto run = testing::run_program({lone, "init", "--yes"}, m_env, m_project);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto first = cli::uninstall_hook(read_text(m_settings), m_settings);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->removed, std::vector<std::string>{lone + " hook"});
    // The build's sonata, with sonata-hook beside it, replaces that hook with its own.
    const auto upgrade = init({"--yes"});
    ASSERT_EQ(upgrade.exit_code, 0) << upgrade.err;
    EXPECT_EQ(read_text(m_settings), hook_only_settings());
}

/// Runs `sonata init` with a pseudo-terminal as stdin and stdout, typing `answer` at the prompt.
SonataRun init_on_terminal(const Environment& env, const std::string& cwd,
                           const std::string& answer) {
    std::vector<std::string> env_entries;
    for (const auto& [key, value] : env)
        env_entries.push_back(key + "=" + value);
    std::vector<char*> envp;
    for (auto& entry : env_entries)
        envp.push_back(entry.data());
    envp.push_back(nullptr);
    int master = -1;
    const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    if (pid == 0) {
        if (::chdir(cwd.c_str()) != 0) ::_exit(127);
        char* argv[] = {const_cast<char*>(SONATA_BIN), const_cast<char*>("init"), nullptr};
        ::execve(SONATA_BIN, argv, envp.data());
        ::_exit(127);
    }
    std::string out;
    char buffer[4096];
    bool answered = false;
    for (;;) {
        const ssize_t n = ::read(master, buffer, sizeof buffer);
        if (n <= 0) break; // EIO once the child has gone
        out.append(buffer, static_cast<std::size_t>(n));
        if (!answered && out.find("[y/N] ") != std::string::npos) {
            const std::string line = answer + "\n";
            if (::write(master, line.data(), line.size()) < 0) break;
            answered = true;
        }
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(master);
    return SonataRun{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, {}};
}

TEST_F(Init, OnATerminalItAsksAndOnlyYesApplies) {
    const auto before = tree(m_dir.path());
    const auto declined = init_on_terminal(m_env, m_project, "n");
    EXPECT_EQ(declined.exit_code, to_int(ExitCode::failure)) << declined.out;
    EXPECT_NE(declined.out.find("Proceed? [y/N] "), std::string::npos) << declined.out;
    EXPECT_NE(declined.out.find("Nothing changed."), std::string::npos) << declined.out;
    EXPECT_EQ(tree(m_dir.path()), before);

    const auto accepted = init_on_terminal(m_env, m_project, "y");
    EXPECT_EQ(accepted.exit_code, 0) << accepted.out;
    EXPECT_EQ(read_text(m_settings), hook_only_settings());
}

} // namespace
} // namespace sonata
