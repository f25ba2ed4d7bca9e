// An MCP server connection over JSON-RPC 2.0, one message per line: framing, the protocol versions
// and their lifecycle (the handshake era, `initialize` then requests, up to 2025-11-25; and the
// stateless 2026-07-28, `server/discover` and requests that each carry their version and the
// client's capabilities in _meta), tool calls on worker threads (so pings and cancellations are
// answered meanwhile), cancellation and progress, and the tasks extension of 2026-07-28 (a call
// answered at once with a task the client then polls, updates and cancels). It knows nothing of
// what its tools do: a server hands it a list of tools, each with its schemas and its body, and a
// store its tasks live in. Included by the MCP files only (it brings nlohmann/json).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace sonata::mcp {

using nlohmann::json;

/// The longest message a connection reads; a longer line is answered with an error and skipped.
inline constexpr std::size_t k_max_message = 4U << 20U;

/// What a tool call produced: text for the model, whether it is an error (a refusal, a run that
/// failed, a failed call), and the same as data fitting the tool's output schema (null: none).
struct ToolResult {
    std::string text;
    bool is_error = false;
    json structured = nullptr;
};

/// Sends one progress notification, when the client asked for progress; a no-op otherwise.
using Progress = std::function<void(const std::string& message)>;

/// Set when the client cancelled the call or went away: a body that waits stops waiting.
using Stop = std::atomic<bool>;

/// Whether a tool only reads (the readOnlyHint the client sees).
enum class Access { reads, acts };

/// A task's status, as the tasks extension names them (`failed` is kept for protocol errors, which
/// a store reports as errors instead).
enum class TaskStatus { working, input_required, completed, cancelled };

/// One task as a client sees it.
struct TaskView {
    std::string id;
    TaskStatus status = TaskStatus::working;
    std::string message;    ///< The statusMessage; empty: none.
    std::string created_at; ///< ISO 8601 UTC.
    std::string updated_at; ///< ISO 8601 UTC.
    std::optional<long long>
        ttl_ms;               ///< How long the task is kept after it ends; none: until removed.
    long long poll_ms = 2000; ///< How often the client should ask.
    json input_requests = json::object(); ///< input_required: the open requests, by key.
    ToolResult result;                    ///< completed: what the call would have returned.
};

/// Where a server's tasks live. The connection asks it on every tasks/ request, so a task one
/// server process started can be served by any other. Errors are the client's (an unknown task, a
/// malformed answer) and reach it as invalid-params errors.
class TaskStore {
public:
    virtual ~TaskStore() = default;
    /// The task `id` names. `client` is the request's client capabilities: a store asks for input
    /// only in a form the client declared.
    virtual Result<TaskView> get(const std::string& id, const json& client) = 0;
    /// Hands the task the client's answers (inputResponses, by key); keys it does not wait on are
    /// ignored.
    virtual Result<void> update(const std::string& id, const json& responses) = 0;
    /// Asks the task to stop.
    virtual Result<void> cancel(const std::string& id) = 0;
};

/// How a tool started as a task began: the task's id, or (empty id) an answer given at once.
struct TaskStart {
    std::string task_id;
    ToolResult answer;
    json meta = json::object(); ///< Added to the result's `_meta` (a note for the client).
};

struct Tool {
    std::string name;
    std::string description;
    /// A JSON Schema subset the connection checks each call's arguments against before the body
    /// runs: an object whose properties are "string", "integer" (with minimum and maximum),
    /// "number", "boolean", "object" of strings or "array" of strings, optionally with an enum;
    /// `required`; no other property.
    json input_schema;
    Access access = Access::acts;
    /// Runs on a worker thread with checked arguments.
    std::function<ToolResult(const json& args, const Progress&, const Stop&)> run;
    /// The schema ToolResult::structured fits; null: the tool returns text only.
    json output_schema = nullptr;
    /// Set for a tool that can run as a task: called instead of `run` when the request declares
    /// the tasks extension and the server has a task store.
    std::function<TaskStart(const json& args, const Progress&, const Stop&)> start_task = {};
};

/// Which protocol a client spoke on one request, and whether it took tasks.
struct ClientSeen {
    std::string protocol;
    std::string client; ///< "name version", when the client said.
    bool tasks = false;
};

/// Who the server is, as `initialize` and `server/discover` answer, and what it offers besides
/// its tools.
struct ServerInfo {
    std::string name;
    std::string version;
    std::string instructions;
    json tool_meta = json::object(); ///< Each listed tool's `_meta`.
    /// Where tasks live; null: the server offers no tasks extension.
    std::shared_ptr<TaskStore> tasks = nullptr;
    /// Told of each tools/call, before it runs (for a record of the last client served).
    std::function<void(const ClientSeen&)> on_call = {};
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
