// `sonata mcp`: serves sonata's run commands as MCP tools (mcp_tools.hpp) on stdio, one JSON-RPC
// message per line (mcp_protocol.hpp), for Claude Code; only protocol goes to stdout. `sonata
// init` registers it; the plugin in plugin/ starts it.
#include <unistd.h>

#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/mcp_protocol.hpp"
#include "cli/mcp_tools.hpp"

namespace sonata::cli {
namespace {

/// Serves stdin and stdout until end of input.
int serve_mcp(const Context& context) {
    mcp::Connection connection(sonata_server_info(context), sonata_tools(context),
                               [](const std::string& message) {
                                   std::cout << message << '\n' << std::flush;
                               });
    mcp::serve_lines(STDIN_FILENO, connection);
    return 0;
}

} // namespace

void add_mcp(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "mcp", "Serve dispatch, wait, approve, status, cancel, runs, plan and harnesses as MCP "
               "tools on stdio (for Claude Code)");
    cmd->callback([&action] {
        action = [](const Context& context) -> Result<int> { return serve_mcp(context); };
    });
}

} // namespace sonata::cli
