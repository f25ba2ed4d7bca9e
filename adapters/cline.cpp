// Cline (`cline`, the npm package: a launcher for its native binary), checked against 3.0.65 with a
// scripted model server: headless `cline --json "task"` (a prompt argument and no terminal make one
// run that exits), plan mode with `--plan`, act mode otherwise. Every run uses a data directory of
// sonata's (`--data-dir`): without it the first run starts a detached hub daemon that outlives it
// and serves every later run. Headless approval cannot ask: with `--auto-approve false` every tool
// is refused, reads too, so default is refused; act mode writes anywhere, absolute paths outside
// the workspace included. Plan mode's guard on the shell is a list of command forms, not a sandbox
// (`bash -c 'rm …'` ran), so a read-only run has no shell at all.
#include <nlohmann/json.hpp>

#include "adapters/adapter.hpp"
#include "adapters/support/flag_value.hpp"
#include "adapters/support/project_files.hpp"
#include "adapters/support/relies.hpp"

namespace sonata::adapters {
namespace {

using nlohmann::json;

constexpr const char* k_data_dir_flag = "--data-dir";
constexpr const char* k_data_dir = "cline-data";
/// Moves the global settings file out of the data directory (honoured beside --data-dir, 3.0.65).
constexpr const char* k_settings_env = "CLINE_GLOBAL_SETTINGS_PATH";

/// Which global settings a run gets: `closed` offers no shell and no sub-agent (their tools in
/// `disabledTools`), `open` withholds nothing. Both approve tools unasked and turn telemetry and
/// the update check off.
enum class Profile { closed, open };

std::string settings_path(const std::string& support_dir, Profile profile) {
    return support_dir + "/cline-" + (profile == Profile::closed ? "closed" : "open") +
           "-settings.json";
}

/// Every tool that runs a command or starts another agent (a sub-agent gets the editor and the
/// shell whatever its caller's mode; measured on 3.0.65).
const std::vector<std::string> k_shell_and_agents{"run_commands",
                                                  "spawn_agent",
                                                  "team_spawn_teammate",
                                                  "team_shutdown_teammate",
                                                  "team_status",
                                                  "team_task",
                                                  "team_run_task",
                                                  "team_cancel_run",
                                                  "team_list_runs",
                                                  "team_await_runs",
                                                  "team_send_message",
                                                  "team_broadcast",
                                                  "team_read_mailbox",
                                                  "team_mission_log",
                                                  "team_cleanup",
                                                  "team_create_outcome",
                                                  "team_attach_outcome_fragment",
                                                  "team_review_outcome_fragment",
                                                  "team_finalize_outcome",
                                                  "team_list_outcomes"};

std::string global_settings(Profile profile) {
    // Headless, nobody can answer an approval: tools run unasked, and which tools exist decides.
    json settings{
        {"telemetryOptOut", true}, {"autoUpdateEnabled", false}, {"toolAutoApprove", true}};
    if (profile == Profile::closed) settings["disabledTools"] = k_shell_and_agents;
    return settings.dump(2) + "\n";
}

std::vector<std::string> forbidden_flags(Mode mode) {
    // The background hub runs a session with every tool approved (--zen); the TUI and ACP modes
    // are interactive; another config, hooks or working directory is not the one sonata chose;
    // a resumed session runs only in the TUI.
    std::vector<std::string> flags{"--zen", "--tui",    "--acp",       "--id",    "--config",
                                   "--cwd", "--kanban", "--hooks-dir", "--update"};
    if (mode != Mode::bypass_permissions) flags.emplace_back("--worktree");
    return flags;
}

std::vector<std::string> reserved_flags(Mode) {
    return {k_data_dir_flag, "--auto-approve", "--plan", "--json"};
}

ToolVocabulary tools() {
    // Measured on 3.0.65: editor{path (absolute), new_text, old_text, insert_line},
    // run_commands{commands: [..]}, spawn_agent{systemPrompt, task}; switch_to_act_mode only in
    // its TUI's plan mode.
    ToolVocabulary v{.write = {"editor"},
                     .write_path_field = "path",
                     .write_content_field = "new_text",
                     .write_path_absolute = true,
                     .shell = {"run_commands"},
                     .shell_command_field = "commands",
                     .delegate = {"spawn_agent"},
                     .delegate_prompt_field = "task",
                     .mode_switch = {"switch_to_act_mode"},
                     .mode_enter = {}};
    v.known = {{"read_files", ToolClass::read_only},
               {"search_codebase", ToolClass::read_only},
               {"fetch_web_content", ToolClass::other},
               {"ask_question", ToolClass::other},
               {"skills", ToolClass::other}};
    for (const auto& tool : k_shell_and_agents) {
        if (tool.rfind("team_", 0) == 0) v.known.push_back({tool, ToolClass::delegate});
    }
    return v;
}

RefusalTexts refusal_texts() {
    // Captured from 3.0.65 (fixtures/captured/cline/3.0.65/refusals.json).
    return {{"Invalid input: expected"},
            {"requires approval in a TTY session", "Tool approval requires an interactive session",
             "file modifications are blocked in plan mode"}};
}

HarnessSpec cline_spec() {
    HarnessSpec spec;
    spec.id = "cline";
    spec.executable_names = {"cline"};
    spec.install_dirs = usual_install_dirs({});
    spec.measured_versions = {"3.0.65", "3.0.65"}; // the pin
    spec.forbidden_flags = FlagsByMode::from(forbidden_flags);
    spec.reserved_flags = FlagsByMode::from(reserved_flags);
    // From `cline --help` (3.0.65).
    spec.flag_aliases = {{"-p", "--plan"},     {"-c", "--cwd"}, {"-i", "--tui"},
                         {"-P", "--provider"}, {"-k", "--key"}, {"-m", "--model"},
                         {"-s", "--system"},   {"-z", "--zen"}, {"-t", "--timeout"},
                         {"-v", "--verbose"}};
    // Another data directory, provider, settings or MCP servers file, rules or binary than the
    // ones sonata chose.
    spec.permission_env = {"CLINE_PROVIDER_SETTINGS_PATH",
                           "CLINE_MCP_SETTINGS_PATH",
                           k_settings_env,
                           "CLINE_DATA_DIR",
                           "CLINE_DIR",
                           "CLINE_SANDBOX",
                           "CLINE_SANDBOX_DATA_DIR",
                           "CLINE_RULES",
                           "CLINE_BIN_PATH"};
    spec.protocol = WireProtocol::openai_chat;
    spec.tools = tools();
    spec.refusal_texts = refusal_texts();
    return spec;
}

/// The `run_result` line `--json` ends with; null when there is none.
json run_result(const std::string& out) {
    for (auto& object : project::json_object_lines(out)) {
        if (object.is_object() && object.value("type", "") == "run_result") return object;
    }
    return nullptr;
}

class Cline final : public Adapter {
public:
    Cline() : Adapter(cline_spec()) {}

    Result<Outcome> map(const PlanInput& in) const override {
        if (in.mode == Mode::default_mode) {
            return refuse("cline's headless run cannot ask: with auto-approval off it refuses "
                          "every tool, reads included, and with it on it approves every one, so "
                          "\"ask me first\" cannot be honoured",
                          {"use a read-only role (it runs as plan)",
                           "use harness codex, whose interactive TUI asks before acting"});
        }
        if (!in.resume_session.empty()) {
            return refuse("cline resumes a session only in its interactive terminal UI",
                          {"dispatch a new run with the earlier report in its task"});
        }
        Invocation inv;
        inv.argv = {in.executable, "--json"};
        Mode mode = in.mode;
        if (mode == Mode::bypass_permissions && in.options.forbids_bypass()) {
            mode = Mode::accept_edits;
            inv.notes.emplace_back("dangerously_skip_permissions=false: runs as acceptEdits");
        }
        Profile profile = Profile::closed;
        if (mode == Mode::plan) {
            inv.argv.emplace_back("--plan");
            inv.relies_on = relies::read_only();
        } else if (mode == Mode::accept_edits) {
            inv.relies_on = relies::workspace_edits();
            inv.relies_on.insert(inv.relies_on.end(), {std::string(probe_id::rm_prompt),
                                                       std::string(probe_id::delegation_escape)});
        } else {
            profile = Profile::open;
            inv.notes.emplace_back("no sandbox: shell commands run unasked");
        }
        // shell-write-withheld, delegation-escape (cline 3.0.65): plan mode's shell guard refuses
        // listed command forms only, and a sub-agent gets the editor and the shell whatever its
        // caller's mode; the closed settings offer neither.
        inv.env[k_settings_env] = settings_path(in.support_dir, profile);
        // Sessions, databases and logs in a directory of sonata's: no hub daemon, nothing left
        // running (without it the first run starts one that serves every later run).
        const std::string data_dir = in.support_dir + "/" + k_data_dir;
        inv.argv.insert(inv.argv.end(), {k_data_dir_flag, data_dir});
        inv.notes.push_back("cline reads its provider from " + data_dir +
                            "/settings/providers.json: configure it there once with `cline auth "
                            "PROVIDER -k KEY -m MODEL --data-dir " +
                            data_dir + "`");
        if (!in.model.empty()) inv.argv.insert(inv.argv.end(), {"--model", in.model});
        inv.env["CLINE_NO_AUTO_UPDATE"] = "1";
        inv.prompt = PromptChannel::argument;
        inv.report = ReportSource::structured_stdout;
        return inv;
    }

    std::vector<FileToWrite> support_files(const std::string& support_dir) const override {
        return {{settings_path(support_dir, Profile::closed), global_settings(Profile::closed)},
                {settings_path(support_dir, Profile::open), global_settings(Profile::open)}};
    }

    std::vector<FileToWrite> hostile_files(const std::string& workspace,
                                           const std::string& canary) const override {
        // Measured on 3.0.65: a repository's .cline/plugins/*.js is imported at start-up, in
        // every mode, with no trust question; its executable hooks (.clinerules/hooks/<Event>,
        // .cline/hooks/<Event>) run too. The hooks are planted for the gate's look at a
        // workspace, not executable here: the plugin is what the probe sees run.
        const std::string hook = "#!/bin/sh\ntouch " + json(canary).dump() + "\n";
        return {{workspace + "/.cline/plugins/project-helper.js",
                 "require(\"node:fs\").writeFileSync(" + json(canary).dump() +
                     ", \"cline project plugin loaded\\n\");\nmodule.exports = {};\n"},
                {workspace + "/.clinerules/hooks/TaskStart", hook},
                {workspace + "/.cline/hooks/TaskStart", hook}};
    }

    std::optional<std::string> final_message(const std::string& out) const override {
        // A run that stopped at its mistake limit exits 0 too: only a completed one has a report.
        const auto result = run_result(out);
        if (!result.is_object() || result.value("finishReason", "") != "completed")
            return std::nullopt;
        return project::string_member(result, "text");
    }

    RunCost run_cost(const std::string& out, const std::string& err,
                     const std::string& home) const override {
        (void)err;
        (void)home;
        // Its totalCost is 0 for a model it has no price for: tokens only.
        return project::usage_tokens(run_result(out), "inputTokens", "outputTokens");
    }

    Result<EndpointInjection> inject_endpoint(const Invocation& inv,
                                              const EndpointSpec& ep) const override {
        // The run's own data directory, under its HOME, holding an OpenAI-compatible provider
        // (the full form: cline replaces a shorter file with its own cloud provider, silently).
        EndpointInjection out{inv, {}};
        const std::string data = ep.home + "/" + k_data_dir;
        const json provider{{"provider", "openai-compatible"},
                            {"apiKey", ep.api_key},
                            {"model", ep.model},
                            {"baseUrl", ep.base_url + "/v1"}};
        const json providers{{"version", 1},
                             {"lastUsedProvider", "openai-compatible"},
                             {"modes", json::object()},
                             {"providers",
                              {{"openai-compatible",
                                {{"settings", provider},
                                 {"updatedAt", "2026-01-01T00:00:00.000Z"},
                                 {"tokenSource", "manual"}}}}}};
        out.files.push_back({data + "/settings/providers.json", providers.dump(2) + "\n"});
        set_flag_value(out.invocation.argv, k_data_dir_flag, data);
        return out;
    }
};

} // namespace

std::unique_ptr<Adapter> make_cline() { return std::make_unique<Cline>(); }

} // namespace sonata::adapters
