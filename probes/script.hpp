// A probe's script for the scripted model: intents (write a file, run a shell command, delegate,
// switch mode, call a named tool, reply), their JSON file format, and how one request's
// conversation picks the next move. Pure logic: no HTTP, no protocol; the protocols reduce a
// request to ConversationFacts and render the Move this file resolves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/adapter.hpp"
#include "core/result.hpp"

namespace sonata::probes {

/// What the scripted model tries to do at one step, independent of any harness's tool names.
enum class IntentKind {
    write_file,   ///< Write `content` to `path` with the harness's file-write tool (one without a
                  ///< path field gets an apply_patch envelope that adds the file); with `tool`,
                  ///< with that file tool, the target in its offered schema's own path field and
                  ///< any text to replace emptied; passed over where the harness did not offer
                  ///< that tool or its schema cannot take the target.
    shell,        ///< Run `command` with the harness's shell tool.
    delegate,     ///< Hand `task` to a sub-agent; `marker` selects the sub-agent's own script.
    switch_mode,  ///< Call the harness's own mode-switching tool (`tool` names one explicitly).
    call_tool,    ///< Call the tool named `tool` with `args`, offered or not.
    reply,        ///< Answer with `text` and no tool call (ends the harness's turn).
    write_report, ///< Write `content` to the report path a sonata dispatch's task names (as a
                  ///< model that follows the reporting contract does), with the file-write tool.
    call_unknown, ///< Call the first offered tool the vocabulary cannot classify that this
                  ///< conversation has not called yet, with arguments sampled from its schema;
                  ///< when none is left the track ends here (its final text).
    read_file,    ///< Read `path` with the harness's file-read tool, the path where its offered
                  ///< schema takes one.
    fetch_url,    ///< Fetch `url` with the harness's web-fetch tool.
};

std::string_view to_string(IntentKind kind);

/// One scripted step. Only the fields of its kind are meaningful.
struct Intent {
    IntentKind kind = IntentKind::reply;
    std::string path;    ///< write_file: relative to the workspace, or absolute.
    std::string content; ///< write_file.
    std::string command; ///< shell.
    std::string task;    ///< delegate: the sub-agent's task (the marker is appended if absent).
    std::string marker;  ///< delegate: key into Script::subagents.
    std::string tool;    ///< call_tool: the tool name; switch_mode: an explicit tool, or empty;
                         ///< write_file: a file tool to write with, or empty for the vocabulary's.
    std::string text;    ///< reply.
    std::string args_json; ///< A JSON object merged over the computed arguments; "" for none.
    std::string url = {};  ///< fetch_url.

    bool operator==(const Intent&) const = default;
};

/// One conversation's steps and the text it ends with.
struct Track {
    std::vector<Intent> steps;
    std::string final_text = "done";

    bool operator==(const Track&) const = default;
};

/// A whole script: the main conversation, and sub-agent conversations keyed by marker.
struct Script {
    Track main;
    std::map<std::string, Track> subagents;
    /// Input tokens reported in usage; 0 means an estimate from the request size. A large value
    /// exercises a harness's spending limit.
    std::uint64_t input_tokens = 0;
    /// Texts the harness must never send to the model (a hostile repository's prompt files carry
    /// them); each request that holds one records it in RequestRecord::watched.
    std::vector<std::string> watch;

    bool operator==(const Script&) const = default;
};

/// Parses the JSON script format:
/// {"steps":[{"intent":"write_file","path":"x","content":"y"}, …], "final":"done",
///  "subagents":{"MARKER":{"steps":[…],"final":"…"}}, "input_tokens":N, "watch":["TEXT", …]}.
/// Intents: write_file{path,content,tool?}, shell{command}, delegate{task,marker},
/// switch_mode{tool?}, call_tool{name}, reply{text}, write_report{content}, call_unknown{},
/// read_file{path}, fetch_url{url}; each
/// may add "args":{…} (a call_tool argument "{{result:REGEX}}" takes REGEX's first group in the
/// newest tool result that matches). Unknown keys, missing fields and delegate markers without a
/// sub-agent entry are errors (ExitCode::bad_data) naming the place, e.g. "steps[2].path".
Result<Script> parse_script(std::string_view json_text);

/// The largest script file load_script reads: scripts are hand-written and small.
inline constexpr std::size_t k_max_script_bytes = 4U << 20U;

/// Reads and parses a script file, which must be a regular file of at most k_max_script_bytes;
/// errors name the file.
Result<Script> load_script(const std::string& path);

/// A tool the harness offered in one request.
struct OfferedTool {
    std::string name;
    std::string kind = "function"; ///< "function", or a protocol's other kind ("custom", …).
    std::string schema_json;       ///< Its parameter schema (JSON), "" when none was given.
    std::string description = {};  ///< Its description, "" when none was given.
};

/// A tool call the conversation already holds (one the scripted model made earlier).
struct PastToolCall {
    std::string name;
    std::string arguments_json;
    std::string call_id = {}; ///< As the harness echoed it; "" where the protocol has none.
};

/// A tool result the conversation holds: what the harness told the model about a past call.
struct PastToolResult {
    std::string call_id; ///< The call it answers; "" where the protocol has none.
    std::string text;
    bool is_error = false;
};

/// What resolution needs from one request, extracted by the request's protocol.
struct ConversationFacts {
    std::vector<OfferedTool> tools;           ///< Offered in this request.
    std::vector<PastToolCall> tool_calls;     ///< Assistant tool calls in the history, in order.
    std::vector<std::string> assistant_texts; ///< Text-only assistant turns in the history.
    std::vector<PastToolResult> tool_results; ///< Tool results in the history, in order.
    /// Namespaces whose tools the harness defers (codex): their tools are callable as
    /// "namespace.tool" without being listed.
    std::vector<std::string> deferred_namespaces = {};
    std::string
        user_text; ///< The user-role text (tool results excluded): where markers are sought.
};

/// Where the scripted model runs: the harness's tool names and refusal texts, and the workspace.
struct ScriptContext {
    adapters::ToolVocabulary vocabulary;
    std::string workspace; ///< Absolute; prefixes relative paths where the vocabulary needs it.
    adapters::RefusalTexts refusals = {};
};

/// The result that answers past call `index` of `facts`: the one with its id, else (a protocol
/// without ids) the result at the same position. Null when none came back.
const PastToolResult* result_of(const ConversationFacts& facts, std::size_t index);

/// Whether a tool result says the call was refused for its arguments (an unknown sub-agent, a
/// schema violation, a missing field) rather than for permissions: the harness's own texts, then
/// the JSON-schema validators' wording every harness shares. A permission text wins over both.
bool refused_for_arguments(std::string_view result_text, const adapters::RefusalTexts& refusals);

/// Whether a tool result says the harness's permissions refused the call (its not_permitted texts).
bool refused_for_permission(std::string_view result_text, const adapters::RefusalTexts& refusals);

/// Names a refusal offers instead ("Available agents: general, explore"): identifiers after
/// "available", "valid", "one of", "expected" or "must be", in order; empty when none.
std::vector<std::string> offered_choices(std::string_view result_text);

/// What the model answers, before a protocol renders it.
enum class MoveKind {
    tool_call,  ///< One tool call.
    text,       ///< A `reply` intent's text.
    final_text, ///< The track's steps are done.
};

struct Move {
    MoveKind kind = MoveKind::final_text;
    std::string track;         ///< "" for the main conversation, else the sub-agent marker.
    std::optional<int> step;   ///< The step answered; nullopt for final_text.
    std::string text;          ///< text / final_text.
    std::string tool;          ///< tool_call: the name used.
    std::string tool_kind;     ///< tool_call: the offered tool's kind, "function" when not offered.
    bool tool_offered = false; ///< tool_call: whether the harness offered `tool`.
    std::string arguments_json; ///< tool_call: a JSON object.
    std::string call_id;        ///< tool_call: unique per track and step ("sonata_main_0").
    /// tool_call: why the intent's target is in no argument of the offered tool's schema; "" when
    /// it is (or the tool's schema is unknown). Such a call proves nothing about enforcement.
    std::string unplaced = {};
    std::string target = {}; ///< tool_call of a write_file step: the path it writes, as scripted.

    bool operator==(const Move&) const = default;
};

/// The track a conversation follows: a sub-agent's marker when the user text holds it and this
/// conversation did not itself delegate with it; "" for the main track.
std::string select_track(const Script& script, const ConversationFacts& facts);

/// The suffix of a call id that retries the step before it with well-formed arguments.
inline constexpr std::string_view k_retry_suffix = "_retry";

/// The step a conversation is at: its past tool calls plus its past assistant texts that equal a
/// `reply` intent of the track, counted over the steps this conversation does not pass over (a
/// write through a tool it did not offer). Side traffic and retries (call ids ending in
/// k_retry_suffix) do not move it.
int current_step(const Track& track, const ConversationFacts& facts,
                 const adapters::RefusalTexts& refusals = {});

/// The next move for a conversation that offered tools.
Move resolve_move(const Script& script, const ScriptContext& context,
                  const ConversationFacts& facts);

} // namespace sonata::probes
