// `sonata mcp`: an MCP server on stdio (JSON-RPC 2.0, one message per line) whose tools are
// sonata's run commands — dispatch, wait, approve, status, cancel, runs, plan, harnesses — each
// the same library call as its subcommand. Only protocol goes to stdout.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "cli/app.hpp"

namespace sonata::cli {

/// The longest message the server reads; a longer line is answered with an error and skipped.
inline constexpr std::size_t k_max_mcp_message = 4U << 20U;

/// One connection's state. handle() takes each line the client sent; replies and notifications go
/// to `send`, one message per call, possibly from a worker thread (a blocking tool call runs on
/// its own thread, so pings and cancellations are answered meanwhile).
class McpServer {
public:
    using Send = std::function<void(const std::string& message)>;
    McpServer(Context context, Send send);
    ~McpServer();
    McpServer(const McpServer&) = delete;
    McpServer& operator=(const McpServer&) = delete;

    void handle(std::string_view line);
    /// Waits until every tool call in flight has answered.
    void drain();
    /// Stops every wait in flight (their runs go on) and joins the workers: the client is gone.
    void close();

    struct State;

private:
    std::unique_ptr<State> m_state;
};

/// Serves stdin/stdout until end of input.
int serve_mcp(const Context& context);

} // namespace sonata::cli
