// OpenCode (`opencode`; 2.x also installs it as `opencode2`), two lines picked by the detected
// version, each pinned and probed: 1.18 (1.18.33) selects its built-in plan/build agents; 2.x
// (2.1.2) runs standalone on a database of sonata's with an injected deny-by-default agent. `run`
// has no approval UI, so default is refused. Tool permission rules, not an OS sandbox: the probes
// decide what they are worth.
#include <algorithm>
#include <cctype>
#include <optional>

#include "adapters/adapter.hpp"
#include "adapters/support/flag_value.hpp"
#include "adapters/support/opencode_family.hpp"
#include "adapters/support/opencode_v2.hpp"
#include "adapters/support/relies.hpp"

namespace sonata::adapters {
namespace {

constexpr const char* k_config_env = "OPENCODE_CONFIG_CONTENT";
constexpr const char* k_disable_project_config = "OPENCODE_DISABLE_PROJECT_CONFIG";
constexpr const char* k_plan_agent = "sonata-plan";
constexpr const char* k_edit_agent = "sonata-edit";
const opencode_family::Names k_names{
    k_config_env,
    "OPENCODE_DISABLE_MODELS_FETCH",
    "OPENCODE_DISABLE_AUTOUPDATE",
    "opencode",
    "opencode.json",
    k_disable_project_config,
    {{"OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER", "1"}, {"OPENCODE_DISABLE_FILEWATCHER", "1"}}};
/// 2.x keeps sessions, credentials and the user's saved "always" grants in one database; a run of
/// sonata's uses its own beside it (a name relative to opencode's data directory), so nothing of
/// the user's reaches the run and nothing of the run's lands in the user's.
constexpr const char* k_db_env = "OPENCODE_DB";
constexpr const char* k_sonata_db = "sonata-dispatch.db";

/// Which facts apply to the installed opencode.
enum class Line {
    v1_18, ///< 1.x: `run --agent plan|build [--auto]`.
    v2,    ///< 2.x: `run --standalone`, injected agents, `--auto` for bypass.
};

/// The leading number of a version string, when there is one.
std::optional<int> major_of(const std::string& version) {
    if (version.empty() || !std::isdigit(static_cast<unsigned char>(version.front())))
        return std::nullopt;
    int major = 0;
    for (const char c : version) {
        if (!std::isdigit(static_cast<unsigned char>(c))) break;
        major = major * 10 + (c - '0');
        if (major > 1000) return std::nullopt;
    }
    return major;
}

/// The line for `version`; a note when the choice is a fallback.
Line line_for(const std::string& version, std::vector<std::string>& notes) {
    const auto major = major_of(version);
    if (major && *major >= 2) return Line::v2;
    if (!major)
        notes.push_back("opencode version unknown: using the 1.18 mapping");
    else if (*major < 1)
        notes.push_back("opencode " + version + " predates 1.x: using the 1.18 mapping");
    return Line::v1_18;
}

/// The line for `version`, where no note is wanted.
Line line_of(const std::string& version) {
    std::vector<std::string> notes;
    return line_for(version, notes);
}

std::vector<std::string> with(std::vector<std::string> base,
                              std::initializer_list<std::string_view> more) {
    for (auto id : more) {
        if (std::find(base.begin(), base.end(), id) == base.end()) base.emplace_back(id);
    }
    return base;
}

std::vector<std::string> forbidden_flags(Mode mode) {
    // --attach would run on a server whose configuration is not the one sonata chose; sessions
    // continue only through sonata's resume, which re-passes the restrictions.
    std::vector<std::string> flags{
        "--dangerously-skip-permissions", "--yolo", "--attach", "--server", "--continue", "-c"};
    if (mode == Mode::plan || mode == Mode::default_mode) flags.emplace_back("--auto");
    return flags;
}

/// The tools of both lines: 1.x's names first, then 2.x's (`shell`, `subagent`), for classifying
/// what either offers; each line's scripted calls use its own (tools_v2).
ToolVocabulary tools() {
    ToolVocabulary v{
        {"write"},       "filePath",           "content", true,          {"bash", "shell"},
        "command",       {"task", "subagent"}, "prompt",  {"plan_exit"}, {},
        "subagent_type", {"general"}};
    // The tool census, measured on 1.18.33 and 2.1.2. 2.x's `execute` runs JavaScript that calls
    // opencode's own tools (worktrees, sessions): code, so a shell.
    v.known = {{"glob", ToolClass::read_only},   {"grep", ToolClass::read_only},
               {"read", ToolClass::read_only},   {"edit", ToolClass::file_write},
               {"patch", ToolClass::file_write}, {"execute", ToolClass::shell},
               {"skill", ToolClass::other},      {"todowrite", ToolClass::other},
               {"webfetch", ToolClass::other},   {"websearch", ToolClass::other},
               {"question", ToolClass::other}};
    v.read = {"read"};
    v.read_path_field = "filePath";
    v.fetch = {"webfetch"};
    v.fetch_url_field = "url";
    return v;
}

/// 2.x's own names (measured on 2.1.2): its file tools take `path`, its sub-agent tool `agent`,
/// and it has no tool that leaves a plan.
ToolVocabulary tools_v2() {
    ToolVocabulary v = tools();
    v.write_path_field = "path";
    v.read_path_field = "path";
    v.shell = {"shell"};
    v.delegate = {"subagent"};
    v.mode_switch = {};
    v.delegate_agent_field = "agent";
    return v;
}

RefusalTexts refusal_texts() {
    // Captured from 1.18.33 and 2.1.2 (fixtures/captured/opencode/<version>/refusals.json).
    return {{"is not a valid agent type", "was called with invalid arguments", "SchemaError(",
             "Unknown agent: ", "Invalid arguments for tool"},
            {"prevents you from using this specific tool call",
             "rejected permission to use this specific tool call", "\"permission.rejected\""}};
}

HarnessSpec opencode_spec() {
    HarnessSpec spec;
    spec.id = "opencode";
    spec.executable_names = {"opencode", "opencode2"};
    spec.install_dirs = usual_install_dirs({"~/.opencode/bin"});
    spec.measured_versions = {"1.18.33", "2.1.2"}; // the pins, one per line
    spec.forbidden_flags = FlagsByMode::from(forbidden_flags);
    // From `opencode run --help` (1.18.33).
    spec.flag_aliases = {{"-m", "--model"},
                         {"-s", "--session"},
                         {"-c", "--continue"},
                         {"-f", "--file"},
                         {"-i", "--interactive"}};
    // Inline config, extra config files and folders, and the switch that skips project config.
    spec.permission_env = {k_config_env,          "OPENCODE_PERMISSION",    "OPENCODE_CONFIG",
                           "OPENCODE_CONFIG_DIR", k_disable_project_config, k_db_env};
    spec.tools = tools();
    spec.refusal_texts = refusal_texts();
    return spec;
}

class OpenCode final : public OpenCodeFamily {
public:
    OpenCode() : OpenCodeFamily(opencode_spec(), k_names) {}
    Result<Outcome> map(const PlanInput& in) const override {
        if (in.mode == Mode::default_mode) {
            return refuse(
                "opencode run has no approval UI: with permissions unset it runs commands "
                "unasked, and with \"ask\" rules it auto-rejects them, so \"ask me first\" "
                "cannot be honoured",
                {"dispatch in acceptEdits or bypassPermissions mode",
                 "use harness codex, whose interactive TUI asks before acting",
                 "use a read-only role (it runs as plan)"});
        }
        Invocation inv;
        const Line line = line_for(in.version, inv.notes);
        inv.argv = {in.executable, "run"};
        if (line == Line::v1_18) {
            map_v1_18(in, inv);
        } else {
            map_v2(in, inv);
        }
        // hostile-workspace (opencode 1.18.33): a repository opencode.json re-allowed write and
        // bash for the plan agent (merged under the injected map), so project config is not
        // loaded. Still open: .opencode/plugin/*.js runs at start-up even so (and with --pure).
        // JSON events carry the session id (text output names none, and the log is shared by
        // every run on the machine), the final text and the tokens.
        finish_run(inv, in,
                   line == Line::v2 ? opencode_family::RunShape::v2
                                    : opencode_family::RunShape::v1);
        return inv;
    }

    /// 2.x holds the parent's rules in its injected agent (opencode_v2::carry_rule); 1.x's
    /// permission map is not measured for them.
    RuleCarriage carry_rule(const PermissionRule& rule, RulePaths paths,
                            Invocation& inv) const override {
        const bool v2 =
            std::find(inv.argv.begin(), inv.argv.end(), "--standalone") != inv.argv.end();
        if (!v2) return {RuleCarriage::How::cannot, "opencode 1.x is not measured holding it"};
        const auto config = inv.env.find(k_config_env);
        if (config == inv.env.end())
            return {RuleCarriage::How::cannot, "this mapping injects no agent to hold it"};
        return opencode_v2::carry_rule(rule, paths, config->second);
    }

    ToolVocabulary tools_at(const std::string& version) const override {
        return line_of(version) == Line::v2 ? tools_v2() : tools();
    }

    /// 2.x moved `export` under `session`, and reads sonata's database on its own server too.
    std::vector<std::string> completion_export_args(const std::string& session,
                                                    const std::string& version) const override {
        if (line_of(version) == Line::v2) return {"session", "export", "--standalone", session};
        return OpenCodeFamily::completion_export_args(session, version);
    }

    /// 2.x's export is its own document (flat messages, the session's outcome).
    std::string check_completion(const std::string& exported, const std::string& session,
                                 const std::string& task,
                                 const std::string& version) const override {
        if (line_of(version) == Line::v2) return opencode_v2::check_export(exported, session, task);
        return OpenCodeFamily::check_completion(exported, session, task, version);
    }

    std::vector<FileToWrite> hostile_files(const std::string& workspace,
                                           const std::string& canary) const override {
        // Project config allowing every tool (globally and for the built-in agents) and starting
        // an MCP server, and a project plugin whose code runs when opencode loads it.
        return {{workspace + "/opencode.json", hostile_config(canary, {"plan", "build"})},
                {workspace + "/.opencode/plugin/project-helper.js", hostile_plugin(canary)}};
    }

private:
    /// 1.18: the built-in agents. plan withholds edits by its own rules; build with --auto runs
    /// every tool unasked, the shell included, with no sandbox.
    static void map_v1_18(const PlanInput& in, Invocation& inv) {
        if (in.mode == Mode::plan) {
            // shell-write-withheld (opencode 1.18.33): the built-in plan agent denies only edits,
            // so bash wrote and removed files; this permission map denies everything else.
            inv.env[k_config_env] = R"({"agent":{"plan":{"permission":{"*":"deny","read":"allow",)"
                                    R"("grep":"allow","glob":"allow"}}}})";
            inv.argv.insert(inv.argv.end(), {"--agent", "plan"});
            inv.relies_on = relies::read_only();
            return;
        }
        inv.argv.insert(inv.argv.end(), {"--agent", "build"});
        // outside-workspace-write (opencode 1.18.33): --auto approves external_directory, so
        // acceptEdits wrote into HOME and the parent directory; without it opencode auto-rejects
        // those and keeps workspace edits unasked. Only bypass keeps --auto.
        if (in.mode == Mode::accept_edits) {
            inv.notes.push_back(
                "writes outside the workspace are auto-rejected, and the run ends there");
        } else if (in.options.forbids_bypass()) {
            inv.notes.push_back(
                "dangerously_skip_permissions=false: no --auto; actions that would be "
                "asked are auto-rejected");
        } else {
            // bypass (opencode 1.18.33): --auto approves writes outside the workspace too, so
            // outside-workspace-write is violated by design here; like every bypass tier it
            // relies on nothing, since the parent allows everything.
            inv.argv.emplace_back("--auto");
            inv.notes.push_back("no sandbox: shell commands run unasked");
            return;
        }
        inv.relies_on = relies::workspace_edits();
        inv.notes.push_back("no sandbox: shell commands run unasked");
    }

    /// 2.x: its own server (--standalone: without it every run goes through one shared service
    /// per user, which keeps the environment of the run that started it), sonata's database, and,
    /// below bypass, an injected agent that denies every tool it does not name.
    static void map_v2(const PlanInput& in, Invocation& inv) {
        inv.argv.emplace_back("--standalone");
        inv.env[k_db_env] = k_sonata_db;
        Mode mode = in.mode;
        if (mode == Mode::bypass_permissions && in.options.forbids_bypass()) {
            mode = Mode::accept_edits;
            inv.notes.push_back(
                "dangerously_skip_permissions=false: runs as acceptEdits (injected agent, "
                "no --auto)");
        }
        if (mode == Mode::bypass_permissions) {
            inv.argv.emplace_back("--auto");
            inv.notes.push_back("no sandbox: shell commands run unasked");
            return;
        }
        const bool plan = mode == Mode::plan;
        const char* agent = plan ? k_plan_agent : k_edit_agent;
        // delegation-escape (opencode 2.1.2): a sub-agent does not inherit its caller's rules, so
        // `subagent` is denied with the shell, the web and `execute`.
        std::vector<std::string> allowed{"read", "grep", "glob"};
        if (!plan) allowed.emplace_back("edit"); // gates write, edit and patch
        inv.env[k_config_env] = opencode_v2::agent_config(agent, allowed);
        inv.argv.insert(inv.argv.end(), {"--agent", agent});
        inv.relies_on = plan ? relies::read_only()
                             : with(relies::workspace_edits(),
                                    {probe_id::rm_prompt, probe_id::delegation_escape});
        inv.notes.push_back("tool permission rules of an injected agent, not an OS sandbox");
    }
};

} // namespace

std::unique_ptr<Adapter> make_opencode() { return std::make_unique<OpenCode>(); }

} // namespace sonata::adapters
