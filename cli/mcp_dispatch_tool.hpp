// `sonata mcp`'s dispatch tool: hands a task to a harness no more permissive than the session,
// then waits for the run as `wait` does, or, for a client that takes tasks, answers at once with
// the run as a task. Included by the MCP files only.
#pragma once

#include "cli/app.hpp"
#include "cli/mcp_protocol.hpp"

namespace sonata::cli {

mcp::Tool dispatch_tool(const Context& context);

} // namespace sonata::cli
