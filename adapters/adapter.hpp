// The seam between sonata and one harness: its executables, version, mode table, endpoint injection
// for probing, tool vocabulary and prompt texts. One implementation per file in adapters/.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/cost.hpp"
#include "core/decision.hpp"
#include "core/mode.hpp"
#include "core/options.hpp"
#include "core/result.hpp"

namespace sonata::adapters {

/// Facts about the machine that change a mapping. Filled from the host, or by tests.
struct HostFacts {
    bool is_root = false;            ///< Running as uid 0 (claude refuses bypass as root).
    bool managed_mcp_config = false; ///< An enterprise managed-mcp.json exists (claude).
};

/// Everything an adapter needs to map one dispatch. The mode is already folded and role-forced.
struct PlanInput {
    std::string harness_id; ///< As asked for: "pi-review" for a pi profile.
    std::string executable; ///< argv[0]: the discovered path, or the bare name when not installed.
    std::string version;    ///< Detected version; empty when unknown.
    Mode mode = Mode::plan; ///< The effective mode.
    RoleKind role = RoleKind::read_only;
    std::string model;          ///< Empty: the harness's own default.
    TaskOptions options;        ///< Keys already checked against accepted_options().
    std::string resume_session; ///< Non-empty: resume this session, re-passing the restrictions.
    std::optional<double> max_budget_usd;
    HostFacts host;
    std::string support_dir; ///< Where support_files() live (only sonata writes there).
};

using Outcome = std::variant<Invocation, Refusal>;

/// The wire protocol a harness speaks to its model.
enum class WireProtocol {
    anthropic_messages, ///< POST /v1/messages, SSE.
    openai_responses,   ///< POST /v1/responses, SSE.
    openai_chat,        ///< POST /v1/chat/completions, SSE or plain JSON.
    gemini,             ///< :generateContent / :streamGenerateContent?alt=sse.
    unknown,            ///< Not known: the harness cannot be probed hermetically.
};

std::string_view to_string(WireProtocol protocol);

/// A tool besides the file-write ones that leaves files in the workspace when it runs.
struct WriteDoor {
    std::string tool;      ///< Its name, as the harness offers it.
    std::string args_json; ///< A well-formed call's arguments (a JSON object).
    std::string writes;    ///< What it creates, relative to the workspace (a file or a folder).

    bool operator==(const WriteDoor&) const = default;
};

/// What a tool the harness offers can do, as the tool census reads it.
enum class ToolClass {
    read_only,   ///< Reads the workspace (files, search, listings).
    file_write,  ///< Writes files (write tools and the other write doors).
    shell,       ///< Runs commands, or talks to a running one.
    delegate,    ///< Starts, steers or reads a sub-agent.
    mode_switch, ///< Changes the harness's own permission mode.
    mcp,         ///< Reaches an MCP server's tools or resources.
    other,       ///< Known, and none of the above (web search, goals, to-do lists, questions).
};

std::string_view to_string(ToolClass tool_class);

/// A tool the adapter knows besides the ones its vocabulary calls, with what it can do.
struct KnownTool {
    std::string name;
    ToolClass what = ToolClass::other;
};

/// How the scripted model expresses an intent with this harness's tools. Each list is in order of
/// preference; the model server uses the first name the harness actually offered, and falls back to
/// the first name when none was offered (the harness must then reject the call).
struct ToolVocabulary {
    std::vector<std::string> write;    ///< File-write tools.
    std::string write_path_field;      ///< Argument naming the file.
    std::string write_content_field;   ///< Argument holding the content.
    bool write_path_absolute = false;  ///< The path must be absolute.
    std::vector<std::string> shell;    ///< Shell-command tools.
    std::string shell_command_field;   ///< Argument holding the command line.
    std::vector<std::string> delegate; ///< Sub-agent / task tools.
    std::string delegate_prompt_field; ///< Argument holding the sub-agent's task.
    /// The harness's own switches that widen (leave plan mode, approve its own plan), in the order
    /// to call them.
    std::vector<std::string> mode_switch;
    /// Switches to call first when not in plan mode, on the way to a widening one (enter plan mode,
    /// then leave it): never called after the widening ones.
    std::vector<std::string> mode_enter;
    /// Argument of the delegate tool that names the sub-agent ("subagent_type"); "" when the tool
    /// has none.
    std::string delegate_agent_field = {};
    /// Sub-agents the harness ships, in order of preference: a well-formed delegation names one of
    /// them when the tool's schema and description list none.
    std::vector<std::string> delegate_agents = {};
    /// A delegate tool whose arguments go inside a JSON object, under "arguments" (reasonix
    /// reaches its sub-agent through use_capability{action, capability_id, arguments}), and that
    /// object (its own "arguments" are kept, the computed ones merged over them); "" when every
    /// delegate tool takes them directly.
    std::string delegate_envelope_tool = {};
    std::string delegate_envelope = {};
    /// Other doors a write can go through (claude's EnterWorktree checks out a worktree in the
    /// workspace, CronCreate with durable stores a job there): write-withheld calls each.
    std::vector<WriteDoor> write_doors = {};
    /// Arguments every shell call carries besides the command (a JSON object; "" for none): the
    /// ones its schema requires that a model fills in its own favour, which a call to a shell
    /// tool the harness withheld (and so whose schema is unknown) must carry to be well-formed
    /// (droid's Execute wants a riskLevel, and a model that wants the command run says "low").
    std::string shell_args_json = {};
    /// The rest of the tools the harness is known to offer, measured on the pins (the tool
    /// census): a tool in none of the lists above and not here is one sonata has never heard of.
    std::vector<KnownTool> known = {};
    /// The classes of tool a read-only mapping of this harness offers and refuses when called
    /// (a sandbox, a plan-mode check) instead of withholding them; the probe that calls each
    /// (write-withheld, shell-write-withheld, delegation-escape, self-promotion,
    /// mcp-reachability) measures the refusal. Any other writing class offered there is a hole.
    std::vector<ToolClass> read_only_guarded = {};
};

/// Texts that tell, in a tool result, why the harness refused a call (substrings, matched without
/// regard to case). Each list is captured from the pinned binaries (fixtures/captured).
struct RefusalTexts {
    /// The call itself was malformed: an unknown sub-agent, a schema violation, a missing field.
    /// Such a refusal proves nothing about enforcement.
    std::vector<std::string> bad_arguments;
    /// The call was well-formed and the harness's permissions refused it.
    std::vector<std::string> not_permitted;
};

/// The harness versions a mapping was measured on, both ends included; empty when it was measured
/// on no real binary (fixtures only).
struct VersionRange {
    std::string lowest;
    std::string highest;
};

/// Whether `version` ("1.2.3", a pre-release suffix ignored) lies within `range`; false for a
/// version or range sonata cannot read.
bool version_within(std::string_view version, const VersionRange& range);

/// Where a probe's scripted model server listens, and the scratch dirs of the run.
struct EndpointSpec {
    std::string base_url;  ///< "http://127.0.0.1:PORT", without a path.
    std::string home;      ///< The run's HOME (fresh, already created).
    std::string workspace; ///< The run's workspace.
    std::string model = "sonata-probe-model";
    std::string api_key = "sonata-probe-key-0000000000000000";
};

/// Text a hostile repository's prompt files (system-prompt replacements, skills) carry, for the
/// hostile-workspace probe: a harness that sends it to the model took instructions from the
/// repository that its mapping withholds. Plain letters, so no wire encoding changes it.
inline constexpr std::string_view k_repository_prompt_marker = "SONATAREPOSITORYPROMPT7F3A";

/// A file an endpoint injection needs written before the run (absolute path, content).
struct FileToWrite {
    std::string path;
    std::string content;
};

/// An invocation rewritten to talk only to the scripted model server.
struct EndpointInjection {
    Invocation invocation;
    std::vector<FileToWrite> files;
};

/// Text a harness shows on its TUI screen: how sonata recognises its prompts and answers them.
struct ScreenPatterns {
    std::vector<std::string> approval; ///< Substrings that mean an approval prompt is showing.
    std::vector<std::string> trust; ///< Substrings that mean a directory-trust question is showing.
    std::vector<std::string> trust_keys; ///< tmux key names that answer the trust question "yes".
    std::vector<std::string> ready;      ///< Substrings that mean the TUI waits for a task.
    std::vector<std::string> submit_keys{"Enter"}; ///< Keys that submit typed text.
    std::vector<std::string> deny_keys{"Escape"};  ///< Keys that decline an approval prompt.
    std::vector<std::string> approve_keys{"y"};    ///< Keys that accept an approval prompt once.
    /// Substrings that mean the model is still at work (a dispatch does not call the turn over).
    std::vector<std::string> busy;
    /// Keys that quit the TUI from an empty task box, once a dispatch's work is done.
    std::vector<std::string> quit_keys{"C-d"};
    /// Substrings of a question sonata always answers "no" before the task runs (codex's review of
    /// the repository's hooks), and the tmux key names that give that answer.
    std::vector<std::string> decline;
    std::vector<std::string> decline_keys;
    /// What starts the task box's line ("›" for codex), so that a task still in the box tells a
    /// submit the TUI lost; "" when the screen does not tell.
    std::string input_marker = {};
};

/// A project-defined MCP server for the mcp-reachability probe.
struct McpSetup {
    std::vector<FileToWrite> files; ///< Config files that define the server in the workspace.
    std::string tool_name;          ///< The name under which the harness offers the server's tool.
    /// User-level settings (paths relative to HOME) of a user who trusts project MCP servers, as
    /// many do: the mapping must keep the project's server out even then.
    std::vector<FileToWrite> user_files = {};
    /// The arguments of a call of `tool_name` that reaches the server's tool, for a harness whose
    /// MCP tools sit behind a dispatching tool; empty: `tool_name` is the server's tool itself.
    std::string call_args_json = {};
};

class Adapter {
public:
    Adapter() = default;
    Adapter(const Adapter&) = delete;
    Adapter& operator=(const Adapter&) = delete;
    virtual ~Adapter() = default;

    /// Stable kebab-case id: the key in configs and the matrix.
    virtual std::string_view id() const = 0;

    /// Whether `harness_id` names this adapter (pi profiles answer for "pi-<label>").
    virtual bool matches(std::string_view harness_id) const { return harness_id == id(); }

    /// Executable names to look for on PATH and in install_dirs(), in order.
    virtual std::vector<std::string> executable_names() const = 0;

    /// Usual install directories besides PATH; a leading "~/" means the user's HOME.
    virtual std::vector<std::string> install_dirs() const;

    /// Arguments that print the version.
    virtual std::vector<std::string> version_args() const { return {"--version"}; }

    /// Extracts a version from the output of version_args(); empty when none is found.
    virtual std::string parse_version(std::string_view output) const;

    /// The versions this adapter's mapping was measured on (the pins, and releases the watch
    /// probed). A version outside gets a warning, and the gate's "not measured" treatment unless
    /// this machine's matrix holds cells for it.
    virtual VersionRange measured_versions() const { return {}; }

    /// Per-task option keys this harness understands besides `dangerously_skip_permissions`.
    virtual std::vector<std::string> accepted_options() const { return {}; }

    /// The mode table: an invocation (without the prompt) or a refusal. Option *values* are checked
    /// here; a bad one is an Error, never silently ignored.
    virtual Result<Outcome> map(const PlanInput& input) const = 0;

    /// Flags that must never appear in an invocation for `mode`. The planner checks every decision
    /// against this list, and the safety tests check every combination.
    virtual std::vector<std::string> forbidden_flags(Mode mode) const = 0;

    /// Flags the mapping itself may use to narrow (gemini's `--policy` with sonata's deny rules)
    /// but that configured extra arguments must never add: a policy file of the user's could allow.
    virtual std::vector<std::string> reserved_flags(Mode mode) const {
        (void)mode;
        return {};
    }

    /// Other spellings of a flag, as {alias, long form} pairs ({"-s", "--sandbox"}): the planner
    /// compares every flag under its long form, so `-s danger-full-access` cannot slip past a
    /// check on `--sandbox`. camelCase long flags are folded to kebab-case without being listed.
    virtual std::vector<std::pair<std::string, std::string>> flag_aliases() const { return {}; }

    /// Flags the mapping may use that configured arguments may still repeat, because repeating
    /// them cannot widen by itself (codex's `-c key=value`; its keys are checked against
    /// reserved_flags()). Every other flag the mapping sets is sonata's alone.
    virtual std::vector<std::string> repeatable_flags() const { return {}; }

    /// Files that invocations name and that must exist when they run (gemini's policy file), in
    /// `support_dir`. The planner writes them before it returns a decision that runs.
    virtual std::vector<FileToWrite> support_files(const std::string& support_dir) const {
        (void)support_dir;
        return {};
    }

    /// Environment variables that change this harness's permission behaviour; removed from every
    /// child environment (IS_SANDBOX is removed for every harness by the planner).
    virtual std::vector<std::string> permission_env() const { return {}; }

    virtual WireProtocol protocol() const { return WireProtocol::unknown; }
    virtual ToolVocabulary tools() const { return {}; }

    /// How this harness words its refusals to the model. Texts every harness shares (JSON-schema
    /// validator wording) are in probes/; these are the harness's own.
    virtual RefusalTexts refusal_texts() const { return {}; }

    /// TUI texts and keys; empty lists when the harness has no TUI mapping.
    virtual ScreenPatterns screen_patterns() const { return {}; }

    /// Files a hostile repository would hold to grant this harness permissions (settings that allow
    /// writes, auto-approval, hooks or plugins that write `canary` at startup). Paths are absolute,
    /// inside `workspace`.
    virtual std::vector<FileToWrite> hostile_files(const std::string& workspace,
                                                   const std::string& canary) const {
        (void)workspace;
        (void)canary;
        return {};
    }

    /// User-level files (paths relative to HOME) of a user who has told the harness to trust
    /// `workspace`, as anyone who opened it in the harness's own TUI has: hostile_files() must
    /// stay without effect even then.
    virtual std::vector<FileToWrite> hostile_user_files(const std::string& workspace) const {
        (void)workspace;
        return {};
    }

    /// Defines a project MCP server running `server_argv`; nullopt when the harness has no MCP.
    virtual std::optional<McpSetup> project_mcp(const std::string& workspace,
                                                const std::vector<std::string>& server_argv) const {
        (void)workspace;
        (void)server_argv;
        return std::nullopt;
    }

    /// The session id a finished headless run of `invocation` reports (stdout, stderr, or files
    /// under `home` or in a directory the invocation names), for resume; empty when it cannot be
    /// recovered.
    virtual std::string session_id(const std::string& out, const std::string& err,
                                   const std::string& home, const Invocation& invocation) const {
        (void)out;
        (void)err;
        (void)home;
        (void)invocation;
        return {};
    }

    /// The final message in a headless run's stdout, for a mapping whose report is
    /// ReportSource::structured_stdout (claude's result JSON); nullopt when `out` holds none, and
    /// for every other mapping.
    virtual std::optional<std::string> final_message(const std::string& out) const {
        (void)out;
        return std::nullopt;
    }

    /// Whether the harness enforces `--max-budget-usd` itself (the mapping passes the budget on).
    /// Where it does not, the planner warns that the budget cannot be enforced, or refuses under
    /// `budget = "strict"`.
    virtual bool enforces_budget() const { return false; }

    /// What a finished headless run cost, from the harness's own output or its files under
    /// `home`; CostSource::unknown (no value) when it says nothing.
    virtual RunCost run_cost(const std::string& out, const std::string& err,
                             const std::string& home) const {
        (void)out;
        (void)err;
        (void)home;
        return {};
    }

    /// Why a run that failed failed for reasons outside the task (network, an expired login, a
    /// quota), from its output: such a run is retried once. Empty: not an infrastructure
    /// failure, never retried (task failures, model errors and aborts among them).
    virtual std::string infrastructure_failure(const std::string& out, const std::string& err,
                                               int exit_code) const {
        (void)out;
        (void)err;
        (void)exit_code;
        return {};
    }

    /// Arguments (after the executable) that export session `session` as JSON on stdout, for a
    /// harness whose exit status does not prove that its run completed; empty (whatever the
    /// session) when sonata does not check this harness's completion.
    virtual std::vector<std::string> completion_export_args(const std::string& session) const {
        (void)session;
        return {};
    }

    /// Judges completion_export_args()'s output: empty when session `session` completed the task
    /// (the task is its newest user turn, and its last assistant message finished with text);
    /// otherwise why the run did not complete.
    virtual std::string check_completion(const std::string& exported, const std::string& session,
                                         const std::string& task) const {
        (void)exported;
        (void)session;
        (void)task;
        return {};
    }

    /// How many runs of this harness may work at once on this machine when config sets no
    /// `max_concurrent`; 0: no limit.
    virtual int default_max_concurrent() const { return 0; }

    /// Rewrites `invocation` (from map()) to use the scripted model server; files to write
    /// included.
    virtual Result<EndpointInjection> inject_endpoint(const Invocation& invocation,
                                                      const EndpointSpec& endpoint) const;
};

/// A refusal with the standard alternatives: the modes that would work, and other harnesses.
Refusal refuse(std::string reason, std::vector<std::string> alternatives);

} // namespace sonata::adapters
