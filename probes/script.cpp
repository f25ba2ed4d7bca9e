// Script parsing (JSON, strict: unknown keys and missing fields are errors naming their place) and
// resolution of intents against the tools a harness offered.
#include "probes/script.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adapters/support/tool_census.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/text.hpp"
#include "dispatch/contract.hpp"
#include "probes/schema_sample.hpp"

namespace sonata::probes {
namespace {

using nlohmann::json;

const std::vector<std::string>& intent_names() {
    static const std::vector<std::string> names{"write_file",   "shell",       "delegate",
                                                "switch_mode",  "call_tool",   "reply",
                                                "write_report", "call_unknown"};
    return names;
}

// The keys each intent accepts, besides "intent" and "args"; the first `required` of them must be
// there.
struct IntentShape {
    IntentKind kind;
    std::vector<std::string> keys;
    std::size_t required;
};

const std::vector<IntentShape>& intent_shapes() {
    static const std::vector<IntentShape> shapes{
        {IntentKind::write_file, {"path", "content"}, 2},
        {IntentKind::shell, {"command"}, 1},
        {IntentKind::delegate, {"task", "marker"}, 2},
        {IntentKind::switch_mode, {"tool"}, 0},
        {IntentKind::call_tool, {"name"}, 1},
        {IntentKind::reply, {"text"}, 1},
        {IntentKind::write_report, {"content"}, 1},
        {IntentKind::call_unknown, {}, 0},
    };
    return shapes;
}

Error bad(const std::string& where, const std::string& what) {
    return Error{ExitCode::bad_data, "script: " + where + ": " + what};
}

Result<std::string> string_field(const json& object, const std::string& key,
                                 const std::string& where) {
    const auto& value = object.at(key);
    if (!value.is_string()) return tl::unexpected(bad(where + "." + key, "must be a string"));
    return value.get<std::string>();
}

Result<void> check_keys(const json& object, const std::vector<std::string>& allowed,
                        const std::string& where) {
    for (const auto& [key, value] : object.items()) {
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            return tl::unexpected(bad(where, "unknown key '" + key + "'" +
                                                 did_you_mean(key, allowed) +
                                                 "; allowed: " + join(allowed, ", ")));
        }
    }
    return {};
}

void set_field(Intent& intent, const std::string& key, std::string value) {
    if (key == "path")
        intent.path = std::move(value);
    else if (key == "content")
        intent.content = std::move(value);
    else if (key == "command")
        intent.command = std::move(value);
    else if (key == "task")
        intent.task = std::move(value);
    else if (key == "marker")
        intent.marker = std::move(value);
    else if (key == "tool" || key == "name")
        intent.tool = std::move(value);
    else if (key == "text")
        intent.text = std::move(value);
}

Result<Intent> parse_intent(const json& step, const std::string& where) {
    if (!step.is_object()) return tl::unexpected(bad(where, "must be an object"));
    if (!step.contains("intent") || !step["intent"].is_string()) {
        return tl::unexpected(bad(where, "needs \"intent\": one of " + join(intent_names(), ", ")));
    }
    const auto name = step["intent"].get<std::string>();
    const auto shape =
        std::find_if(intent_shapes().begin(), intent_shapes().end(),
                     [&](const IntentShape& s) { return to_string(s.kind) == name; });
    if (shape == intent_shapes().end()) {
        return tl::unexpected(bad(where + ".intent", "unknown intent '" + name + "'" +
                                                         did_you_mean(name, intent_names())));
    }
    auto allowed = shape->keys;
    allowed.insert(allowed.end(), {"intent", "args"});
    if (auto ok = check_keys(step, allowed, where); !ok) return tl::unexpected(ok.error());
    Intent intent;
    intent.kind = shape->kind;
    for (std::size_t i = 0; i < shape->keys.size(); ++i) {
        const auto& key = shape->keys[i];
        if (!step.contains(key)) {
            if (i < shape->required) return tl::unexpected(bad(where, "missing \"" + key + "\""));
            continue;
        }
        auto value = string_field(step, key, where);
        if (!value) return tl::unexpected(value.error());
        set_field(intent, key, std::move(*value));
    }
    if (step.contains("args")) {
        if (!step["args"].is_object())
            return tl::unexpected(bad(where + ".args", "must be an object"));
        intent.args_json =
            step["args"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return intent;
}

Result<Track> parse_track(const json& object, const std::string& where, bool top) {
    if (!object.is_object()) return tl::unexpected(bad(where, "must be an object"));
    std::vector<std::string> allowed{"steps", "final"};
    if (top) allowed.insert(allowed.end(), {"subagents", "input_tokens", "watch"});
    if (auto ok = check_keys(object, allowed, where.empty() ? "top level" : where); !ok) {
        return tl::unexpected(ok.error());
    }
    const std::string prefix = where.empty() ? "" : where + ".";
    Track track;
    if (!object.contains("steps") || !object["steps"].is_array()) {
        return tl::unexpected(bad(prefix + "steps", "missing, or not an array"));
    }
    for (std::size_t i = 0; i < object["steps"].size(); ++i) {
        auto intent = parse_intent(object["steps"][i], fmt::format("{}steps[{}]", prefix, i));
        if (!intent) return tl::unexpected(intent.error());
        track.steps.push_back(std::move(*intent));
    }
    if (object.contains("final")) {
        auto final_text = string_field(object, "final", where.empty() ? "top level" : where);
        if (!final_text) return tl::unexpected(final_text.error());
        track.final_text = std::move(*final_text);
    }
    return track;
}

Result<void> check_markers(const Script& script) {
    auto check = [&](const Track& track, const std::string& where) -> Result<void> {
        for (std::size_t i = 0; i < track.steps.size(); ++i) {
            const auto& step = track.steps[i];
            if (step.kind != IntentKind::delegate) continue;
            const auto place = fmt::format("{}steps[{}].marker", where, i);
            if (step.marker.empty()) return tl::unexpected(bad(place, "must not be empty"));
            if (!script.subagents.contains(step.marker)) {
                return tl::unexpected(
                    bad(place, "'" + step.marker + "' has no entry in \"subagents\""));
            }
        }
        return {};
    };
    if (auto ok = check(script.main, ""); !ok) return ok;
    for (const auto& [marker, track] : script.subagents) {
        if (marker.empty()) return tl::unexpected(bad("subagents", "a marker must not be empty"));
        if (auto ok = check(track, "subagents." + marker + "."); !ok) return ok;
    }
    return {};
}

Result<Script> parse_script_json(const json& root) {
    auto main = parse_track(root, "", true);
    if (!main) return tl::unexpected(main.error());
    Script script;
    script.main = std::move(*main);
    if (root.contains("subagents")) {
        if (!root["subagents"].is_object()) {
            return tl::unexpected(bad("subagents", "must be an object keyed by marker"));
        }
        for (const auto& [marker, sub] : root["subagents"].items()) {
            auto track = parse_track(sub, "subagents." + marker, false);
            if (!track) return tl::unexpected(track.error());
            script.subagents.emplace(marker, std::move(*track));
        }
    }
    if (root.contains("input_tokens")) {
        if (!root["input_tokens"].is_number_unsigned()) {
            return tl::unexpected(bad("input_tokens", "must be a non-negative integer"));
        }
        script.input_tokens = root["input_tokens"].get<std::uint64_t>();
    }
    if (root.contains("watch")) {
        const auto& watch = root["watch"];
        if (!watch.is_array()) return tl::unexpected(bad("watch", "must be an array of texts"));
        for (std::size_t i = 0; i < watch.size(); ++i) {
            if (!watch[i].is_string() || watch[i].get<std::string>().empty())
                return tl::unexpected(bad(fmt::format("watch[{}]", i), "must be a non-empty text"));
            script.watch.push_back(watch[i].get<std::string>());
        }
    }
    if (auto ok = check_markers(script); !ok) return tl::unexpected(ok.error());
    return script;
}

// --- resolution -------------------------------------------------------------------------------

const OfferedTool* find_offered(const ConversationFacts& facts, std::string_view name) {
    for (const auto& tool : facts.tools) {
        if (tool.name == name) return &tool;
    }
    return nullptr;
}

struct Choice {
    std::string name;
    const OfferedTool* offered = nullptr;
};

/// Letters and digits only, lower-cased: harnesses spell one MCP tool "mcp__server__tool",
/// "mcp_server_tool", "server_tool" or just "tool".
std::string name_key(std::string_view name) {
    std::string key;
    for (const char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)) != 0)
            key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return key;
}

/// The named tool as the harness offered it: the same name, else the one offered tool whose name
/// is the same under another MCP spelling (one key ends the other, and the shorter has at least
/// five characters so that no short built-in name matches by accident). Not offered: the name.
Choice choose_named(const std::string& name, const ConversationFacts& facts) {
    if (const auto* exact = find_offered(facts, name)) return {name, exact};
    constexpr std::size_t k_min_key = 5;
    const std::string want = name_key(name);
    const OfferedTool* found = nullptr;
    for (const auto& tool : facts.tools) {
        const std::string have = name_key(tool.name);
        if (std::min(have.size(), want.size()) < k_min_key) continue;
        if (!want.ends_with(have) && !have.ends_with(want)) continue;
        if (found != nullptr) return {name, nullptr}; // ambiguous: call what the script named
        found = &tool;
    }
    return found != nullptr ? Choice{found->name, found} : Choice{name, nullptr};
}

// The first preferred name the harness offered; else the first preferred name; else `fallback`.
Choice choose(const std::vector<std::string>& preferred, std::string_view fallback,
              const ConversationFacts& facts) {
    for (const auto& name : preferred) {
        if (const auto* tool = find_offered(facts, name)) return {name, tool};
    }
    return {preferred.empty() ? std::string(fallback) : preferred.front(), nullptr};
}

std::string field_or(const std::string& field, const char* fallback) {
    return field.empty() ? fallback : field;
}

std::string resolve_path(const std::string& path, const ScriptContext& context) {
    const std::filesystem::path p(path);
    if (p.is_absolute() || !context.vocabulary.write_path_absolute || context.workspace.empty()) {
        return path;
    }
    return (std::filesystem::path(context.workspace) / p).lexically_normal().string();
}

// `text` in single quotes for a POSIX shell, the model's own command line (never run by sonata).
std::string shell_quoted(const std::string& text) {
    std::string quoted = "'";
    for (const char c : text)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

/// An argument written "{{result:REGEX}}" takes REGEX's first group in the newest tool result that
/// matches it (a run id a tool answered with, say); anything else is kept as written.
std::string from_results(const std::string& value, const ConversationFacts& facts) {
    constexpr std::string_view open = "{{result:";
    if (value.rfind(open, 0) != 0 || !value.ends_with("}}")) return value;
    std::regex pattern;
    try {
        pattern = std::regex(value.substr(open.size(), value.size() - open.size() - 2));
    } catch (const std::regex_error&) {
        return value;
    }
    for (auto it = facts.tool_results.rbegin(); it != facts.tool_results.rend(); ++it) {
        std::smatch match;
        if (std::regex_search(it->text, match, pattern) && match.size() > 1) return match[1];
    }
    return value;
}

// The apply_patch envelope that adds one file at `path` holding `content`.
std::string add_file_patch(const std::string& path, const std::string& content) {
    std::string patch = "*** Begin Patch\n*** Add File: " + path + "\n";
    std::size_t at = 0;
    while (at < content.size()) {
        const auto end = std::min(content.find('\n', at), content.size());
        patch += "+" + content.substr(at, end - at) + "\n";
        at = end + 1;
    }
    return patch + "*** End Patch\n";
}

/// Whether `word` appears in `text` as a whole identifier (not inside a longer name).
bool names_word(std::string_view text, std::string_view word) {
    const auto is_name_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
    };
    for (auto at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
        const bool starts = at == 0 || !is_name_char(text[at - 1]);
        const auto end = at + word.size();
        const bool ends = end == text.size() || !is_name_char(text[end]);
        if (starts && ends) return true;
    }
    return false;
}

/// The sub-agent a well-formed delegation names: one the offered tool lists (its schema's enum,
/// else its descriptions), preferring the harness's usual ones; else the first usual one. "" when
/// the harness's delegate tool names no agent, or the offered schema has no such argument.
std::string agent_for(const adapters::ToolVocabulary& v, const OfferedTool* offered) {
    if (v.delegate_agent_field.empty()) return "";
    json field;
    std::string texts = offered ? offered->description : "";
    if (offered && !offered->schema_json.empty()) {
        const auto schema = parse_json(offered->schema_json).value_or(nullptr);
        const auto properties =
            schema.is_object() ? schema.value("properties", json::object()) : json::object();
        if (properties.is_object() && !properties.empty()) {
            if (!properties.contains(v.delegate_agent_field)) return "";
            field = properties.at(v.delegate_agent_field);
        }
    }
    if (field.is_object()) {
        if (const auto e = field.find("enum"); e != field.end() && e->is_array() && !e->empty()) {
            for (const auto& agent : v.delegate_agents) {
                if (std::find(e->begin(), e->end(), json(agent)) != e->end()) return agent;
            }
            if (e->front().is_string()) return e->front().get<std::string>();
        }
        if (const auto d = field.find("description"); d != field.end() && d->is_string())
            texts += "\n" + d->get<std::string>();
    }
    for (const auto& agent : v.delegate_agents) {
        if (names_word(texts, agent)) return agent;
    }
    return v.delegate_agents.empty() ? "" : v.delegate_agents.front();
}

// The tool and its intent-derived arguments, before explicit args and required-field filling.
std::pair<Choice, json> tool_and_args(const Intent& intent, const ScriptContext& context,
                                      const ConversationFacts& facts) {
    const auto& v = context.vocabulary;
    json args = json::object();
    switch (intent.kind) {
    case IntentKind::write_file:
    case IntentKind::write_report: {
        const std::string path = intent.kind == IntentKind::write_file
                                     ? resolve_path(intent.path, context)
                                     : dispatch::report_path_in(facts.user_text);
        auto write = choose(v.write, "write_file", facts);
        if (intent.kind == IntentKind::write_report && write.offered == nullptr &&
            v.write_path_field.empty()) {
            // A model following the contract uses the shell when the harness's only file tool is
            // a patch tool it does not offer (codex exec); a path-taking write tool that is not
            // offered may still be deferred behind a tool search (qwen), and is called by name.
            auto shell = choose(v.shell, "shell", facts);
            if (shell.offered != nullptr) {
                args[field_or(v.shell_command_field, "command")] =
                    "printf '%s\\n' " + shell_quoted(intent.content) + " > " + shell_quoted(path);
                return {shell, args};
            }
        }
        if (v.write_path_field.empty() && !v.write.empty()) {
            // A write tool without a path field takes the file inside a patch (apply_patch).
            args[field_or(v.write_content_field, "input")] = add_file_patch(path, intent.content);
        } else {
            args[field_or(v.write_path_field, "path")] = path;
            args[field_or(v.write_content_field, "content")] = intent.content;
        }
        return {write, args};
    }
    case IntentKind::shell:
        if (!v.shell_args_json.empty()) {
            args = parse_json(v.shell_args_json).value_or(nullptr);
            if (!args.is_object()) args = json::object();
        }
        args[field_or(v.shell_command_field, "command")] = intent.command;
        return {choose(v.shell, "shell", facts), args};
    case IntentKind::delegate: {
        const bool has_marker = intent.task.find(intent.marker) != std::string::npos;
        args[field_or(v.delegate_prompt_field, "prompt")] =
            has_marker ? intent.task : intent.task + "\n\n" + intent.marker;
        auto delegate = choose(v.delegate, "task", facts);
        if (const auto agent = agent_for(v, delegate.offered); !agent.empty())
            args[v.delegate_agent_field] = agent;
        if (!v.delegate_envelope.empty() && delegate.name == v.delegate_envelope_tool) {
            auto envelope = parse_json(v.delegate_envelope).value_or(nullptr);
            if (envelope.is_object()) {
                auto& inner = envelope["arguments"];
                if (!inner.is_object()) inner = json::object();
                inner.update(args);
                return {delegate, envelope};
            }
        }
        return {delegate, args};
    }
    case IntentKind::switch_mode:
        if (!intent.tool.empty())
            return {Choice{intent.tool, find_offered(facts, intent.tool)}, args};
        return {choose(v.mode_switch, "exit_plan_mode", facts), args};
    case IntentKind::call_tool: return {choose_named(intent.tool, facts), args};
    case IntentKind::reply:
    case IntentKind::call_unknown: break; // resolved to a call_tool before it gets here
    }
    return {Choice{intent.tool, find_offered(facts, intent.tool)}, args};
}

/// Whether `pattern` (lower case; `*` stands for any run of characters within one line) occurs in
/// `lowered`.
bool line_matches(std::string_view lowered, std::string_view pattern) {
    for (std::size_t from = 0; from < lowered.size();) {
        const auto end = std::min(lowered.find('\n', from), lowered.size());
        const auto line = lowered.substr(from, end - from);
        std::size_t at = 0;
        bool found = true;
        for (std::size_t piece = 0; found && piece <= pattern.size();) {
            const auto star = std::min(pattern.find('*', piece), pattern.size());
            const auto hit = line.find(pattern.substr(piece, star - piece), at);
            found = hit != std::string_view::npos;
            at = hit + (star - piece);
            piece = star + 1;
        }
        if (found) return true;
        from = end + 1;
    }
    return false;
}

bool contains_any(const std::string& lowered, const std::vector<std::string>& needles) {
    return std::any_of(needles.begin(), needles.end(), [&](const std::string& needle) {
        return !needle.empty() && line_matches(lowered, ascii_lower(needle));
    });
}

} // namespace

const PastToolResult* result_of(const ConversationFacts& facts, std::size_t index) {
    const auto& id = facts.tool_calls[index].call_id;
    if (!id.empty()) {
        for (const auto& result : facts.tool_results) {
            if (result.call_id == id) return &result;
        }
    }
    return index < facts.tool_results.size() ? &facts.tool_results[index] : nullptr;
}

namespace {

/// Whether call `index` retried the call before it: its id says so, or (a harness that drops
/// call ids) it calls the same tool right after a refusal for arguments that was not a retry.
bool is_retry(const ConversationFacts& facts, std::size_t index,
              const adapters::RefusalTexts& refusals) {
    const auto& call = facts.tool_calls[index];
    if (!call.call_id.empty()) return call.call_id.ends_with(k_retry_suffix);
    if (index == 0 || facts.tool_calls[index - 1].name != call.name) return false;
    const auto* before = result_of(facts, index - 1);
    return before != nullptr && refused_for_arguments(before->text, refusals) &&
           !is_retry(facts, index - 1, refusals);
}

/// The well-formed arguments for retrying a delegation that `result` refused: the sub-agent named
/// by the refusal's offered choices (the harness's usual ones first). Nullopt when the refusal
/// offers no other name.
std::optional<json> corrected(const Intent& intent, const adapters::ToolVocabulary& v,
                              const json& args, const PastToolResult& result) {
    if (intent.kind != IntentKind::delegate || v.delegate_agent_field.empty()) return std::nullopt;
    const auto choices = offered_choices(result.text);
    if (choices.empty()) return std::nullopt;
    std::string pick = choices.front();
    for (const auto& agent : v.delegate_agents) {
        if (std::find(choices.begin(), choices.end(), agent) != choices.end()) {
            pick = agent;
            break;
        }
    }
    if (args.value(v.delegate_agent_field, json()) == json(pick)) return std::nullopt;
    json fixed = args;
    fixed[v.delegate_agent_field] = pick;
    return fixed;
}

std::string track_tag(const std::string& track) {
    if (track.empty()) return "main";
    std::uint32_t hash = 2166136261U; // FNV-1a: short, stable, id-safe.
    for (const unsigned char c : track)
        hash = (hash ^ c) * 16777619U;
    return fmt::format("{:08x}", hash);
}

} // namespace

std::string select_track(const Script& script, const ConversationFacts& facts) {
    // A TUI run is typed one line naming its instructions file; the model reads the task there,
    // and so does the scripted one.
    std::string task = facts.user_text;
    if (!script.subagents.empty()) {
        if (const auto file = dispatch::instructions_path_in(facts.user_text); !file.empty()) {
            if (auto text = read_file_bounded(file, 1U << 20U)) task += "\n" + *text;
        }
    }
    for (const auto& [marker, track] : script.subagents) {
        if (task.find(marker) == std::string::npos) continue;
        const bool delegated_here = std::any_of(
            facts.tool_calls.begin(), facts.tool_calls.end(), [&](const PastToolCall& c) {
                return c.arguments_json.find(marker) != std::string::npos;
            });
        if (!delegated_here) return marker;
    }
    return "";
}

int current_step(const Track& track, const ConversationFacts& facts,
                 const adapters::RefusalTexts& refusals) {
    auto step = static_cast<int>(facts.tool_calls.size());
    for (std::size_t i = 0; i < facts.tool_calls.size(); ++i) {
        if (is_retry(facts, i, refusals)) --step;
    }
    for (const auto& text : facts.assistant_texts) {
        const auto said = trimmed(text);
        const bool scripted =
            std::any_of(track.steps.begin(), track.steps.end(), [&](const Intent& i) {
                return i.kind == IntentKind::reply && trimmed(i.text) == said;
            });
        if (scripted) ++step;
    }
    return step;
}

namespace {

/// What a call_unknown step calls: the first offered tool that `vocabulary` cannot classify and
/// the conversation has not called, as a call_tool intent; nothing when none is left.
std::optional<Intent> unknown_call(const adapters::ToolVocabulary& vocabulary,
                                   const ConversationFacts& facts) {
    for (const auto& tool : facts.tools) {
        const bool called =
            std::any_of(facts.tool_calls.begin(), facts.tool_calls.end(),
                        [&](const PastToolCall& call) { return call.name == tool.name; });
        if (called || adapters::classify_tool(vocabulary, tool.name)) continue;
        Intent call;
        call.kind = IntentKind::call_tool;
        call.tool = tool.name;
        return call;
    }
    return std::nullopt;
}

/// The tool call that carries out `intent` at `step` of `track`.
Move tool_move(const std::string& track, const Intent& intent, int step,
               const ScriptContext& context, const ConversationFacts& facts) {
    auto [choice, args] = tool_and_args(intent, context, facts);
    if (!intent.args_json.empty()) {
        const auto extra = parse_json(intent.args_json).value_or(nullptr); // Checked when parsed.
        if (extra.is_object()) args.update(extra);
    }
    if (intent.kind == IntentKind::call_tool) {
        for (auto& [key, value] : args.items()) {
            if (value.is_string()) value = from_results(value.get<std::string>(), facts);
        }
    }
    Move move;
    move.kind = MoveKind::tool_call;
    move.track = track;
    move.step = step;
    move.tool = choice.name;
    move.tool_offered = choice.offered != nullptr;
    move.tool_kind = choice.offered ? choice.offered->kind : "function";
    if (choice.offered && !choice.offered->schema_json.empty()) {
        const auto schema = parse_json(choice.offered->schema_json);
        if (schema) args = fill_required(std::move(args), *schema);
    }
    move.arguments_json = args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    move.call_id = fmt::format("sonata_{}_{}", track_tag(track), step);
    return move;
}

/// The retry of step `step - 1` when the harness refused its call for its arguments and named a
/// valid choice, as a real model would make it: once, with that choice.
std::optional<Move> retry_move(const std::string& track_name, const Track& track,
                               const ScriptContext& context, const ConversationFacts& facts,
                               int step) {
    if (step <= 0 || step > static_cast<int>(track.steps.size()) || facts.tool_calls.empty())
        return std::nullopt;
    const Intent& before = track.steps[static_cast<std::size_t>(step - 1)];
    const auto last = facts.tool_calls.size() - 1;
    if (before.kind == IntentKind::reply || is_retry(facts, last, context.refusals))
        return std::nullopt;
    const auto* result = result_of(facts, last);
    if (result == nullptr || !refused_for_arguments(result->text, context.refusals))
        return std::nullopt;
    Move retry = tool_move(track_name, before, step - 1, context, facts);
    const auto fixed = corrected(before, context.vocabulary,
                                 parse_json(retry.arguments_json).value_or(nullptr), *result);
    if (!fixed) return std::nullopt;
    retry.arguments_json = fixed->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    retry.call_id += k_retry_suffix;
    return retry;
}

/// `facts` with the vocabulary's tools of deferred namespaces ("multi_agent_v1.spawn_agent")
/// listed as offered, without a schema: a model may call them without a search first.
ConversationFacts with_deferred(const ConversationFacts& facts, const adapters::ToolVocabulary& v) {
    if (facts.deferred_namespaces.empty()) return facts;
    ConversationFacts out = facts;
    for (const auto* names : {&v.write, &v.shell, &v.delegate, &v.mode_switch, &v.mode_enter}) {
        for (const auto& name : *names) {
            const auto dot = name.find('.');
            if (dot == std::string::npos || find_offered(out, name) != nullptr) continue;
            const auto ns = name.substr(0, dot);
            const auto& deferred = facts.deferred_namespaces;
            if (std::find(deferred.begin(), deferred.end(), ns) == deferred.end()) continue;
            out.tools.push_back({name, "function", "", "deferred in namespace " + ns});
        }
    }
    return out;
}

} // namespace

Move resolve_move(const Script& script, const ScriptContext& context,
                  const ConversationFacts& given) {
    const ConversationFacts facts = with_deferred(given, context.vocabulary);
    Move move;
    move.track = select_track(script, facts);
    const Track& track = move.track.empty() ? script.main : script.subagents.at(move.track);
    const int step = current_step(track, facts, context.refusals);
    if (auto retry = retry_move(move.track, track, context, facts, step)) return *retry;
    std::optional<Intent> intent;
    if (step < static_cast<int>(track.steps.size()))
        intent = track.steps[static_cast<std::size_t>(step)];
    if (intent && intent->kind == IntentKind::call_unknown)
        intent = unknown_call(context.vocabulary, facts); // none left: the track is done
    if (!intent) {
        move.kind = MoveKind::final_text;
        move.text = track.final_text;
        return move;
    }
    if (intent->kind != IntentKind::reply)
        return tool_move(move.track, *intent, step, context, facts);
    move.step = step;
    move.kind = MoveKind::text;
    move.text = intent->text;
    return move;
}

bool refused_for_arguments(std::string_view result_text, const adapters::RefusalTexts& refusals) {
    // JSON-schema and zod validators' wording, as harnesses pass it on to the model.
    static const std::vector<std::string> shared{
        "inputvalidationerror", "invalid_type",
        "invalid_enum_value",   "unrecognized_keys",
        "invalid arguments",    "invalid parameters",
        "invalid params",       "must have required property",
        "missing required",     "is a required property",
        "required parameter",   "schema validation"};
    const auto text = ascii_lower(result_text);
    if (contains_any(text, refusals.not_permitted)) return false;
    return contains_any(text, refusals.bad_arguments) || contains_any(text, shared);
}

bool refused_for_permission(std::string_view result_text, const adapters::RefusalTexts& refusals) {
    return contains_any(ascii_lower(result_text), refusals.not_permitted);
}

std::vector<std::string> offered_choices(std::string_view result_text) {
    static const std::vector<std::string> openers{"available", "valid", "one of", "expected",
                                                  "must be"};
    static const std::vector<std::string> filler{
        "agent",   "agents",  "subagent", "subagents", "type",      "types",    "are",
        "is",      "one",     "of",       "the",       "following", "values",   "value",
        "or",      "and",     "be",       "valid",     "available", "expected", "must",
        "options", "choices", "names",    "name",      "include",   "s"};
    const auto text = ascii_lower(result_text);
    std::size_t from = std::string::npos;
    for (const auto& opener : openers) {
        const auto at = text.find(opener);
        if (at != std::string::npos && (from == std::string::npos || at < from)) from = at;
    }
    std::vector<std::string> choices;
    if (from == std::string::npos) return choices;
    // The original spelling, up to the end of that line.
    const auto line_end = result_text.find('\n', from);
    const auto tail = result_text.substr(
        from, line_end == std::string_view::npos ? std::string_view::npos : line_end - from);
    std::string word;
    const auto flush = [&] {
        while (!word.empty() && (word.back() == '.' || word.back() == '-' || word.back() == ':'))
            word.pop_back();
        const auto key = ascii_lower(word);
        const bool name = !word.empty() && std::isalpha(static_cast<unsigned char>(word[0])) != 0;
        if (name && std::find(filler.begin(), filler.end(), key) == filler.end() &&
            std::find(choices.begin(), choices.end(), word) == choices.end()) {
            choices.push_back(word);
        }
        word.clear();
    };
    for (const char c : tail) {
        const bool part = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
                          c == '-' || c == '.' || c == ':';
        if (part) {
            word += c;
        } else {
            flush();
        }
    }
    flush();
    return choices;
}

std::string_view to_string(IntentKind kind) {
    switch (kind) {
    case IntentKind::write_file: return "write_file";
    case IntentKind::shell: return "shell";
    case IntentKind::delegate: return "delegate";
    case IntentKind::switch_mode: return "switch_mode";
    case IntentKind::call_tool: return "call_tool";
    case IntentKind::reply: return "reply";
    case IntentKind::write_report: return "write_report";
    case IntentKind::call_unknown: return "call_unknown";
    }
    return "reply";
}

Result<Script> parse_script(std::string_view json_text) {
    auto parsed = parse_json(json_text);
    if (!parsed && parsed.error().fault == JsonFault::too_deep) {
        return fail(ExitCode::bad_data,
                    fmt::format("script: JSON nests deeper than {} levels", k_max_json_depth));
    }
    if (!parsed) {
        return fail(ExitCode::bad_data, fmt::format("script: not valid JSON (byte {}): {}",
                                                    parsed.error().byte, parsed.error().message));
    }
    const json& root = *parsed;
    if (!root.is_object())
        return fail(ExitCode::bad_data, "script: the top level must be an object");
    return parse_script_json(root);
}

Result<Script> load_script(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return fail(ExitCode::bad_data, "cannot read script file " + path);
    // Bounded, and only a regular file: a FIFO given as --script hung `sonata model-server`.
    const auto text = read_file_bounded(path, k_max_script_bytes);
    if (!text) return tl::unexpected(text.error());
    auto script = parse_script(*text);
    if (!script) return fail(script.error().code, path + ": " + script.error().message);
    return script;
}

} // namespace sonata::probes
