// The JSON-RPC and MCP message shapes a connection builds and the _meta it reads: errors,
// results, the per-request protocol fields of 2026-07-28, tool results and tasks. Internal to the
// MCP connection layer (mcp_protocol.cpp and its task requests).
#pragma once

#include <string>

#include "cli/mcp_protocol.hpp"

namespace sonata::mcp::wire {

/// The stateless era: no handshake, every request names its version and the client's capabilities.
inline constexpr const char* k_modern_protocol = "2026-07-28";
inline constexpr const char* k_meta_version = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* k_meta_capabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* k_meta_client = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* k_meta_server = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* k_meta_subscription = "io.modelcontextprotocol/subscriptionId";
inline constexpr const char* k_tasks_extension = "io.modelcontextprotocol/tasks";

enum RpcError : int {
    parse_error = -32700,
    invalid_request = -32600,
    method_not_found = -32601,
    invalid_params = -32602,
    internal_error = -32603,
    not_initialized = -32002,
    missing_capability = -32021,
    unsupported_version = -32022,
};

/// Which protocol a request speaks: the handshake era (initialize, then requests), or the
/// stateless one (each request's _meta names its version).
enum class Era { legacy, modern };

std::string dump(const json& value);
json error_message(const json& id, int code, const std::string& message);
json result_message(const json& id, json result);
/// -32021, naming the tasks extension as the capability the request lacked.
json missing_tasks_error(const json& id);

/// The string field `key` of `object`, or "" when it is absent or not a string.
std::string string_field(const json& object, const char* key);
/// The field `key` of params._meta, or null.
json meta_field(const json& params, const char* key);
/// The client's capabilities a stateless request declares ({} when it declares none).
json client_capabilities(const json& params);
/// Whether `capabilities` declare the tasks extension.
bool takes_tasks(const json& capabilities);
/// "name version" of an Implementation object, or "".
std::string implementation_name(const json& info);

/// A result of the stateless era: final ("complete"), and naming the server.
json stamped(json result, const ServerInfo& info);
/// A CallToolResult: the text, whether it is an error, and the structured content when there is.
json call_result(const ToolResult& result);
/// A task as tasks/get and notifications/tasks carry it (no resultType).
json task_json(const TaskView& task, const ServerInfo& info);

} // namespace sonata::mcp::wire
