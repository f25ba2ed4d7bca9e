// What `sonata init` does to files, as pure functions over their text: adding and removing
// sonata's PreToolUse hook in a Claude Code settings file, and the commented sonata.toml.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.hpp"

namespace sonata::cli {

/// The command Claude Code runs for `program`: "<path>" for a sonata-hook binary, "<path> hook"
/// for sonata itself. Claude Code hands it to a shell, so a path holding anything but
/// [A-Za-z0-9/._+,:@%=-] is single-quoted.
std::string hook_command(const std::string& program);

/// True for a command hook_command() produced for an absolute path whose file name is `sonata` or
/// `sonata-hook`: what init adds, whichever sonata binary added it.
bool is_sonata_hook_command(std::string_view command);

/// The program init installs as the hook: `sonata-hook` beside `sonata_path` when it is there
/// and executable (it starts several times faster), else `sonata_path` itself.
std::string hook_program(const std::string& sonata_path);

/// A settings file before and after an edit.
struct SettingsEdit {
    std::string text; ///< New content; the old content byte for byte when unchanged.
    bool changed = false;
    bool added = false;               ///< The hook for this sonata was added.
    std::vector<std::string> removed; ///< Commands of sonata hooks taken out.
};

/// Adds {"matcher":"*","hooks":[{"type":"command","command":<command>}]} to hooks.PreToolUse,
/// creating hooks and PreToolUse when missing; sonata hooks of other sonata paths are replaced.
/// Unchanged when this command is already there and no other sonata hook is. `text` nullopt: no
/// file yet. Text that is not a JSON object, or a `hooks` that is not an object or a
/// `PreToolUse` that is not an array, is ExitCode::bad_data naming `source`.
Result<SettingsEdit> install_hook(const std::optional<std::string>& text,
                                  const std::string& command, const std::string& source);

/// Takes out every sonata hook entry; a matcher group left with no hooks goes too, and so do
/// `PreToolUse` and `hooks` when that leaves them empty. Every other setting stays as it was.
Result<SettingsEdit> uninstall_hook(const std::string& text, const std::string& source);

/// Adds the MCP server {"type": "stdio", "command": <sonata_path>, "args": ["mcp"]} as
/// mcpServers.sonata (Claude Code's .mcp.json, or ~/.claude.json for every project), keeping every
/// other key; replaces a sonata server of another sonata path. Unchanged when it is already there.
/// A server named "sonata" that is not sonata's `mcp` is left alone: ExitCode::bad_data. Invalid
/// text as install_hook.
Result<SettingsEdit> install_mcp_server(const std::optional<std::string>& text,
                                        const std::string& sonata_path, const std::string& source);

/// Takes out mcpServers.sonata when it is sonata's `mcp` (and mcpServers when that empties it).
Result<SettingsEdit> uninstall_mcp_server(const std::string& text, const std::string& source);

/// True for {"command": <absolute path ending in /sonata>, "args": ["mcp"], …}.
bool is_sonata_mcp_server(const nlohmann::ordered_json& entry);

/// sonata.toml as init creates it: every key commented out, showing its default or an example.
std::string_view project_config_template();

} // namespace sonata::cli
