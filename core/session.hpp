// The parent session's mode file: what the PreToolUse hook records (session-<id>.json), where it
// goes, and how `sonata plan` finds it again. The hook runs on every tool call of the user's
// session, so this file's hook path stays small: no config parsing, no harness detection.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/mode.hpp"
#include "core/result.hpp"

namespace sonata {

/// The longest session id sonata accepts (Claude Code's are 36-character UUIDs).
inline constexpr std::size_t k_max_session_id = 128;

/// The most the hook reads from stdin; larger input is abandoned and nothing is written.
inline constexpr std::size_t k_max_hook_input = 1U << 20U;

/// True when `id` is 1–128 characters of [A-Za-z0-9_-]: safe as part of one file name, so no
/// '/', "..", NUL or control character can steer a write.
bool is_safe_session_id(std::string_view id);

/// "session-<id>.json". Only call with a safe id.
std::string session_file_name(std::string_view id);

/// The fields of Claude Code's hook input that sonata uses.
struct HookInput {
    std::string session_id;
    std::string cwd;
    std::string permission_mode; ///< Raw spelling; empty when absent or not readable.
    /// False when the input broke off or turned invalid after session_id and cwd were read (a
    /// lone surrogate in tool_input, input cut at k_max_hook_input): the fields read so far stand.
    bool complete = true;

    bool operator==(const HookInput&) const = default;
};

/// Parses hook input JSON with a streaming parser that keeps the top-level fields it has read
/// when the rest is invalid or cut off (Claude Code writes session_id, cwd and permission_mode
/// before tool_input), and never builds a tree, so no nesting depth can exhaust the stack.
/// nullopt when the text is not a JSON object or `session_id` was not read as a string; in a
/// complete object, also when `cwd` is not a string or a `permission_mode` is not one. In an
/// incomplete one, a cwd not read is empty and a permission_mode not read as a string is absent. A
/// key given twice: the last session_id and cwd, and the narrowest permission_mode.
std::optional<HookInput> parse_hook_input(std::string_view json);

/// What a session file holds.
struct SessionRecord {
    std::string session_id;
    Mode mode = Mode::default_mode; ///< Already folded.
    std::int64_t updated_at = 0;    ///< Seconds since the Unix epoch, UTC.

    bool operator==(const SessionRecord&) const = default;
};

/// One JSON object: {"session_id", "mode" (Claude Code spelling), "updated_at" (ISO 8601 UTC)}.
std::string session_record_to_json(const SessionRecord& record);

/// Strict parse; anything unexpected (bad JSON, a missing or mistyped field, an unknown mode
/// spelling, an unsafe id, a bad time) is an ExitCode::bad_data error naming `source`.
Result<SessionRecord> parse_session_record(std::string_view text, const std::string& source);

/// "2026-11-01T22:00:00Z" for a Unix time, and back; nullopt unless exactly that form.
std::string format_utc(std::int64_t unix_seconds);
std::optional<std::int64_t> parse_utc(std::string_view text);

/// The hook's whole job for one input (the whole input, or its first k_max_hook_input bytes):
/// validate it, find the directory (the project's .sonata/,
/// created when only sonata.toml marks the project; else the machine config dir when it holds
/// config.toml; else nowhere) and atomically write the record there. Returns the path written, or
/// nullopt when nothing was written. Never throws, never prints.
std::optional<std::string> record_hook_input(std::string_view input,
                                             const std::map<std::string, std::string>& env,
                                             std::chrono::system_clock::time_point now);

/// `sonata hook` itself: reads at most k_max_hook_input bytes of stdin and records them (a longer
/// input is cut there: its session and mode still come first, so a wider mode never stands). Exits
/// the decision to Claude Code untouched: always returns 0, prints nothing.
int run_hook(const std::map<std::string, std::string>& env);

/// A session file that `sonata plan` found.
struct SessionLookup {
    std::string path;
    SessionRecord record;
    std::chrono::seconds age{0};
    bool stale = false; ///< Older than the configured maximum age.
};

/// Finds session-<id>.json in `project_dir`/.sonata/ (when project_dir is not empty), then in
/// `machine_dir`. nullopt when neither exists. An unsafe id is ExitCode::usage; a file that exists
/// but cannot be read or parsed is ExitCode::bad_data, never "no file".
Result<std::optional<SessionLookup>> find_session(const std::string& session_id,
                                                  const std::string& project_dir,
                                                  const std::string& machine_dir,
                                                  std::chrono::seconds max_age,
                                                  std::chrono::system_clock::time_point now);

/// The session whose file the hook wrote last, within `fresh` of `now`, for a caller that was not
/// told which session it serves: the project's files for work in `cwd` first, then the machine's.
/// When several sessions are that fresh, the one recording the narrowest mode: a guess may only
/// narrow. `cwd` is the session's own directory, where the hook writes, never one a caller names.
std::optional<std::string> freshest_session(const std::string& cwd,
                                            const std::map<std::string, std::string>& env,
                                            std::chrono::seconds fresh,
                                            std::chrono::system_clock::time_point now);

} // namespace sonata
