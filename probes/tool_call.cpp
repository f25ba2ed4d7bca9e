// The tool call an intent resolves to (see tool_call.hpp).
#include "probes/tool_call.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>

#include "core/json_parse.hpp"
#include "core/text.hpp"
#include "dispatch/contract.hpp"

namespace sonata::probes {
namespace {

using nlohmann::json;

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

// The first preferred name the harness offered; else the first preferred name; else `fallback`.
ToolChoice choose(const std::vector<std::string>& preferred, std::string_view fallback,
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

/// `schema` itself, or the definition its top-level "$ref" names ("#/$defs/X",
/// "#/definitions/X"), as schema libraries emit them.
json dereferenced(const json& schema) {
    if (!schema.is_object() || !schema.contains("$ref") || !schema["$ref"].is_string())
        return schema;
    const std::string ref = schema["$ref"];
    for (const char* where : {"#/$defs/", "#/definitions/"}) {
        const std::string prefix = where;
        if (!ref.starts_with(prefix)) continue;
        const auto defs = schema.value(prefix.substr(2, prefix.size() - 3), json::object());
        const auto name = ref.substr(prefix.size());
        if (defs.is_object() && defs.contains(name)) return defs.at(name);
    }
    return schema;
}

/// The offered tool's schema properties: an object, empty when the tool was not offered or its
/// schema names none.
json properties_of(const OfferedTool* tool) {
    if (tool == nullptr || tool->schema_json.empty()) return json::object();
    const auto schema = dereferenced(parse_json(tool->schema_json).value_or(nullptr));
    auto properties = schema.is_object() ? schema.value("properties", json::object()) : json();
    return properties.is_object() ? properties : json::object();
}

/// The sub-agent a well-formed delegation names: one the offered tool lists (its schema's enum,
/// else its descriptions), preferring the harness's usual ones; else the first usual one. "" when
/// the harness's delegate tool names no agent, or the offered schema has no such argument.
std::string agent_for(const adapters::ToolVocabulary& v, const OfferedTool* offered) {
    if (v.delegate_agent_field.empty()) return "";
    json field;
    std::string texts = offered ? offered->description : "";
    if (const auto properties = properties_of(offered); !properties.empty()) {
        if (!properties.contains(v.delegate_agent_field)) return "";
        field = properties.at(v.delegate_agent_field);
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

/// The arguments of an offered file tool that carry a write: the file's path, its content, and
/// the text to replace (emptied, which makes an edit tool create the file), read from the tool's
/// own schema. A field inside an array of objects (a multi-edit's `edits`) is filled as its first
/// element.
struct WriteFields {
    std::string path;
    std::string content;
    std::vector<std::string> emptied;
    std::string edits; ///< An array property whose first item takes content and emptied fields.
};

/// Whether property `name` is one of `names` (letters and digits, lower-cased).
bool named_as(const std::string& name, const std::vector<std::string_view>& names) {
    const std::string key = name_key(name);
    return std::any_of(names.begin(), names.end(), [&](std::string_view n) { return key == n; });
}

const std::vector<std::string_view> k_path_names = {
    "filepath", "path", "file", "filename", "targetfile", "absolutepath", "notebookpath"};
const std::vector<std::string_view> k_content_names = {
    "content",    "contents",  "newstring", "newstr", "newtext",
    "newcontent", "newsource", "filetext",  "text",   "code"};
const std::vector<std::string_view> k_emptied_names = {"oldstring", "oldstr", "oldtext", "search"};

/// The content and emptied fields of an object schema's properties.
void content_fields(const json& properties, WriteFields& fields) {
    for (const auto& [name, value] : properties.items()) {
        if (fields.content.empty() && named_as(name, k_content_names)) fields.content = name;
        if (named_as(name, k_emptied_names)) fields.emptied.push_back(name);
    }
}

/// The property of `properties` that takes a target: `preferred` when the schema has it, else the
/// first one named as one of `names`; nullopt when none does.
std::optional<std::string> named_field(const json& properties, const std::string& preferred,
                                       const std::vector<std::string_view>& names) {
    if (!preferred.empty() && properties.contains(preferred)) return preferred;
    for (const auto& [name, value] : properties.items()) {
        if (named_as(name, names)) return name;
    }
    return std::nullopt;
}

/// named_field(), or `preferred` (else `fallback`) when the schema names no property at all (a
/// tool not offered, whose schema is unknown): nullopt only when the schema has properties and
/// none of them takes the target.
std::optional<std::string> target_field(const json& properties, const std::string& preferred,
                                        const char* fallback,
                                        const std::vector<std::string_view>& names) {
    if (properties.empty()) return field_or(preferred, fallback);
    return named_field(properties, preferred, names);
}

std::optional<WriteFields> write_fields(const OfferedTool& tool, const std::string& preferred) {
    const auto properties = properties_of(&tool);
    WriteFields fields;
    fields.path = named_field(properties, preferred, k_path_names).value_or("");
    content_fields(properties, fields);
    for (const auto& [name, value] : properties.items()) {
        if (!fields.content.empty() || !value.is_object() ||
            ascii_lower(value.value("type", "")) != "array")
            continue;
        const auto items = value.value("items", json::object());
        if (!items.is_object() || !items.value("properties", json()).is_object()) continue;
        WriteFields inner;
        content_fields(items.at("properties"), inner);
        if (inner.content.empty()) continue;
        fields.edits = name;
        fields.content = inner.content;
        fields.emptied = inner.emptied;
    }
    if (fields.path.empty() || fields.content.empty()) return std::nullopt;
    return fields;
}

const std::vector<std::string_view> k_command_names = {"command", "cmd",          "commandline",
                                                       "script",  "shellcommand", "commands"};
const std::vector<std::string_view> k_prompt_names = {"prompt",  "task",  "instructions",
                                                      "message", "query", "description"};

/// Why a call to `choice` cannot carry its target: "the offered write's schema has no argument
/// for the file's path (it takes: content, destination)".
std::string unplaced_text(const ToolChoice& choice, std::string_view what) {
    std::string takes;
    const auto properties = properties_of(choice.offered);
    for (const auto& [name, value] : properties.items())
        takes += (takes.empty() ? "" : ", ") + name;
    return "the offered " + choice.name + "'s schema has no argument for " + std::string(what) +
           " (it takes: " + takes + ")";
}

/// Fills a write's target into the fields of the offered schema that take it.
json write_args(const WriteFields& fields, const std::string& path, const std::string& content) {
    json args = json::object();
    args[fields.path] = path;
    json edit = json::object();
    json& body = fields.edits.empty() ? args : edit;
    body[fields.content] = content;
    for (const auto& name : fields.emptied)
        body[name] = "";
    if (!fields.edits.empty()) args[fields.edits] = json::array({edit});
    return args;
}

/// A write through the named tool `intent.tool`, with the target where its offered schema takes
/// it (passed_over says when it cannot).
ToolCall named_write_call(const Intent& intent, const ScriptContext& context,
                          const ConversationFacts& facts) {
    const auto choice = choose_named(intent.tool, facts);
    const auto fields = choice.offered != nullptr
                            ? write_fields(*choice.offered, context.vocabulary.write_path_field)
                            : std::nullopt;
    if (!fields) return {choice, json::object()};
    return {choice, write_args(*fields, resolve_path(intent.path, context), intent.content)};
}

/// A shell call running `command`, in the offered tool's command field.
ToolCall shell_call(const std::string& command, const ScriptContext& context,
                    const ConversationFacts& facts) {
    const auto& v = context.vocabulary;
    json args = json::object();
    if (!v.shell_args_json.empty()) {
        args = parse_json(v.shell_args_json).value_or(nullptr);
        if (!args.is_object()) args = json::object();
    }
    auto shell = choose(v.shell, "shell", facts);
    const auto properties = properties_of(shell.offered);
    const auto field = target_field(properties, v.shell_command_field, "command", k_command_names);
    if (!field) return {shell, args, unplaced_text(shell, "the command")};
    // A tool that takes a list of commands (cline's run_commands) gets this one alone.
    const bool list = properties.contains(*field) && properties[*field].is_object() &&
                      ascii_lower(properties[*field].value("type", "")) == "array";
    args[*field] = list ? json::array({command}) : json(command);
    return {shell, args};
}

const std::vector<std::string_view> k_url_names = {"url", "uri", "link", "address"};

/// Where a read or a fetch goes: the vocabulary's tools (the first offered, else the first, else
/// `tool_fallback`) and the argument for its target (`field` where the offered schema has it, else
/// one named as `names`; `field_fallback` where the schema is unknown and the vocabulary names
/// none).
struct TargetedTool {
    const std::vector<std::string>& tools;
    const char* tool_fallback;
    const std::string& field;
    const char* field_fallback;
    const std::vector<std::string_view>& names;
    std::string_view what; ///< "the URL", as a call that cannot place it says.
};

ToolCall targeted_call(const TargetedTool& t, const std::string& value,
                       const ConversationFacts& facts) {
    auto tool = choose(t.tools, t.tool_fallback, facts);
    const auto where =
        target_field(properties_of(tool.offered), t.field, t.field_fallback, t.names);
    if (!where) return {tool, json::object(), unplaced_text(tool, t.what)};
    json args = json::object();
    args[*where] = value;
    return {tool, args};
}

/// A write_file or write_report intent: the harness's file tool (a patch for one without a path
/// field), or the shell where a contract-following model would use it.
ToolCall write_call(const Intent& intent, const ScriptContext& context,
                    const ConversationFacts& facts) {
    if (intent.kind == IntentKind::write_file && !intent.tool.empty())
        return named_write_call(intent, context, facts);
    const auto& v = context.vocabulary;
    const std::string path = intent.kind == IntentKind::write_file
                                 ? resolve_path(intent.path, context)
                                 : dispatch::report_path_in(facts.user_text);
    auto write = choose(v.write, "write_file", facts);
    if (intent.kind == IntentKind::write_report && write.offered == nullptr &&
        v.write_path_field.empty()) {
        // A model following the contract uses the shell when the harness's only file tool is
        // a patch tool it does not offer (codex exec); a path-taking write tool that is not
        // offered may still be deferred behind a tool search (qwen), and is called by name.
        if (choose(v.shell, "shell", facts).offered != nullptr) {
            return shell_call("printf '%s\\n' " + shell_quoted(intent.content) + " > " +
                                  shell_quoted(path),
                              context, facts);
        }
    }
    json args = json::object();
    const auto properties = properties_of(write.offered);
    if (v.write_path_field.empty() && !v.write.empty()) {
        // A write tool without a path field takes the file inside a patch (apply_patch).
        const auto field = target_field(properties, v.write_content_field, "input", {});
        if (!field) return {write, args, unplaced_text(write, "the patch")};
        args[*field] = add_file_patch(path, intent.content);
        return {write, args};
    }
    if (!properties.empty()) {
        const auto fields = write_fields(*write.offered, v.write_path_field);
        if (!fields) {
            const bool has_path =
                named_field(properties, v.write_path_field, k_path_names).has_value();
            return {write, args,
                    unplaced_text(write, has_path ? "the file's content" : "the file's path")};
        }
        return {write, write_args(*fields, path, intent.content)};
    }
    args[field_or(v.write_path_field, "path")] = path;
    args[field_or(v.write_content_field, "content")] = intent.content;
    return {write, args};
}

/// A delegation whose task carries its marker, to a sub-agent the harness offers, inside the
/// harness's envelope where its delegate tool has one.
ToolCall delegate_call(const Intent& intent, const ScriptContext& context,
                       const ConversationFacts& facts) {
    const auto& v = context.vocabulary;
    json args = json::object();
    const bool has_marker = intent.task.find(intent.marker) != std::string::npos;
    const std::string task = has_marker ? intent.task : intent.task + "\n\n" + intent.marker;
    auto delegate = choose(v.delegate, "task", facts);
    const bool enveloped =
        !v.delegate_envelope.empty() && delegate.name == v.delegate_envelope_tool;
    const auto field = enveloped ? field_or(v.delegate_prompt_field, "prompt")
                                 : target_field(properties_of(delegate.offered),
                                                v.delegate_prompt_field, "prompt", k_prompt_names);
    std::string unplaced;
    if (field) {
        args[*field] = task;
    } else {
        unplaced = unplaced_text(delegate, "the sub-agent's task");
    }
    if (const auto agent = agent_for(v, delegate.offered); !agent.empty())
        args[v.delegate_agent_field] = agent;
    if (enveloped) {
        auto envelope = parse_json(v.delegate_envelope).value_or(nullptr);
        if (envelope.is_object()) {
            auto& inner = envelope["arguments"];
            if (!inner.is_object()) inner = json::object();
            inner.update(args);
            return {delegate, envelope};
        }
    }
    return {delegate, args, unplaced};
}

} // namespace

/// The named tool as the harness offered it: the same name, else the one offered tool whose name
/// is the same under another MCP spelling (one key ends the other, and the shorter has at least
/// five characters so that no short built-in name matches by accident). Not offered: the name.
ToolChoice choose_named(const std::string& name, const ConversationFacts& facts) {
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
    return found != nullptr ? ToolChoice{found->name, found} : ToolChoice{name, nullptr};
}

bool passed_over(const Intent& intent, const ConversationFacts& facts) {
    if (intent.kind != IntentKind::write_file || intent.tool.empty()) return false;
    const auto choice = choose_named(intent.tool, facts);
    return choice.offered == nullptr || !write_fields(*choice.offered, "");
}

const OfferedTool* find_offered(const ConversationFacts& facts, std::string_view name) {
    for (const auto& tool : facts.tools) {
        if (tool.name == name) return &tool;
    }
    return nullptr;
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

ToolCall tool_and_args(const Intent& intent, const ScriptContext& context,
                       const ConversationFacts& facts) {
    const auto& v = context.vocabulary;
    switch (intent.kind) {
    case IntentKind::write_file:
    case IntentKind::write_report: return write_call(intent, context, facts);
    case IntentKind::shell: return shell_call(intent.command, context, facts);
    case IntentKind::read_file:
        return targeted_call(
            {v.read, "read_file", v.read_path_field, "path", k_path_names, "the file's path"},
            resolve_path(intent.path, context), facts);
    case IntentKind::fetch_url:
        return targeted_call(
            {v.fetch, "web_fetch", v.fetch_url_field, "url", k_url_names, "the URL"}, intent.url,
            facts);
    case IntentKind::delegate: return delegate_call(intent, context, facts);
    case IntentKind::switch_mode:
        if (!intent.tool.empty())
            return {ToolChoice{intent.tool, find_offered(facts, intent.tool)}, json::object()};
        return {choose(context.vocabulary.mode_switch, "exit_plan_mode", facts), json::object()};
    case IntentKind::call_tool: return {choose_named(intent.tool, facts), json::object()};
    case IntentKind::reply:
    case IntentKind::call_unknown: break; // resolved to a call_tool before it gets here
    }
    return {ToolChoice{intent.tool, find_offered(facts, intent.tool)}, json::object()};
}

} // namespace sonata::probes
