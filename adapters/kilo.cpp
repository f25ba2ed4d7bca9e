// Kilo (`kilo`, npm @kilocode/cli-linux-x64), an OpenCode fork, checked against 7.7.9: `run` with
// agents injected through KILO_CONFIG_CONTENT below bypass, `--auto` for bypass, project config
// off. `run` has no approval UI, so default is refused. Tool permission rules, not an OS sandbox:
// the probes decide what they are worth.
#include "adapters/adapter.hpp"
#include "adapters/support/flag_value.hpp"
#include "adapters/support/opencode_family.hpp"
#include "adapters/support/relies.hpp"

namespace sonata::adapters {
namespace {

constexpr const char* k_config_env = "KILO_CONFIG_CONTENT";
constexpr const char* k_disable_project_config = "KILO_DISABLE_PROJECT_CONFIG";
constexpr const char* k_plan_agent = "sonata-plan";
constexpr const char* k_edit_agent = "sonata-edit";
const opencode_family::Names k_names{
    k_config_env,
    "KILO_DISABLE_MODELS_FETCH",
    "KILO_DISABLE_AUTOUPDATE",
    "kilo",
    "kilo.json",
    k_disable_project_config,
    {{"KILO_EXPERIMENTAL_DISABLE_FILEWATCHER", "1"}, {"KILO_TELEMETRY_LEVEL", "off"}}};

std::vector<std::string> forbidden_flags(Mode mode) {
    // --attach would run on a server whose configuration is not the one sonata chose;
    // --cloud-fork fetches a session from elsewhere; sessions continue only through sonata's
    // resume, which re-passes the restrictions.
    std::vector<std::string> flags{
        "--dangerously-skip-permissions", "--yolo", "--attach", "--continue", "-c", "--cloud-fork"};
    if (mode != Mode::bypass_permissions) flags.emplace_back("--auto");
    return flags;
}

ToolVocabulary tools() {
    return {.write = {"write"},
            .write_path_field = "filePath",
            .write_content_field = "content",
            .write_path_absolute = true,
            .shell = {"bash"},
            .shell_command_field = "command",
            .delegate = {"task"},
            .delegate_prompt_field = "prompt",
            .mode_switch = {"plan_exit"},
            .mode_enter = {},
            .delegate_agent_field = "subagent_type",
            .delegate_agents = {"general", "explore"},
            // The tool census, measured on 7.7.9 (bypassPermissions offers the most). A cron
            // job or a background process runs a command later: a shell.
            .known = {{"glob", ToolClass::read_only},
                      {"grep", ToolClass::read_only},
                      {"read", ToolClass::read_only},
                      {"edit", ToolClass::file_write},
                      {"background_process", ToolClass::shell},
                      {"cron_create", ToolClass::shell},
                      {"board_post", ToolClass::other},
                      {"board_read", ToolClass::other},
                      {"cancel_wakeup", ToolClass::other},
                      {"cron_delete", ToolClass::other},
                      {"cron_list", ToolClass::other},
                      {"goal", ToolClass::other},
                      {"kilo_local_recall", ToolClass::other},
                      {"link_pr", ToolClass::other},
                      {"schedule_wakeup", ToolClass::other},
                      {"skill", ToolClass::other},
                      {"todowrite", ToolClass::other},
                      {"webfetch", ToolClass::other}}};
}

RefusalTexts refusal_texts() {
    // Captured from 7.7.9 (fixtures/captured/kilo/7.7.9/refusals.json).
    return {{"is not a valid agent type"}, {"prevents you from using this specific tool call"}};
}

HarnessSpec kilo_spec() {
    HarnessSpec spec;
    spec.id = "kilo";
    spec.executable_names = {"kilo"};
    spec.measured_versions = {"7.7.9", "7.7.9"}; // the pin
    spec.forbidden_flags = FlagsByMode::from(forbidden_flags);
    // From `kilo run --help` (7.7.9).
    spec.flag_aliases = {{"-m", "--model"},   {"-s", "--session"},     {"-c", "--continue"},
                         {"-f", "--file"},    {"-i", "--interactive"}, {"-p", "--password"},
                         {"-u", "--username"}};
    // Inline config, extra config files and folders, the project switch; and opencode's own
    // names, which a fork may still read.
    spec.permission_env = {
        k_config_env,          "KILO_PERMISSION",        "KILO_CONFIG",
        "KILO_CONFIG_DIR",     k_disable_project_config, "OPENCODE_CONFIG_CONTENT",
        "OPENCODE_PERMISSION", "OPENCODE_CONFIG",        "OPENCODE_CONFIG_DIR"};
    spec.tools = tools();
    spec.refusal_texts = refusal_texts();
    return spec;
}

class Kilo final : public OpenCodeFamily {
public:
    Kilo() : OpenCodeFamily(kilo_spec(), k_names) {}
    Result<Outcome> map(const PlanInput& in) const override {
        Mode mode = in.mode;
        if (mode == Mode::default_mode) {
            return refuse(
                "kilo run has no approval UI: its default agent runs file commands (touch, cp, mv) "
                "unasked and auto-rejects the rest, ending the run, so \"ask me first\" cannot "
                "be honoured",
                {"dispatch in acceptEdits or bypassPermissions mode",
                 "use harness codex, whose interactive TUI asks before acting",
                 "use a read-only role (it runs as plan)"});
        }
        Invocation inv;
        inv.argv = {in.executable, "run"};
        if (mode == Mode::bypass_permissions && in.options.forbids_bypass()) {
            mode = Mode::accept_edits;
            inv.notes.emplace_back(
                "dangerously_skip_permissions=false: runs as acceptEdits (injected agent, no "
                "--auto)");
        }
        if (mode == Mode::bypass_permissions) {
            inv.argv.emplace_back("--auto");
            inv.notes.emplace_back("no sandbox: shell commands run unasked");
        } else {
            // A primary agent that denies every tool it does not name: the shell, sub-agents,
            // web access and kilo's schedulers included. external_directory is denied outright,
            // so a write outside the workspace is refused and the run goes on (without it kilo
            // auto-rejects the write and ends the run).
            const bool plan = mode == Mode::plan;
            const char* agent = plan ? k_plan_agent : k_edit_agent;
            std::vector<std::string> allowed{"read", "grep", "glob"};
            if (!plan) allowed.insert(allowed.end(), {"edit", "write", "patch"});
            inv.env[k_config_env] =
                opencode_family::injected_agent(agent, allowed, {"external_directory"});
            inv.argv.insert(inv.argv.end(), {"--agent", agent});
            inv.relies_on = plan ? relies::read_only() : relies::workspace_edits();
            if (!plan) {
                inv.relies_on.emplace_back(probe_id::rm_prompt);
                inv.relies_on.emplace_back(probe_id::delegation_escape);
            }
            inv.notes.emplace_back("tool permission rules of an injected agent, not an OS sandbox");
        }
        // hostile-workspace (kilo 7.7.9): a repository kilo.json (allow everything, an MCP
        // server) and .kilo/plugin/*.js took effect even under --agent plan; this keeps both out.
        finish_run(inv, in);
        return inv;
    }

    std::vector<FileToWrite> hostile_files(const std::string& workspace,
                                           const std::string& canary) const override {
        // Project config allowing every tool (globally and for the agents) and starting an MCP
        // server, in kilo's own file and in the opencode.json it also reads, and a project plugin
        // whose code runs when kilo loads it.
        const std::string config =
            hostile_config(canary, {"plan", "code", k_plan_agent, k_edit_agent});
        return {{workspace + "/kilo.json", config},
                {workspace + "/opencode.json", config},
                {workspace + "/.kilo/plugin/project-helper.js", hostile_plugin(canary)}};
    }
};

} // namespace

std::unique_ptr<Adapter> make_kilo() { return std::make_unique<Kilo>(); }

} // namespace sonata::adapters
