// Claude Code's settings and MCP files as sonata reads them, for doctor and init alike: one reader
// of such a file, one rule for the shape its hooks must have, one recognition of sonata's own hook
// and MCP server entries.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/result.hpp"

namespace sonata::cli {

/// A Claude Code JSON file's content: null when it is missing; an error saying why (file first)
/// when it cannot be read, is not JSON, nests too deep or is not an object.
Result<nlohmann::ordered_json> read_claude_json(const std::string& path);

/// object[key], or nullptr when `object` is not an object or has no `key`.
const nlohmann::ordered_json* member(const nlohmann::ordered_json& object, const char* key);

/// Why Claude Code could not take hooks from `settings` ("'hooks' is not an object", "'hooks.
/// PreToolUse' is not an array"); empty when their shape is right or there are none.
std::string hooks_shape_problem(const nlohmann::ordered_json& settings);

/// The command of a hook entry of type "command"; nullopt for anything else, whatever the types
/// of its fields (a settings file is the user's, and may hold anything).
std::optional<std::string> command_of(const nlohmann::ordered_json& entry);

/// Whether `settings` has sonata's PreToolUse hook (an entry of type "command" whose command is
/// sonata's hook, is_sonata_hook_command).
bool has_sonata_hook(const nlohmann::ordered_json& settings);

/// Whether an MCP file (`.mcp.json`, a `~/.claude.json` or one of its projects) defines sonata's
/// server as "sonata".
bool has_sonata_server(const nlohmann::ordered_json& doc);

} // namespace sonata::cli
