// Repository files a harness reads (project settings, MCP definitions, startup hooks) as the
// hostile-workspace and mcp-reachability probes write them, and the session files a finished run
// leaves under HOME, from which resume-keeps-mode recovers the session id.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "adapters/adapter.hpp"

namespace sonata::adapters::project {

/// The server name every project MCP definition below uses.
inline constexpr const char* k_mcp_server = "sonata-canary";
/// The one tool `sonata mcp-canary` offers.
inline constexpr const char* k_mcp_tool = "touch";

/// `{"mcpServers":{"sonata-canary":{"command":argv[0],"args":argv[1..]}}}`, the format Claude Code,
/// Gemini CLI and Qwen Code read, merged into `base` (which may hold other settings).
std::string mcp_servers_json(const std::vector<std::string>& server_argv, std::string base = "{}");

/// A TOML basic string for `text` (a JSON string is one: same escapes, double quotes).
std::string toml_string(const std::string& text);

/// A TOML array of strings.
std::string toml_array(const std::vector<std::string>& items);

/// `touch <canary>`: the command line a hostile hook or MCP server definition runs. Harnesses run
/// hook commands through their own shell; this one has no quoting to get wrong.
std::string touch_command(const std::string& canary);

/// A `hooks.SessionStart` value in Claude Code's hooks format, which Gemini CLI and Qwen Code read
/// too: one command hook running touch_command(canary).
nlohmann::ordered_json session_start_hooks(const std::string& canary);

/// A project MCP server definition, marked trusted, that runs `touch <canary>` when started.
nlohmann::ordered_json touch_mcp_server(const std::string& canary);

/// The newest regular file below `dir` (recursively, at most `depth` levels) whose name satisfies
/// `accept` and, when given, whose path satisfies `keep` (asked only of a file newer than the best
/// so far); empty when there is none.
std::string newest_file(const std::string& dir,
                        const std::function<bool(const std::string&)>& accept, int depth = 4,
                        const std::function<bool(const std::string&)>& keep = {});

/// The text of `path`, at most `max_bytes` of it; empty when unreadable.
std::string read_head(const std::string& path, std::size_t max_bytes = 64U * 1024U);

/// The string value of the first `"key":"…"` in `text` (JSON, compact or spaced); empty when
/// absent.
std::string json_string_field(const std::string& text, const std::string& key);

/// Every line of `text` that parses as a JSON object, in order (a JSONL stream; other lines, such
/// as a harness's plain-text remarks, are skipped).
std::vector<nlohmann::json> json_object_lines(const std::string& text);

/// The string `object[key]`; empty when `object` is no object or the member is absent or not a
/// string (never throws).
std::string string_member(const nlohmann::json& object, const char* key);

/// `object[key]` as a count; nullopt when `object` is no object or the member is absent or not a
/// whole number (never throws).
std::optional<long long> count_member(const nlohmann::json& object, const char* key);

/// The tokens `object["usage"]` counts under `input_key` and `output_key`, no dollar figure; an
/// unknown cost when `object` has no usage object (never throws).
RunCost usage_tokens(const nlohmann::json& object, const char* input_key, const char* output_key);

/// The first UUID (8-4-4-4-12 hex) in `text`; empty when none.
std::string first_uuid(const std::string& text);

} // namespace sonata::adapters::project
