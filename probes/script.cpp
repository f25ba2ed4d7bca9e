// Script parsing (JSON, strict: unknown keys and missing fields are errors naming their place);
// resolution against a conversation is script_moves.cpp's.
#include "probes/script.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_parse.hpp"

namespace sonata::probes {
namespace {

using nlohmann::json;

const std::vector<std::string>& intent_names() {
    static const std::vector<std::string> names{
        "write_file", "shell",        "delegate",     "switch_mode", "call_tool",
        "reply",      "write_report", "call_unknown", "read_file",   "fetch_url"};
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
        {IntentKind::write_file, {"path", "content", "tool"}, 2},
        {IntentKind::shell, {"command"}, 1},
        {IntentKind::delegate, {"task", "marker"}, 2},
        {IntentKind::switch_mode, {"tool"}, 0},
        {IntentKind::call_tool, {"name"}, 1},
        {IntentKind::reply, {"text"}, 1},
        {IntentKind::write_report, {"content"}, 1},
        {IntentKind::call_unknown, {}, 0},
        {IntentKind::read_file, {"path"}, 1},
        {IntentKind::fetch_url, {"url"}, 1},
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
    else if (key == "url")
        intent.url = std::move(value);
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
    SONATA_TRY(check_keys(step, allowed, where));
    Intent intent;
    intent.kind = shape->kind;
    for (std::size_t i = 0; i < shape->keys.size(); ++i) {
        const auto& key = shape->keys[i];
        if (!step.contains(key)) {
            if (i < shape->required) return tl::unexpected(bad(where, "missing \"" + key + "\""));
            continue;
        }
        auto value = string_field(step, key, where);
        SONATA_TRY(value);
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
    SONATA_TRY(check_keys(object, allowed, where.empty() ? "top level" : where));
    const std::string prefix = where.empty() ? "" : where + ".";
    Track track;
    if (!object.contains("steps") || !object["steps"].is_array()) {
        return tl::unexpected(bad(prefix + "steps", "missing, or not an array"));
    }
    for (std::size_t i = 0; i < object["steps"].size(); ++i) {
        auto intent = parse_intent(object["steps"][i], fmt::format("{}steps[{}]", prefix, i));
        SONATA_TRY(intent);
        track.steps.push_back(std::move(*intent));
    }
    if (object.contains("final")) {
        auto final_text = string_field(object, "final", where.empty() ? "top level" : where);
        SONATA_TRY(final_text);
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
    SONATA_TRY(main);
    Script script;
    script.main = std::move(*main);
    if (root.contains("subagents")) {
        if (!root["subagents"].is_object()) {
            return tl::unexpected(bad("subagents", "must be an object keyed by marker"));
        }
        for (const auto& [marker, sub] : root["subagents"].items()) {
            auto track = parse_track(sub, "subagents." + marker, false);
            SONATA_TRY(track);
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
    SONATA_TRY(check_markers(script));
    return script;
}

} // namespace

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
    case IntentKind::read_file: return "read_file";
    case IntentKind::fetch_url: return "fetch_url";
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
    SONATA_TRY(text);
    auto script = parse_script(*text);
    if (!script) return fail(script.error().code, path + ": " + script.error().message);
    return script;
}

} // namespace sonata::probes
