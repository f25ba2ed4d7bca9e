// `sonata mcp`: serves sonata's run commands as MCP tools on stdio, for Claude Code (see
// mcp_server.hpp). `sonata init` registers it; the plugin in plugin/ starts it.
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/mcp_server.hpp"

namespace sonata::cli {

void add_mcp(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "mcp", "Serve dispatch, wait, approve, status, cancel, runs, plan and harnesses as MCP "
               "tools on stdio (for Claude Code)");
    cmd->callback([&action] {
        action = [](const Context& context) -> Result<int> { return serve_mcp(context); };
    });
}

} // namespace sonata::cli
