// The state behind an mcp::Connection: what it serves, its workers, the requests in flight.
// Internal to the MCP connection layer: mcp_protocol.cpp handles messages and tool calls,
// mcp_task_requests.cpp the tasks extension.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/mcp_protocol.hpp"
#include "cli/mcp_wire.hpp"

namespace sonata::mcp {

/// What a worker does for one request: the message that answers it (null: no answer).
using Work = std::function<json(const Progress&, const Stop&)>;

struct Connection::State {
    ServerInfo info;
    std::vector<Tool> tools;
    Send send;
    std::mutex send_mutex;
    std::atomic<bool> initialized{false};
    std::string legacy_version; ///< What initialize agreed on; guarded by workers_mutex.
    std::string legacy_client;  ///< The client initialize named; guarded by workers_mutex.
    std::atomic<bool> closing{false};
    std::mutex workers_mutex;
    struct Worker {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    std::vector<Worker> workers;
    std::map<std::string, std::shared_ptr<Stop>> in_flight; ///< By request id.

    void emit(const json& message);

    // mcp_protocol.cpp
    json tool_list() const;
    json initialize(const json& params);
    void call_tool(const json& id, const json& params, wire::Era era);
    void tell_call(const json& params, wire::Era era, const json& capabilities);
    /// Runs `work` on a worker thread, with progress sent to `token` (when not null); a cancelled
    /// request gets no answer.
    void spawn(const json& id, const json& token, Work work);
    json discover() const;
    void modern_request(const json& id, const std::string& method, const json& params);
    void join_answered();
    void notification(const std::string& method, const json& params);
    void request(const json& id, const std::string& method, const json& params);
    void handle(const json& message);

    // mcp_task_requests.cpp
    /// The answer to a tools/call a tool started as a task.
    json task_started(const json& id, const TaskStart& start, const json& capabilities) const;
    /// tasks/get, tasks/update and tasks/cancel.
    void task_request(const json& id, const std::string& method, const json& params);
    /// subscriptions/listen: notifications/tasks for the task ids asked, until cancelled.
    void listen(const json& id, const json& params);
};

} // namespace sonata::mcp
