// `sonata mcp`'s tools for worktree runs — diff, apply, discard — each the same library call as
// its subcommand. `apply` writes to the user's working tree, so it obeys the parent's mode like
// any write: a session in plan mode is refused. Included by the MCP files only.
#pragma once

#include <vector>

#include "cli/app.hpp"
#include "cli/mcp_protocol.hpp"

namespace sonata::cli {

std::vector<mcp::Tool> worktree_tools(const Context& context);

} // namespace sonata::cli
