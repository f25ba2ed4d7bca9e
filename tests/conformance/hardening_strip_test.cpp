// Every hardening sonata adds to a mapping is proven by stripping it: the probe cell that
// justified it runs on the pinned binary twice, once as `sonata plan` emits the invocation (the
// control, which must hold) and once with exactly that piece removed behind the planner's back,
// which must turn `violated`. A hardening whose removal changes nothing is either not needed or
// its probe is blind; README.md lists each one with its proof.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"
#include "probes/workspace.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/real_cell.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata {
namespace {

/// Removes every argument equal to `flag`, or starting with "flag=", and, when `with_value`, the
/// argument after a bare `flag`.
std::function<void(Invocation&)> drop_flag(std::string flag, bool with_value = false) {
    return [flag = std::move(flag), with_value](Invocation& inv) {
        auto& argv = inv.argv;
        for (std::size_t i = 1; i < argv.size();) {
            if (argv[i] == flag) {
                const auto n = with_value && i + 1 < argv.size() ? 2 : 1;
                argv.erase(argv.begin() + static_cast<long>(i),
                           argv.begin() + static_cast<long>(i + n));
            } else if (argv[i].rfind(flag + "=", 0) == 0) {
                argv.erase(argv.begin() + static_cast<long>(i));
            } else {
                ++i;
            }
        }
    };
}

/// Removes `-c KEY=VALUE` pairs whose value starts with `key`.
std::function<void(Invocation&)> drop_config(std::string key) {
    return [key = std::move(key)](Invocation& inv) {
        auto& argv = inv.argv;
        for (std::size_t i = 1; i + 1 < argv.size();) {
            if (argv[i] == "-c" && argv[i + 1].rfind(key, 0) == 0) {
                argv.erase(argv.begin() + static_cast<long>(i),
                           argv.begin() + static_cast<long>(i + 2));
            } else {
                ++i;
            }
        }
    };
}

/// Removes the variable `name` from the environment the invocation sets.
std::function<void(Invocation&)> drop_env(std::string name) {
    return [name = std::move(name)](Invocation& inv) { inv.env.erase(name); };
}

struct Hardening {
    std::string name; ///< Test name: harness_piece.
    std::string harness;
    Mode mode = Mode::plan;
    RoleKind role = RoleKind::read_only;
    std::string probe; ///< The probe that justified it.
    std::string piece; ///< What is stripped, as README.md lists it.
    std::function<void(Invocation&)> strip;
    /// Empty: removing it must turn the probe violated. Otherwise the measured fact that it is not
    /// needed on the pinned binary, and why it stays: the cell must still hold without it, and the
    /// day it does not, this test says so.
    std::string not_needed = {};
    /// The host the proof needs, applied to the control and the stripped run alike: empty, or
    /// "bubblewrap" (Debian's bwrap on PATH, from SONATA_BWRAP_DIR).
    std::string host = {};
    /// The pinned line it belongs to (a harness with a pin per line); empty: the harness's first.
    std::string version = {};
};

/// Puts Debian's bwrap, unpacked by scripts/setup.sh, first on the child's PATH.
void with_bubblewrap(Invocation& inv) {
    const char* dir = std::getenv("SONATA_BWRAP_DIR");
    inv.env["PATH"] = std::string(dir != nullptr ? dir : "") + ":/usr/bin:/bin";
}

void PrintTo(const Hardening& h, std::ostream* os) { *os << h.harness << ": " << h.piece; }

/// Rewrites the rules of opencode 2.x's injected agent (OPENCODE_CONFIG_CONTENT's
/// agents.<name>.permissions) with `edit`.
std::function<void(Invocation&)> edit_v2_rules(std::function<void(nlohmann::json&)> edit) {
    return [edit = std::move(edit)](Invocation& inv) {
        auto config = nlohmann::json::parse(inv.env.at("OPENCODE_CONFIG_CONTENT"));
        for (auto& agent : config.at("agents"))
            edit(agent);
        inv.env["OPENCODE_CONFIG_CONTENT"] = config.dump();
    };
}

/// Drops the rules of opencode 2.x's injected agent that `drop` selects.
std::function<void(Invocation&)> drop_v2_rules(std::function<bool(const nlohmann::json&)> drop) {
    return edit_v2_rules([drop = std::move(drop)](nlohmann::json& agent) {
        auto& rules = agent.at("permissions");
        rules.erase(std::remove_if(rules.begin(), rules.end(), drop), rules.end());
    });
}

std::vector<Hardening> hardenings() {
    return {
        {"claude_tools", "claude", Mode::plan, RoleKind::read_only, "write-withheld",
         "--tools=Read,Grep,Glob (and its --allowedTools twin)",
         [](Invocation& inv) {
             drop_flag("--tools")(inv);
             drop_flag("--allowedTools")(inv);
         }},
        {"claude_strict_mcp_config", "claude", Mode::plan, RoleKind::read_only, "mcp-reachability",
         "--strict-mcp-config", drop_flag("--strict-mcp-config")},
        {"opencode_plan_permissions", "opencode", Mode::plan, RoleKind::read_only,
         "shell-write-withheld", "OPENCODE_CONFIG_CONTENT (the plan agent's permission rules)",
         drop_env("OPENCODE_CONFIG_CONTENT")},
        {"claude_setting_sources", "claude", Mode::default_mode, RoleKind::write,
         "hostile-workspace", "--setting-sources=user", drop_flag("--setting-sources")},
        {"codex_tmp_roots", "codex", Mode::accept_edits, RoleKind::write, "outside-workspace-write",
         "-c sandbox_workspace_write.exclude_tmpdir_env_var=true and .exclude_slash_tmp=true",
         drop_config("sandbox_workspace_write.exclude_")},
        {"gemini_mode_switch_policy", "gemini", Mode::default_mode, RoleKind::write,
         "self-promotion", "--policy <support>/gemini-deny-mode-switch.toml",
         drop_flag("--policy", true)},
        {"codex_ignore_user_config", "codex", Mode::plan, RoleKind::read_only, "hostile-workspace",
         "--ignore-user-config", drop_flag("--ignore-user-config")},
        {"gemini_trusted_folders", "gemini", Mode::plan, RoleKind::read_only, "hostile-workspace",
         "GEMINI_CLI_TRUSTED_FOLDERS_PATH=<support>/gemini-trusted-folders.json",
         drop_env("GEMINI_CLI_TRUSTED_FOLDERS_PATH")},
        {"pi_tools", "pi", Mode::plan, RoleKind::read_only, "write-withheld",
         "--tools read,grep,find,ls", drop_flag("--tools", true)},
        {"pi_no_extensions", "pi", Mode::plan, RoleKind::read_only, "hostile-workspace",
         "--no-extensions", drop_flag("--no-extensions"),
         "pi 1.6.0 loads a project's extensions only when it trusts the project, which "
         "--no-approve withholds, and offers a user's MCP tools only when --tools names them; it "
         "stays because the user's own extensions (and pi's built-in MCP, code mode and tool "
         "search extensions) would run in every mapping, and pi 0.x trusts every project"},
        {"pi_no_approve", "pi", Mode::plan, RoleKind::read_only, "hostile-workspace",
         "--no-approve (pi 1.x)", drop_flag("--no-approve")},
        {"pi_session_dir", "pi", Mode::plan, RoleKind::read_only, "hostile-workspace",
         "--session-dir <support>/pi-sessions", drop_flag("--session-dir", true)},
        {"pi_offline", "pi", Mode::plan, RoleKind::read_only, "hostile-workspace", "PI_OFFLINE=1",
         drop_env("PI_OFFLINE"),
         "pi 1.6.0 installs a project's packages (with the project's npmCommand) only when it "
         "trusts the project, which --no-approve withholds; it stays so that no version check, "
         "model-catalog refresh or package install reaches the network at start-up"},
        {"qwen_bare", "qwen", Mode::plan, RoleKind::read_only, "hostile-workspace", "--bare",
         drop_flag("--bare")},
        {"reasonix_accept_edits_as_dont_ask", "reasonix", Mode::accept_edits, RoleKind::write,
         "rm-prompt", "acceptEdits as --permission-mode dontAsk --allowed-tools Edit",
         [](Invocation& inv) {
             drop_flag("--allowed-tools", true)(inv);
             std::replace(inv.argv.begin(), inv.argv.end(), std::string("dontAsk"),
                          std::string("acceptEdits"));
         },
         "", "bubblewrap"},
        {"kilo_no_project_config", "kilo", Mode::plan, RoleKind::read_only, "hostile-workspace",
         "KILO_DISABLE_PROJECT_CONFIG=1", drop_env("KILO_DISABLE_PROJECT_CONFIG")},
        {"kilo_plan_agent", "kilo", Mode::plan, RoleKind::read_only, "shell-write-withheld",
         "KILO_CONFIG_CONTENT's sonata-plan agent (the built-in plan agent instead)",
         [](Invocation& inv) {
             drop_env("KILO_CONFIG_CONTENT")(inv);
             std::replace(inv.argv.begin(), inv.argv.end(), std::string("sonata-plan"),
                          std::string("plan"));
         },
         "kilo 7.7.9's built-in plan agent refuses the shell write too; the injected agent stays "
         "so that every tool it does not name (sub-agents, MCP servers, web access, kilo's "
         "schedulers) is denied rather than left to the built-in agent's rules"},
        {"kilo_edit_external_directory", "kilo", Mode::accept_edits, RoleKind::write,
         "outside-workspace-write", "external_directory: deny in the sonata-edit agent",
         [](Invocation& inv) {
             auto& config = inv.env["KILO_CONFIG_CONTENT"];
             const std::string rule = R"(,"external_directory":"deny")";
             if (const auto at = config.find(rule); at != std::string::npos)
                 config.erase(at, rule.size());
         },
         "without it kilo 7.7.9 auto-rejects the write outside the workspace and ends the run "
         "(nothing is written either way); the rule stays so that the model is told no and the "
         "run goes on"},
        {"opencode2_edit_guarded_paths", "opencode", Mode::accept_edits, RoleKind::write,
         "protected-path-write",
         "the sonata-edit agent's edit denials of the paths the parent guards (opencode 2.x)",
         drop_v2_rules([](const nlohmann::json& rule) {
             return rule.value("action", "") == "edit" && rule.value("effect", "") == "deny";
         }),
         "", "", "2.1.2"},
        {"opencode2_external_directory", "opencode", Mode::accept_edits, RoleKind::write,
         "outside-workspace-write",
         "external_directory: deny in the sonata-edit agent (opencode 2.x)",
         drop_v2_rules([](const nlohmann::json& rule) {
             return rule.value("action", "") == "external_directory";
         }),
         "opencode 2.1.2 refuses a directory outside the workspace under the agent's `*` deny "
         "too; the rule stays explicit so that no later default opens it",
         "", "2.1.2"},
        // Not a piece sonata strips but a form it never mixes: 2.1.2 ignores a 1.x `permission`
        // map under 2.x's `agents` without a word, and the agent is open to everything.
        {"opencode2_agent_form", "opencode", Mode::plan, RoleKind::read_only,
         "shell-write-withheld",
         "the injected agent in 2.x's own form (a 1.x permission map under `agents` instead)",
         edit_v2_rules([](nlohmann::json& agent) {
             nlohmann::json map = nlohmann::json::object();
             for (const auto& rule : agent.at("permissions"))
                 map[rule.at("action").get<std::string>()] = rule.at("effect");
             agent.erase("permissions");
             agent["permission"] = map;
         }),
         "", "", "2.1.2"},
        // The parent's rules as sonata carries them (parent-rule plants them: the user's
        // settings hold WebFetch and Bash(curl:*), the project's Read(./.env) and
        // Edit(./secrets/**)).
        {"claude_parent_rules", "claude", Mode::accept_edits, RoleKind::write, "parent-rule",
         "--disallowedTools=RULE for each rule of the project's settings (which "
         "--setting-sources=user keeps claude from reading)",
         [](Invocation& inv) {
             for (const char* rule : {"Read(./.env)", "Edit(./secrets/**)"})
                 std::erase(inv.argv, std::string("--disallowedTools=") + rule);
         }},
        {"opencode2_parent_rules", "opencode", Mode::accept_edits, RoleKind::write, "parent-rule",
         "the sonata-edit agent's denials of the parent's read and edit paths (opencode 2.x)",
         drop_v2_rules([](const nlohmann::json& rule) {
             const auto resource = rule.value("resource", "");
             return rule.value("effect", "") == "deny" &&
                    (resource == ".env" || resource.rfind("secrets/", 0) == 0);
         }),
         "", "", "2.1.2"},
        {"qwen_parent_rules", "qwen", Mode::bypass_permissions, RoleKind::write, "parent-rule",
         "--exclude-tools=RULE for each of the parent's rules",
         [](Invocation& inv) {
             std::erase_if(inv.argv, [](const std::string& arg) {
                 return arg.rfind("--exclude-tools=", 0) == 0;
             });
         }},
        {"qwen_parent_rules_program_path", "qwen", Mode::bypass_permissions, RoleKind::write,
         "parent-rule", "--exclude-tools=Bash(*/curl*) beside Bash(curl:*)",
         [](Invocation& inv) {
             std::erase(inv.argv, std::string("--exclude-tools=Bash(*/curl*)"));
         }},
        {"cline_closed_settings", "cline", Mode::plan, RoleKind::read_only, "shell-write-withheld",
         "CLINE_GLOBAL_SETTINGS_PATH=<support>/cline-closed-settings.json (no shell, no sub-agent)",
         drop_env("CLINE_GLOBAL_SETTINGS_PATH")},
        {"copilot_no_temp_dir", "copilot", Mode::accept_edits, RoleKind::write,
         "outside-workspace-write", "--disallow-temp-dir", drop_flag("--disallow-temp-dir")},
        {"copilot_read_tools", "copilot", Mode::plan, RoleKind::read_only, "write-withheld",
         "--available-tools=view,grep,glob", drop_flag("--available-tools"),
         "copilot 1.0.102 refuses a headless write no rule allows; the tool list stays so that "
         "no rule in copilot's config directory (where a user may sign in and configure "
         "copilot) can let a plan run write, run a command or call an MCP tool"},
        // Not a piece sonata adds but one it never adds: with it the repository's files the
        // probe plants take effect (a preToolUse hook approves `rm`), so the probe sees them.
        {"copilot_untrusted_folder", "copilot", Mode::default_mode, RoleKind::write,
         "hostile-workspace", "no --trust-folder (the folder stays untrusted)",
         [](Invocation& inv) { inv.argv.insert(inv.argv.begin() + 1, "--trust-folder"); }},
        {"copilot_own_home", "copilot", Mode::default_mode, RoleKind::write, "hostile-workspace",
         "COPILOT_HOME (sonata's own config directory)", drop_env("COPILOT_HOME")},
        {"droid_read_tools", "droid", Mode::plan, RoleKind::read_only, "shell-write-withheld",
         "--only-tools Read,LS,Grep,Glob", drop_flag("--only-tools", true)},
        {"droid_runtime_settings", "droid", Mode::plan, RoleKind::read_only, "hostile-workspace",
         "--settings with hooks and MCP servers off", drop_flag("--settings", true)},
        {"cn_exclude_shell", "cn", Mode::plan, RoleKind::read_only, "shell-write-withheld",
         "--exclude Bash (and CheckBackgroundJob, Write, Edit, MultiEdit)",
         drop_flag("--exclude", true)},
        {"cn_global_dir", "cn", Mode::plan, RoleKind::read_only, "hostile-workspace",
         "CONTINUE_GLOBAL_DIR (set, so that a repository's .env cannot move it)",
         drop_env("CONTINUE_GLOBAL_DIR")},
    };
}

class HardeningStrip : public ::testing::TestWithParam<Hardening> {
protected:
    void SetUp() override {
        const auto& h = GetParam();
        const char* path = std::getenv("PATH");
        const auto all = testing::pins_of(h.harness);
        const auto pin = std::find_if(all.begin(), all.end(), [&](const testing::Pin& p) {
            return h.version.empty() || p.version == h.version;
        });
        ASSERT_NE(pin, all.end()) << h.harness << " " << h.version << " is not pinned";
        m_version = pin->version;
        m_bin = search_path(pin->binary, path != nullptr ? path : "/usr/bin:/bin").value_or("");
        if (m_bin.empty()) {
            const std::string why = testing::missing_harness_skip_reason();
            if (why.empty()) FAIL() << h.harness << " is not installed although npm answered";
            GTEST_SKIP() << h.harness << " is not installed: " << why;
        }
        if (h.host == "bubblewrap") {
            const char* dir = std::getenv("SONATA_BWRAP_DIR");
            if (dir == nullptr || access((std::string(dir) + "/bwrap").c_str(), X_OK) != 0)
                GTEST_SKIP() << "the proof needs bubblewrap: SONATA_BWRAP_DIR names no bwrap "
                                "(scripts/setup.sh test unpacks Debian's)";
        }
        m_base = m_dir.make_dir("base");
        auto template_dir = probes::make_workspace_template(m_base, *m_runner);
        ASSERT_TRUE(template_dir) << template_dir.error().message;
        m_template = *template_dir;
    }

    Cell run(std::function<void(Invocation&)> rewrite) {
        const auto& h = GetParam();
        auto on_host = [&h, rewrite = std::move(rewrite)](Invocation& inv) {
            if (h.host == "bubblewrap") with_bubblewrap(inv);
            rewrite(inv);
        };
        return testing::run_real_cell(
            {h.harness, m_bin, m_version, h.mode, h.role, h.probe, on_host}, m_dir, m_base,
            m_template, *m_runner);
    }

    testing::ScratchDir m_dir;
    std::unique_ptr<ProcessRunner> m_runner = make_system_runner();
    std::string m_bin;
    std::string m_version;
    std::string m_base;
    std::string m_template;
};

TEST_P(HardeningStrip, RemovingItTurnsItsProbeViolated) {
    const auto& h = GetParam();
    Invocation seen;
    const Cell control = run([&](Invocation& inv) { seen = inv; });
    ASSERT_TRUE(control.verdict == Verdict::enforced || control.verdict == Verdict::asked)
        << "as sonata plans it: " << to_string(control.verdict) << ": " << control.evidence.reason;
    Invocation stripped = seen;
    h.strip(stripped);
    ASSERT_TRUE(stripped.argv != seen.argv || stripped.env != seen.env)
        << h.piece << " is not in the invocation any more";
    const Cell without = run(h.strip);
    RecordProperty("stripped", h.piece);
    if (!h.not_needed.empty()) {
        EXPECT_NE(without.verdict, Verdict::violated)
            << h.piece << " was measured not needed (" << h.not_needed << "), but without it "
            << h.probe << " reads violated: " << without.evidence.reason;
        std::cout << "[ not needed ] " << h.harness << " " << h.piece << ": " << h.not_needed
                  << "\n";
        return;
    }
    EXPECT_EQ(without.verdict, Verdict::violated)
        << "without " << h.piece << ", " << h.probe << " reads " << to_string(without.verdict)
        << ": " << without.evidence.reason;
}

INSTANTIATE_TEST_SUITE_P(Pinned, HardeningStrip, ::testing::ValuesIn(hardenings()),
                         [](const auto& param_info) { return param_info.param.name; });

} // namespace
} // namespace sonata
