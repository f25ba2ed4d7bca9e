// The tool census's classification of offered tool names.
#include "adapters/support/tool_census.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace sonata::adapters {
namespace {

bool listed(const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::optional<ToolClass> exactly(const ToolVocabulary& v, std::string_view name) {
    if (listed(v.write, name)) return ToolClass::file_write;
    if (std::any_of(v.write_doors.begin(), v.write_doors.end(),
                    [&](const WriteDoor& door) { return door.tool == name; }))
        return ToolClass::file_write;
    if (listed(v.shell, name)) return ToolClass::shell;
    if (listed(v.delegate, name)) return ToolClass::delegate;
    if (listed(v.mode_switch, name) || listed(v.mode_enter, name)) return ToolClass::mode_switch;
    if (listed(v.read, name)) return ToolClass::read_only;
    if (listed(v.fetch, name)) return ToolClass::other;
    for (const auto& tool : v.known)
        if (tool.name == name) return tool.what;
    return std::nullopt;
}

} // namespace

std::string_view to_string(ToolClass tool_class) {
    switch (tool_class) {
    case ToolClass::read_only: return "read-only";
    case ToolClass::file_write: return "file-write";
    case ToolClass::shell: return "shell";
    case ToolClass::delegate: return "delegate";
    case ToolClass::mode_switch: return "mode-switch";
    case ToolClass::mcp: return "mcp";
    case ToolClass::other: return "other";
    }
    return "other";
}

std::optional<ToolClass> classify_tool(const ToolVocabulary& vocabulary, std::string_view name) {
    if (auto found = exactly(vocabulary, name)) return found;
    if (name.rfind("mcp__", 0) == 0) return ToolClass::mcp;
    if (const auto dot = name.rfind('.'); dot != std::string_view::npos && dot + 1 < name.size())
        return exactly(vocabulary, name.substr(dot + 1));
    return std::nullopt;
}

} // namespace sonata::adapters
