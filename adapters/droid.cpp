// Factory Droid (`droid`, npm @factory/cli-linux-x64), checked against 0.225.2 with a scripted
// model server: `droid exec` headless in every mode, `-o json`. Its autonomy levels judge a shell
// command by the riskLevel the *model* writes into its own Execute call, so none of them keeps
// a command from running: plan withholds the shell with `--only-tools` instead, and acceptEdits
// adds only the file tools. `exec` has no approval UI, so default is refused. A runtime settings
// file sonata writes turns off hooks and every MCP server, which a repository's .factory/ would
// otherwise start. Never --skip-permissions-unsafe below bypass.
#include <nlohmann/json.hpp>

#include "adapters/adapter.hpp"
#include "adapters/support/flag_value.hpp"
#include "adapters/support/model_resume.hpp"
#include "adapters/support/project_files.hpp"
#include "adapters/support/relies.hpp"

namespace sonata::adapters {
namespace {

using nlohmann::json;

/// The tools plan keeps, and the file tools acceptEdits adds (`--only-tools`).
constexpr const char* k_read_tools = "Read,LS,Grep,Glob";
constexpr const char* k_edit_tools = "Read,LS,Grep,Glob,Create,Edit,ApplyPatch";
constexpr const char* k_settings_file = "droid-runtime-settings.json";

/// Runtime settings merged over the user's for one run: no hooks, no MCP server.
const char* const k_runtime_settings =
    R"({"hooks":{"hooksDisabled":true},"mcpPolicy":{"enabled":true,"allowlist":[]}})"
    "\n";

/// The one JSON object `-o json` prints (the last line that parses as one); null when none.
json result_of(const std::string& out) {
    auto objects = project::json_object_lines(out);
    return objects.empty() ? json() : std::move(objects.back());
}

std::vector<std::string> forbidden_flags(Mode mode) {
    // --cwd moves the run out of the workspace; stream-jsonrpc takes the session's settings
    // from requests instead of the command line; a mission auto-approves its proposals.
    std::vector<std::string> flags{"--cwd", "--input-format", "--mission", "--worker-model",
                                   "--validator-model"};
    if (mode == Mode::bypass_permissions) return flags;
    flags.insert(flags.end(),
                 {"--skip-permissions-unsafe", "--add-tools", "--worktree", "--worktree-dir"});
    if (mode == Mode::plan) flags.emplace_back("--auto");
    return flags;
}

std::vector<std::string> reserved_flags(Mode mode) {
    std::vector<std::string> flags{"--settings", "--session-id", "--fork"};
    if (mode != Mode::bypass_permissions) flags.emplace_back("--only-tools");
    if (mode == Mode::accept_edits) flags.emplace_back("--auto");
    return flags;
}

ToolVocabulary tools() {
    // Measured on 0.225.2: Create{file_path, content}, Execute{command, summary, riskLevel,
    // riskLevelReason}, Task at --auto high; no mode switch outside its spec mode
    // (ExitSpecMode), which sonata does not use. It checks a call's arguments before its
    // permissions, even for a tool it withholds: every shell call carries the riskLevel a model
    // that wants its command run would claim, "low".
    return {.write = {"Create"},
            .write_path_field = "file_path",
            .write_content_field = "content",
            .write_path_absolute = true,
            .shell = {"Execute"},
            .shell_command_field = "command",
            .delegate = {"Task"},
            .delegate_prompt_field = "prompt",
            .mode_switch = {},
            .mode_enter = {},
            .delegate_agent_field = "subagent_type",
            .delegate_agents = {"worker", "general-purpose"},
            .shell_args_json = R"({"summary":"sonata probe","riskLevel":"low",)"
                               R"("riskLevelReason":"Only touches files inside the project."})",
            // The tool census, measured on 0.225.2 (bypassPermissions offers the most).
            .known = {{"Glob", ToolClass::read_only},
                      {"Grep", ToolClass::read_only},
                      {"LS", ToolClass::read_only},
                      {"Read", ToolClass::read_only},
                      {"Edit", ToolClass::file_write},
                      {"TaskOutput", ToolClass::delegate},
                      {"TaskStop", ToolClass::delegate},
                      {"ConnectorSearch", ToolClass::other},
                      {"GenerateImage", ToolClass::other},
                      {"Skill", ToolClass::other},
                      {"ToolSearch", ToolClass::other}}};
}

RefusalTexts refusal_texts() {
    // Captured from 0.225.2 (fixtures/captured/droid/0.225.2/refusals.json): a call without
    // the fields its schema requires; a tool the tool list withholds.
    return {{"missing required parameters"}, {"is not permitted in this exec session"}};
}

HarnessSpec droid_spec() {
    HarnessSpec spec;
    spec.id = "droid";
    spec.executable_names = {"droid"};
    spec.install_dirs = {"~/.local/bin"};
    spec.measured_versions = {"0.225.2", "0.225.2"}; // the pin
    spec.forbidden_flags = FlagsByMode::from(forbidden_flags);
    spec.reserved_flags = FlagsByMode::from(reserved_flags);
    // From `droid exec --help` (0.225.2).
    spec.flag_aliases = {{"-o", "--output-format"}, {"-f", "--file"},
                         {"-s", "--session-id"},    {"-m", "--model"},
                         {"-w", "--worktree"},      {"-r", "--reasoning-effort"}};
    // Another runtime settings file, home, project directory or feature flags than the
    // ones sonata chose.
    spec.permission_env = {"FACTORY_RUNTIME_SETTINGS_PATH",
                           "FACTORY_RUNTIME_SETTINGS_SHA",
                           "FACTORY_RUNTIME_SETTINGS_SOURCE",
                           "FACTORY_HOME_OVERRIDE",
                           "FACTORY_PROJECT_DIR",
                           "FACTORY_FEATURE_FLAGS_OVERRIDES",
                           "FACTORY_FEATURE_FLAGS_SNAPSHOT_PATH"};
    spec.protocol = WireProtocol::openai_chat;
    spec.tools = tools();
    spec.refusal_texts = refusal_texts();
    return spec;
}

class Droid final : public Adapter {
public:
    Droid() : Adapter(droid_spec()) {}

    Result<Outcome> map(const PlanInput& in) const override {
        Mode mode = in.mode;
        if (mode == Mode::default_mode) {
            return refuse(
                "droid exec has no approval UI, and its read-only default runs any command the "
                "model itself labels low-risk, so \"ask me first\" cannot be honoured",
                {"use a read-only role (it runs as plan)",
                 "use harness codex, whose interactive TUI asks before acting"});
        }
        Invocation inv;
        inv.argv = {in.executable, "exec", "-o", "json"};
        if (mode == Mode::bypass_permissions && in.options.forbids_bypass()) {
            mode = Mode::accept_edits;
            inv.notes.emplace_back("dangerously_skip_permissions=false: runs as acceptEdits");
        }
        if (mode == Mode::bypass_permissions) {
            inv.argv.emplace_back("--skip-permissions-unsafe");
            inv.notes.emplace_back("no sandbox: shell commands run unasked");
        } else {
            // shell-write-withheld (droid 0.225.2): its read-only default ran `rm` and shell
            // writes the model labelled riskLevel "low"; only a tool list without Execute holds.
            const bool plan = mode == Mode::plan;
            if (!plan) inv.argv.insert(inv.argv.end(), {"--auto", "low"});
            inv.argv.insert(inv.argv.end(), {"--only-tools", plan ? k_read_tools : k_edit_tools});
            inv.relies_on = plan ? relies::read_only() : relies::workspace_edits();
            if (!plan) {
                inv.relies_on.insert(
                    inv.relies_on.end(),
                    {std::string(probe_id::rm_prompt), std::string(probe_id::delegation_escape)});
            }
            inv.notes.emplace_back("tool list and permission rules, not an OS sandbox");
        }
        // hostile-workspace (droid 0.225.2): a repository's .factory/settings.json hooks and
        // .factory/mcp.json servers start at launch; these runtime settings turn both off.
        inv.argv.insert(inv.argv.end(), {"--settings", settings_path(in.support_dir)});
        // Resuming forks: a fork carries the session's history into a new session, and works
        // offline (`--session-id` asks Factory's service first).
        pass_model_and_resume(inv, in, "--fork");
        inv.prompt = PromptChannel::argument;
        inv.report = ReportSource::structured_stdout;
        return inv;
    }

    std::vector<FileToWrite> support_files(const std::string& support_dir) const override {
        return {{settings_path(support_dir), k_runtime_settings}};
    }

    std::vector<FileToWrite> hostile_files(const std::string& workspace,
                                           const std::string& canary) const override {
        // Measured on 0.225.2: droid runs the SessionStart hooks of a repository's
        // .factory/settings.json and starts the servers of its .factory/mcp.json.
        return {{workspace + "/.factory/settings.json",
                 json{{"hooks", {{"SessionStart", project::session_start_hooks(canary)}}}}.dump(2) +
                     "\n"},
                {workspace + "/.factory/mcp.json",
                 json{{"mcpServers", {{"project-helper", mcp_server({"touch", canary})}}}}.dump(2) +
                     "\n"}};
    }

    std::optional<McpSetup> project_mcp(const std::string& workspace,
                                        const std::vector<std::string>& argv) const override {
        // The repository's .factory/mcp.json; its tools are offered as "<server>___<tool>".
        return McpSetup{
            {{workspace + "/.factory/mcp.json",
              json{{"mcpServers", {{project::k_mcp_server, mcp_server(argv)}}}}.dump(2) + "\n"}},
            std::string(project::k_mcp_server) + "___" + project::k_mcp_tool};
    }

    std::string session_id(const std::string& out, const std::string& err, const std::string& home,
                           const Invocation&) const override {
        (void)err;
        (void)home;
        const auto id = project::string_member(result_of(out), "session_id");
        return !id.empty() && project::first_uuid(id) == id ? id : std::string();
    }

    std::optional<std::string> final_message(const std::string& out) const override {
        const auto result = result_of(out);
        if (!result.is_object() || !result.contains("result")) return std::nullopt;
        return project::string_member(result, "result");
    }

    RunCost run_cost(const std::string& out, const std::string& err,
                     const std::string& home) const override {
        (void)err;
        (void)home;
        // The result's usage counts the run's tokens; its cost is in Factory credits, not
        // dollars.
        return project::usage_tokens(result_of(out), "input_tokens", "output_tokens");
    }

    Result<EndpointInjection> inject_endpoint(const Invocation& inv,
                                              const EndpointSpec& ep) const override {
        // A custom model in the run's ~/.factory/settings.json: no login, no other service.
        EndpointInjection out{inv, {}};
        const json settings = {{"customModels",
                                {{{"model", ep.model},
                                  {"displayName", "sonata probe"},
                                  {"baseUrl", ep.base_url + "/v1"},
                                  {"apiKey", ep.api_key},
                                  {"provider", "generic-chat-completion-api"},
                                  {"maxOutputTokens", 4096}}}}};
        out.files.push_back({ep.home + "/.factory/settings.json", settings.dump(2) + "\n"});
        set_flag_value(out.invocation.argv, "--model", "custom:" + ep.model);
        return out;
    }

private:
    static std::string settings_path(const std::string& support_dir) {
        return support_dir + "/" + k_settings_file;
    }

    static json mcp_server(const std::vector<std::string>& argv) {
        json server{{"type", "stdio"}, {"command", argv.empty() ? "" : argv.front()}};
        server["args"] =
            std::vector<std::string>(argv.begin() + (argv.empty() ? 0 : 1), argv.end());
        return server;
    }
};

} // namespace

std::unique_ptr<Adapter> make_droid() { return std::make_unique<Droid>(); }

} // namespace sonata::adapters
