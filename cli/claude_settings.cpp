// Reading Claude Code's settings and MCP files.
#include "cli/claude_settings.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/init_support.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"

namespace sonata::cli {

using nlohmann::ordered_json;

Result<ordered_json> read_claude_json(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && !ec) return nullptr;
    auto text = read_file_bounded(path, 16U << 20U);
    SONATA_TRY(text);
    auto doc = parse_ordered_json(*text, {.comments = JsonComments::ignored});
    if (!doc) {
        return fail(ExitCode::bad_data, path + ": " +
                                            (doc.error().fault == JsonFault::too_deep
                                                 ? doc.error().message
                                                 : "not valid JSON (" + doc.error().message + ")"));
    }
    if (!doc->is_object()) return fail(ExitCode::bad_data, path + ": not a JSON object");
    return std::move(*doc);
}

const ordered_json* member(const ordered_json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    const auto found = object.find(key);
    return found == object.end() ? nullptr : &*found;
}

std::string hooks_shape_problem(const ordered_json& settings) {
    const ordered_json* hooks = member(settings, "hooks");
    if (hooks == nullptr) return {};
    if (!hooks->is_object()) return "'hooks' is not an object";
    const ordered_json* pre = member(*hooks, "PreToolUse");
    if (pre != nullptr && !pre->is_array()) return "'hooks.PreToolUse' is not an array";
    return {};
}

std::optional<std::string> command_of(const ordered_json& entry) {
    const ordered_json* type = member(entry, "type");
    const ordered_json* command = member(entry, "command");
    if (type == nullptr || *type != "command" || command == nullptr || !command->is_string())
        return std::nullopt;
    return command->get<std::string>();
}

bool has_sonata_hook(const ordered_json& settings) {
    const ordered_json* hooks = member(settings, "hooks");
    const ordered_json* pre = hooks == nullptr ? nullptr : member(*hooks, "PreToolUse");
    if (pre == nullptr || !pre->is_array()) return false;
    for (const auto& group : *pre) {
        const ordered_json* entries = member(group, "hooks");
        if (entries == nullptr || !entries->is_array()) continue;
        for (const auto& hook : *entries) {
            const auto command = command_of(hook);
            if (command && is_sonata_hook_command(*command)) return true;
        }
    }
    return false;
}

bool has_sonata_server(const ordered_json& doc) {
    const ordered_json* servers = member(doc, "mcpServers");
    const ordered_json* sonata = servers == nullptr ? nullptr : member(*servers, "sonata");
    return sonata != nullptr && is_sonata_mcp_server(*sonata);
}

} // namespace sonata::cli
