// Script parsing (JSON, strict: unknown keys and missing fields are errors naming their place) and
// resolution of intents against the tools a harness offered.
#include "probes/script.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/text.hpp"
#include "dispatch/contract.hpp"
#include "probes/schema_sample.hpp"

namespace sonata::probes {
namespace {

using nlohmann::json;

const std::vector<std::string>& intent_names() {
    static const std::vector<std::string> names{"write_file", "shell", "delegate",    "switch_mode",
                                                "call_tool",  "reply", "write_report"};
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
    if (top) allowed.insert(allowed.end(), {"subagents", "input_tokens"});
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
    if (auto ok = check_markers(script); !ok) return tl::unexpected(ok.error());
    return script;
}

// --- resolution -------------------------------------------------------------------------------

std::string trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return "";
    const auto last = text.find_last_not_of(" \t\r\n");
    return std::string(text.substr(first, last - first + 1));
}

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
        args[field_or(v.shell_command_field, "command")] = intent.command;
        return {choose(v.shell, "shell", facts), args};
    case IntentKind::delegate: {
        const bool has_marker = intent.task.find(intent.marker) != std::string::npos;
        args[field_or(v.delegate_prompt_field, "prompt")] =
            has_marker ? intent.task : intent.task + "\n\n" + intent.marker;
        return {choose(v.delegate, "task", facts), args};
    }
    case IntentKind::switch_mode:
        if (!intent.tool.empty())
            return {Choice{intent.tool, find_offered(facts, intent.tool)}, args};
        return {choose(v.mode_switch, "exit_plan_mode", facts), args};
    case IntentKind::call_tool: return {choose_named(intent.tool, facts), args};
    case IntentKind::reply: break;
    }
    return {Choice{intent.tool, find_offered(facts, intent.tool)}, args};
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
    for (const auto& [marker, track] : script.subagents) {
        if (facts.user_text.find(marker) == std::string::npos) continue;
        const bool delegated_here = std::any_of(
            facts.tool_calls.begin(), facts.tool_calls.end(), [&](const PastToolCall& c) {
                return c.arguments_json.find(marker) != std::string::npos;
            });
        if (!delegated_here) return marker;
    }
    return "";
}

int current_step(const Track& track, const ConversationFacts& facts) {
    auto step = static_cast<int>(facts.tool_calls.size());
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

Move resolve_move(const Script& script, const ScriptContext& context,
                  const ConversationFacts& facts) {
    Move move;
    move.track = select_track(script, facts);
    const Track& track = move.track.empty() ? script.main : script.subagents.at(move.track);
    const int step = current_step(track, facts);
    if (step >= static_cast<int>(track.steps.size())) {
        move.kind = MoveKind::final_text;
        move.text = track.final_text;
        return move;
    }
    move.step = step;
    const Intent& intent = track.steps[static_cast<std::size_t>(step)];
    if (intent.kind == IntentKind::reply) {
        move.kind = MoveKind::text;
        move.text = intent.text;
        return move;
    }
    auto [choice, args] = tool_and_args(intent, context, facts);
    if (!intent.args_json.empty()) {
        const auto extra = json::parse(intent.args_json, nullptr, false); // Checked when parsed.
        if (extra.is_object()) args.update(extra);
    }
    move.kind = MoveKind::tool_call;
    move.tool = choice.name;
    move.tool_offered = choice.offered != nullptr;
    move.tool_kind = choice.offered ? choice.offered->kind : "function";
    if (choice.offered && !choice.offered->schema_json.empty()) {
        const auto schema = json::parse(choice.offered->schema_json, nullptr, false);
        if (!schema.is_discarded()) args = fill_required(std::move(args), schema);
    }
    move.arguments_json = args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    move.call_id = fmt::format("sonata_{}_{}", track_tag(move.track), step);
    return move;
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
    }
    return "reply";
}

Result<Script> parse_script(std::string_view json_text) {
    if (!json_depth_within(json_text)) {
        return fail(ExitCode::bad_data,
                    fmt::format("script: JSON nests deeper than {} levels", k_max_json_depth));
    }
    json root;
    try {
        root = json::parse(json_text);
    } catch (const json::parse_error& e) {
        return fail(ExitCode::bad_data,
                    fmt::format("script: not valid JSON (byte {}): {}", e.byte, e.what()));
    }
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
