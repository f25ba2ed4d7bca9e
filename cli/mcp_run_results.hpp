// What `sonata mcp` tells the model about a run, the same whether a tool waited for it or a task
// reports it: a header (the run, its harness, the parent's mode), the report or the state, how to
// go on, and the same as structured content fitting run_output_schema(). Included by the MCP
// files only.
#pragma once

#include <string>
#include <string_view>

#include "cli/mcp_protocol.hpp"
#include "dispatch/receipt.hpp"

namespace sonata::cli {

/// The longest report returned inline; the rest is left to `sonata log ID` and the report file.
inline constexpr std::size_t k_inline_report_chars = 100000;

/// The line that says where the parent's mode came from.
std::string parent_line(std::string_view mode, const std::string& source,
                        const std::string& session_id);

/// "run ID: harness@version in MODE mode", the parent's mode, the harnesses passed over and the
/// warnings, as the receipt holds them.
std::string run_header(const dispatch::Receipt& receipt);

/// The run's report or status after `header`, and how to go on (wait, approve), naming the run's
/// id; an error when the run failed, timed out or was lost.
mcp::ToolResult tell(const std::string& run_dir, const dispatch::Receipt& receipt,
                     const std::string& header);

/// One line about a run (status, cancel), with the run as data.
mcp::ToolResult told(const dispatch::Receipt& receipt, std::string text);

/// The run's facts as structured content holds them, without the text.
mcp::json run_facts(const dispatch::Receipt& receipt);

/// A result that names no run (a refusal, an error): `state` is "refused" or "error".
mcp::ToolResult untold(std::string text, std::string_view state);

/// The output schema of the tools that answer about a run: the run's facts and the text.
mcp::json run_output_schema();

} // namespace sonata::cli
