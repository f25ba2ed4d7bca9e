// The constant facts of one harness, as one value: its id, executables, the versions its mapping
// was measured on, the flags each mode forbids, its tool vocabulary, refusal texts and screen
// patterns. Each adapter builds its HarnessSpec once; its virtual methods are behaviour only.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mode.hpp"

namespace sonata::adapters {

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
    /// File-read tools and the argument naming the file (parent-rule reads a path the parent's
    /// rules deny); empty where no probe reads through the harness's own tool.
    std::vector<std::string> read = {};
    std::string read_path_field = {};
    /// Web-fetch tools and the argument holding the URL; empty where the harness has none known.
    std::vector<std::string> fetch = {};
    std::string fetch_url_field = {};
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

/// A list of flags for each mode.
struct FlagsByMode {
    std::array<std::vector<std::string>, 4> lists; ///< In Mode order, plan first.

    const std::vector<std::string>& operator[](Mode mode) const {
        return lists[static_cast<std::size_t>(mode)];
    }

    /// The list `of(mode)` gives for each mode.
    template <typename Of> static FlagsByMode from(Of of) {
        FlagsByMode flags;
        for (std::size_t i = 0; i < flags.lists.size(); ++i)
            flags.lists[i] = of(static_cast<Mode>(i));
        return flags;
    }
};

/// The usual install directories besides PATH, after `first` (a harness's own install folder);
/// a leading "~/" means the user's HOME.
std::vector<std::string> usual_install_dirs(std::vector<std::string> first = {});

/// Whether a harness's mappings load the MCP servers a project defines.
enum class ProjectMcp {
    loaded,   ///< They do: a server there is reachable from a dispatched run.
    shut_out, ///< Every mapping shuts them out (claude's --strict-mcp-config).
};

/// Everything about a harness that does not depend on the run.
struct HarnessSpec {
    /// Stable kebab-case id: the key in configs and the matrix.
    std::string id;

    /// Executable names to look for on PATH and in install_dirs, in order.
    std::vector<std::string> executable_names;

    /// Usual install directories besides PATH; a leading "~/" means the user's HOME.
    std::vector<std::string> install_dirs = usual_install_dirs();

    /// Arguments that print the version.
    std::vector<std::string> version_args{"--version"};

    /// The versions this adapter's mapping was measured on (the pins, and releases the watch
    /// probed). A version outside gets a warning, and the gate's "not measured" treatment unless
    /// this machine's matrix holds cells for it.
    VersionRange measured_versions;

    /// Per-task option keys this harness understands besides `dangerously_skip_permissions`.
    std::vector<std::string> accepted_options;

    /// Flags that must never appear in an invocation for a mode. The planner checks every decision
    /// against these lists, and the safety tests check every combination.
    FlagsByMode forbidden_flags;

    /// Flags the mapping itself may use to narrow (gemini's `--policy` with sonata's deny rules)
    /// but that configured extra arguments must never add: a policy file of the user's could allow.
    FlagsByMode reserved_flags;

    /// Other spellings of a flag, as {alias, long form} pairs ({"-s", "--sandbox"}): the planner
    /// compares every flag under its long form, so `-s danger-full-access` cannot slip past a
    /// check on `--sandbox`. camelCase long flags are folded to kebab-case without being listed.
    std::vector<std::pair<std::string, std::string>> flag_aliases;

    /// Flags the mapping may use that configured arguments may still repeat, because repeating
    /// them cannot widen by itself (codex's `-c key=value`; its keys are checked against
    /// reserved_flags). Every other flag the mapping sets is sonata's alone.
    std::vector<std::string> repeatable_flags;

    /// Arguments that stay last when a mapped invocation ends with one: configured arguments go
    /// before it. "--" ends the options; a flag whose value is the prompt sonata appends (grok's
    /// and agy's `-p`) must be followed by it.
    std::vector<std::string> last_args{"--"};

    /// Environment variables that change this harness's permission behaviour; removed from every
    /// child environment (IS_SANDBOX is removed for every harness by the planner).
    std::vector<std::string> permission_env;

    /// The variable that moves where the harness unpacks the package its executable carries, which
    /// it does whenever its cache directory holds none (so under every fresh HOME). The version
    /// command and every mapping set it to one directory of sonata's harness cache
    /// (unpacked_package_dir), where the package is unpacked once per machine; empty: none.
    std::string unpack_env;

    WireProtocol protocol = WireProtocol::unknown;
    ToolVocabulary tools;

    /// How this harness words its refusals to the model. Texts every harness shares (JSON-schema
    /// validator wording) are in probes/; these are the harness's own.
    RefusalTexts refusal_texts;

    /// TUI texts and keys; empty lists when the harness has no TUI mapping.
    ScreenPatterns screen_patterns;

    /// Whether the harness enforces `--max-budget-usd` itself (the mapping passes the budget on).
    /// Where it does not, the planner warns that the budget cannot be enforced, or refuses under
    /// `budget = "strict"`.
    bool enforces_budget = false;

    /// How many runs of this harness may work at once on this machine when config sets no
    /// `max_concurrent`; 0: no limit.
    int default_max_concurrent = 0;

    /// Whether the project MCP file the adapter names (Adapter::project_mcp) reaches the mappings
    /// sonata runs: doctor warns when sonata's own server is there.
    ProjectMcp project_mcp = ProjectMcp::loaded;
};

} // namespace sonata::adapters
