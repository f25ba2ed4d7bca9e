// What `sonata mcp`'s tools share: their argument schemas, the request a tool plans, the
// workspace check, and waiting on a run while telling the client how it goes. Included by the MCP
// files only.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "adapters/support/pipeline.hpp"
#include "cli/app.hpp"
#include "cli/mcp_protocol.hpp"
#include "dispatch/receipt.hpp"

namespace sonata::cli {

using Seconds = std::chrono::seconds;

/// The default window of a tool that waits: shorter than a client's own limit for a call it
/// waits on (Claude Code moves a call to the background after 120 s), so the model always gets
/// the run's id back.
inline constexpr Seconds k_mcp_window{100};
/// How long an answer to an approval card, from a tool or a task, may take to reach the harness.
inline constexpr Seconds k_approve_window{15};

mcp::ToolResult error_result(const Error& error);
std::string text_arg(const mcp::json& args, const char* key);

mcp::json string_prop(const char* description);
mcp::json schema(mcp::json properties, mcp::json required = mcp::json::array());
mcp::json id_prop();
mcp::json window_prop();
mcp::json role_prop();
mcp::json harness_prop();

/// The request every tool that plans builds: the parent's session as the hook recorded it, in the
/// directory the server was started for (the session's own). A `cwd` argument moves the
/// workspace only: a nested directory with a sonata.toml of its own is a project whose session
/// files anything that writes in the workspace may have planted.
adapters::DispatchRequest base_request(const mcp::json& args, const Context& context);

/// The workspace a tool call names must be a directory inside this session's own (symlinks
/// resolved): the parent's modes grant edits there, so a dispatch elsewhere would be wider.
/// Empty when it is.
std::string checked_dir(const std::string& cwd, const std::string& session_dir);

/// Waits up to `window` while the run is going, sending `describe(receipt)` as progress every few
/// seconds; the receipt then (the run may go on).
Result<dispatch::Receipt>
watch(const std::string& run_dir, Seconds window, const mcp::Progress& progress,
      const mcp::Stop& stop, const std::function<std::string(const dispatch::Receipt&)>& describe);

/// Waits up to `window` for the run to leave `running`/`starting`, with its state and last output
/// line as progress; then tells (mcp_run_results.hpp), after `prefix`.
mcp::ToolResult wait_and_tell(const std::string& run_dir, Seconds window,
                              const mcp::Progress& progress, const mcp::Stop& stop,
                              const std::string& prefix);

/// The directory of the run the call's `id` names (checked: an empty or hostile id is an error).
Result<std::string> named_run(const mcp::json& args, const Context& context);

/// The call's window_seconds, or the configured window, no longer than k_mcp_window.
Seconds window_of(const mcp::json& args, const Context& context);

} // namespace sonata::cli
