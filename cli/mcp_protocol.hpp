// An MCP server connection over JSON-RPC 2.0, one message per line: framing, the protocol versions
// and their lifecycle (the handshake era, `initialize` then requests, up to 2025-11-25; and the
// stateless 2026-07-28, `server/discover` and requests that each carry their version and the
// client's capabilities in _meta), tool calls on worker threads (so pings and cancellations are
// answered meanwhile), cancellation and progress. It knows nothing of what its tools do: a server
// hands it a list of tools, each with its input schema and its body. Included by the MCP files only
// (it brings nlohmann/json).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sonata::mcp {

using nlohmann::json;

/// The longest message a connection reads; a longer line is answered with an error and skipped.
inline constexpr std::size_t k_max_message = 4U << 20U;

/// What a tool call produced: text for the model, and whether it is an error (a refusal, a run
/// that failed, a failed call).
struct ToolResult {
    std::string text;
    bool is_error = false;
};

/// Sends one progress notification, when the client asked for progress; a no-op otherwise.
using Progress = std::function<void(const std::string& message)>;

/// Set when the client cancelled the call or went away: a body that waits stops waiting.
using Stop = std::atomic<bool>;

/// Whether a tool only reads (the readOnlyHint the client sees).
enum class Access { reads, acts };

struct Tool {
    std::string name;
    std::string description;
    /// A JSON Schema subset the connection checks each call's arguments against before the body
    /// runs: an object whose properties are "string", "integer" (with minimum and maximum),
    /// "number" or "object" of strings, optionally with an enum; `required`; no other property.
    json input_schema;
    Access access = Access::acts;
    /// Runs on a worker thread with checked arguments.
    std::function<ToolResult(const json& args, const Progress&, const Stop&)> run;
};

/// Who the server is, as `initialize` answers.
struct ServerInfo {
    std::string name;
    std::string version;
    std::string instructions;
    json tool_meta = json::object(); ///< Each listed tool's `_meta`.
};

/// One connection's state. handle() takes each line the client sent; replies and notifications go
/// to `send`, one message per call, possibly from a worker thread.
class Connection {
public:
    using Send = std::function<void(const std::string& message)>;
    Connection(ServerInfo info, std::vector<Tool> tools, Send send);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    void handle(std::string_view line);
    /// Waits until every tool call in flight has answered.
    void drain();
    /// Stops every call in flight (each body sees its Stop) and joins the workers: the client is
    /// gone.
    void close();

    struct State;

private:
    std::unique_ptr<State> m_state;
};

/// Reads `fd` until end of input, handing each line to `connection` (a line longer than
/// k_max_message reaches it as one oversized line), then closes it.
void serve_lines(int fd, Connection& connection);

/// Checks `args` against a tool's input schema (see Tool::input_schema). Empty: they are fine.
std::string check_arguments(const json& args, const json& schema);

} // namespace sonata::mcp
