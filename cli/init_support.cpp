// Settings-file edits for `sonata init` on nlohmann::ordered_json, so every key keeps its place,
// and the commented project config.
#include "cli/init_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli/claude_settings.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/text.hpp"

namespace sonata::cli {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view k_hook_suffix = " hook";
constexpr std::string_view k_hook_program = "sonata-hook";
/// |exponent| beyond which every JSON number is 0 or infinite as a double.
constexpr long long k_exponent_limit = 1'000'000'000;
/// What a rewrite may add beyond twice the file's size: the hook entry, indented.
constexpr std::size_t k_room_for_hook = 4096;

std::string_view file_name(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_shell_safe(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("/._+,:@%=-").find(c) != std::string_view::npos;
}

/// Undoes hook_command's quoting of one word; nullopt when `word` is not in that form.
std::optional<std::string> unquote_word(std::string_view word) {
    if (word.empty()) return std::nullopt;
    if (word.front() != '\'') {
        for (const char c : word) {
            if (!is_shell_safe(c)) return std::nullopt;
        }
        return std::string(word);
    }
    std::string out;
    std::size_t i = 0;
    while (i < word.size()) {
        if (word[i] == '\'') {
            const auto close = word.find('\'', i + 1);
            if (close == std::string_view::npos) return std::nullopt;
            out.append(word.substr(i + 1, close - i - 1));
            i = close + 1;
        } else if (word[i] == '\\' && i + 1 < word.size()) {
            out += word[i + 1];
            i += 2;
        } else {
            return std::nullopt;
        }
    }
    return out;
}

/// Sign, significant digits and exponent of a JSON number's decimal value: "1.50e3" and "1500"
/// give the same triple, "12345678901234567890123" and "1.2345678901234568e+22" do not.
std::tuple<bool, std::string, long long> decimal_value(std::string_view number) {
    const bool negative = !number.empty() && number.front() == '-';
    if (negative) number.remove_prefix(1);
    const auto e = number.find_first_of("eE");
    long long exponent = 0;
    if (e != std::string_view::npos) {
        // Saturated far beyond any double's range, so the digit arithmetic below cannot overflow.
        exponent = std::clamp(std::strtoll(std::string(number.substr(e + 1)).c_str(), nullptr, 10),
                              -k_exponent_limit, k_exponent_limit);
        number = number.substr(0, e);
    }
    std::string digits;
    for (const char c : number) {
        if (c != '.') digits += c;
    }
    const auto point = number.find('.');
    if (point != std::string_view::npos)
        exponent -= static_cast<long long>(number.size() - point - 1);
    const auto first = digits.find_first_not_of('0');
    if (first == std::string::npos) return {false, "0", 0};
    digits.erase(0, first);
    while (digits.back() == '0') {
        digits.pop_back();
        ++exponent;
    }
    return {negative, digits, exponent};
}

/// Finds the first number in the text that nlohmann would write back with another value (it
/// reads numbers beyond 64-bit integers, and decimals, as doubles).
class NumberCheck : public nlohmann::json_sax<ordered_json> {
public:
    std::optional<std::pair<std::string, std::string>> changed; ///< As written, as it would be.

    bool number_float(number_float_t value, const string_t& text) override {
        const std::string rewritten = ordered_json(value).dump();
        if (!changed && decimal_value(text) != decimal_value(rewritten))
            changed.emplace(text, rewritten);
        return true;
    }
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }
};

/// The parsed settings object, or a bad_data error; `text` nullopt gives an empty object.
Result<ordered_json> parse_settings(const std::optional<std::string>& text,
                                    const std::string& source) {
    if (!text) return ordered_json::object();
    if (!json_depth_within(*text)) {
        return fail(ExitCode::bad_data, source + ": nested deeper than " +
                                            std::to_string(k_max_json_depth) +
                                            " levels (the file was left untouched)");
    }
    NumberCheck numbers;
    ordered_json::sax_parse(*text, &numbers);
    if (numbers.changed) {
        return fail(ExitCode::bad_data,
                    source + ": holds the number " + numbers.changed->first +
                        ", which rewriting would change to " + numbers.changed->second +
                        "; sonata init does not rewrite a file it cannot reproduce "
                        "exactly (the file was left untouched)");
    }
    auto parsed = parse_ordered_json(*text);
    if (!parsed) {
        return fail(ExitCode::bad_data,
                    source + ": not valid JSON; fix or move it, then run `sonata init` again (the "
                             "file was left untouched)");
    }
    ordered_json doc = std::move(*parsed);
    if (!doc.is_object())
        return fail(ExitCode::bad_data,
                    source + ": not a JSON object (the file was left untouched)");
    if (const auto problem = hooks_shape_problem(doc); !problem.empty())
        return fail(ExitCode::bad_data, source + ": " + problem + " (the file was left untouched)");
    return doc;
}

bool is_command_hook(const ordered_json& entry, std::string_view command) {
    const auto found = command_of(entry);
    return found && *found == command;
}

std::optional<std::string> sonata_command_of(const ordered_json& entry) {
    auto command = command_of(entry);
    if (!command || !is_sonata_hook_command(*command)) return std::nullopt;
    return command;
}

/// Removes sonata hook entries (all of them, or all but `keep`) from PreToolUse; drops groups that
/// this leaves without hooks. Returns the commands removed.
std::vector<std::string> remove_sonata_entries(ordered_json& pre_tool_use,
                                               const std::string& keep) {
    std::vector<std::string> removed;
    for (auto group = pre_tool_use.begin(); group != pre_tool_use.end();) {
        if (!group->is_object() || !group->contains("hooks") || !(*group)["hooks"].is_array()) {
            ++group;
            continue;
        }
        ordered_json& hooks = (*group)["hooks"];
        const std::size_t before = removed.size();
        for (auto entry = hooks.begin(); entry != hooks.end();) {
            const auto command = sonata_command_of(*entry);
            if (command && *command != keep) {
                removed.push_back(*command);
                entry = hooks.erase(entry);
            } else {
                ++entry;
            }
        }
        group = removed.size() > before && hooks.empty() ? pre_tool_use.erase(group) : group + 1;
    }
    return removed;
}

bool has_command(const ordered_json& pre_tool_use, const std::string& command) {
    for (const auto& group : pre_tool_use) {
        if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) continue;
        for (const auto& entry : group["hooks"]) {
            if (is_command_hook(entry, command)) return true;
        }
    }
    return false;
}

/// The new text in the style of the old: indented unless the old file was on one line. A result
/// far larger than what was read (deep nesting indents quadratically) is refused.
Result<std::string> render(const ordered_json& doc, const std::optional<std::string>& before,
                           const std::string& source) {
    const bool one_line = before && before->find('\n') == std::string::npos;
    std::string text = one_line ? doc.dump() : doc.dump(2) + "\n";
    const std::size_t read = before ? before->size() : 0;
    if (text.size() > 2 * read + k_room_for_hook) {
        return fail(ExitCode::bad_data,
                    source + ": rewriting it would grow it from " + std::to_string(read) + " to " +
                        std::to_string(text.size()) + " bytes (the file was left untouched)");
    }
    return text;
}

} // namespace

std::string hook_command(const std::string& program) {
    const std::string_view suffix = file_name(program) == k_hook_program ? "" : k_hook_suffix;
    bool safe = !program.empty();
    for (const char c : program)
        safe = safe && is_shell_safe(c);
    if (safe) return program + std::string(suffix);
    std::string quoted = "'";
    for (const char c : program)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'" + std::string(suffix);
}

bool is_sonata_hook_command(std::string_view command) {
    const bool suffixed = command.size() > k_hook_suffix.size() &&
                          command.substr(command.size() - k_hook_suffix.size()) == k_hook_suffix;
    const auto path =
        unquote_word(suffixed ? command.substr(0, command.size() - k_hook_suffix.size()) : command);
    if (!path || path->front() != '/' || hook_command(*path) != command) return false;
    return file_name(*path) == (suffixed ? "sonata" : k_hook_program);
}

std::string hook_program(const std::string& sonata_path) {
    const auto slash = sonata_path.rfind('/');
    if (slash == std::string::npos) return sonata_path;
    const std::string beside = sonata_path.substr(0, slash + 1) + std::string(k_hook_program);
    return is_executable_file(beside) ? beside : sonata_path;
}

Result<SettingsEdit> install_hook(const std::optional<std::string>& text,
                                  const std::string& command, const std::string& source) {
    auto doc = parse_settings(text, source);
    SONATA_TRY(doc);
    SettingsEdit edit;
    ordered_json& pre = (*doc)["hooks"]["PreToolUse"];
    if (pre.is_null()) pre = ordered_json::array();
    edit.removed = remove_sonata_entries(pre, command);
    if (!has_command(pre, command)) {
        pre.push_back(
            {{"matcher", "*"},
             {"hooks", ordered_json::array({{{"type", "command"}, {"command", command}}})}});
        edit.added = true;
    }
    edit.changed = edit.added || !edit.removed.empty();
    if (!edit.changed && text) {
        edit.text = *text;
        return edit;
    }
    auto rendered = render(*doc, text, source);
    SONATA_TRY(rendered);
    edit.text = std::move(*rendered);
    return edit;
}

Result<SettingsEdit> uninstall_hook(const std::string& text, const std::string& source) {
    auto doc = parse_settings(text, source);
    SONATA_TRY(doc);
    SettingsEdit edit;
    edit.text = text;
    if (!doc->contains("hooks") || !(*doc)["hooks"].contains("PreToolUse")) return edit;
    ordered_json& hooks = (*doc)["hooks"];
    edit.removed = remove_sonata_entries(hooks["PreToolUse"], std::string());
    if (edit.removed.empty()) return edit;
    if (hooks["PreToolUse"].empty()) hooks.erase("PreToolUse");
    if (hooks.empty()) doc->erase("hooks");
    edit.changed = true;
    auto rendered = render(*doc, text, source);
    SONATA_TRY(rendered);
    edit.text = std::move(*rendered);
    return edit;
}

bool is_sonata_mcp_server(const ordered_json& entry) {
    if (!entry.is_object()) return false;
    const auto command = entry.find("command");
    const auto args = entry.find("args");
    if (command == entry.end() || !command->is_string() || args == entry.end()) return false;
    const std::string path = command->get<std::string>();
    return !path.empty() && path.front() == '/' && file_name(path) == "sonata" &&
           *args == ordered_json::array({"mcp"});
}

Result<SettingsEdit> install_mcp_server(const std::optional<std::string>& text,
                                        const std::string& sonata_path, const std::string& source) {
    auto doc = parse_settings(text, source);
    SONATA_TRY(doc);
    SettingsEdit edit;
    ordered_json& servers = (*doc)["mcpServers"];
    if (servers.is_null()) servers = ordered_json::object();
    if (!servers.is_object())
        return fail(ExitCode::bad_data, source + ": mcpServers is not an object");
    const ordered_json entry = {{"type", "stdio"}, {"command", sonata_path}, {"args", {"mcp"}}};
    if (servers.contains("sonata")) {
        const ordered_json& old = servers["sonata"];
        if (!is_sonata_mcp_server(old)) {
            return fail(ExitCode::bad_data,
                        source + ": it already has an MCP server named \"sonata\" that is not "
                                 "`sonata mcp`; the file was left untouched");
        }
        if (old["command"] == sonata_path) {
            edit.text = text.value_or("");
            return edit;
        }
        edit.removed.push_back(old["command"].get<std::string>() + " mcp");
    }
    servers["sonata"] = entry;
    edit.added = true;
    edit.changed = true;
    auto rendered = render(*doc, text, source);
    SONATA_TRY(rendered);
    edit.text = std::move(*rendered);
    return edit;
}

Result<SettingsEdit> uninstall_mcp_server(const std::string& text, const std::string& source) {
    auto doc = parse_settings(text, source);
    SONATA_TRY(doc);
    SettingsEdit edit;
    edit.text = text;
    const auto servers = doc->find("mcpServers");
    if (servers == doc->end() || !servers->is_object() || !servers->contains("sonata") ||
        !is_sonata_mcp_server((*servers)["sonata"])) {
        return edit;
    }
    edit.removed.push_back((*servers)["sonata"]["command"].get<std::string>() + " mcp");
    servers->erase("sonata");
    if (servers->empty()) doc->erase("mcpServers");
    edit.changed = true;
    auto rendered = render(*doc, text, source);
    SONATA_TRY(rendered);
    edit.text = std::move(*rendered);
    return edit;
}

std::string_view project_config_template() {
    return R"(# sonata's settings for this project. This file also tells `sonata hook` to
# record the Claude Code session's permission mode in .sonata/ beside it. Every setting is
# optional: uncomment a line to change it. The values shown are the defaults; roles and
# harnesses are examples.

# When a property a mapping relies on was never probed on this machine: "warn" runs with a
# warning naming `sonata probe`, "strict" refuses.
# gate = "warn"

# A --max-budget-usd the harness cannot enforce itself (every harness but claude): "warn" runs
# without the limit, with a warning; "strict" refuses.
# budget = "warn"

# A session mode file older than this many seconds is stale: sonata warns and uses the narrower of
# its mode and "default".
# session_max_age_seconds = 43200

# [timeouts]
# version_seconds = 15   # how long a harness's --version may take
# probe_seconds = 120    # how long one probe cell may take

# A role: "read-only" roles always run as plan; "write" roles run in the session's mode.
# [roles.reviewer]
# kind = "read-only"
# harness = "claude"
# model = "sonnet"

# Per-harness settings: how many of its runs may work at once on this machine (0: no limit;
# opencode's default is 1, since its runs share one database). An executable to use instead of the
# one found on PATH, and extra arguments, go in your machine config
# (~/.config/sonata/config.toml), never here: this file comes with the repository.
# [harnesses.claude]
# max_concurrent = 0
)";
}

} // namespace sonata::cli
