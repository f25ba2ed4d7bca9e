// `sonata mcp`'s tools — dispatch, wait, approve, status, cancel, runs, plan, harnesses — each the
// same library call as its subcommand, with its input schema beside its body. Included by the MCP
// files only (it brings nlohmann/json through mcp_protocol.hpp).
#pragma once

#include <vector>

#include "cli/app.hpp"
#include "cli/mcp_protocol.hpp"

namespace sonata::cli {

/// sonata's name, version, instructions for the model, the `_meta` each tool is listed with, and
/// its runs as tasks, for a server started in `context`.
mcp::ServerInfo sonata_server_info(const Context& context);

/// The tools, for a server started in `context` (the parent session's own directory).
std::vector<mcp::Tool> sonata_tools(const Context& context);

} // namespace sonata::cli
