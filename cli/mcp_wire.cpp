// Message shapes of the MCP connection layer (see mcp_wire.hpp).
#include "cli/mcp_wire.hpp"

#include <utility>

namespace sonata::mcp::wire {

std::string dump(const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json error_message(const json& id, int code, const std::string& message) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json result_message(const json& id, json result) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json missing_tasks_error(const json& id) {
    json error =
        error_message(id, missing_capability,
                      std::string("Missing required client capability: ") + k_tasks_extension);
    error["error"]["data"] = {
        {"requiredCapabilities", {{"extensions", {{k_tasks_extension, json::object()}}}}}};
    return error;
}

std::string string_field(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json meta_field(const json& params, const char* key) {
    const auto meta = params.find("_meta");
    if (meta == params.end() || !meta->is_object()) return nullptr;
    const auto it = meta->find(key);
    return it == meta->end() ? json() : *it;
}

json client_capabilities(const json& params) {
    json capabilities = meta_field(params, k_meta_capabilities);
    return capabilities.is_object() ? capabilities : json::object();
}

bool takes_tasks(const json& capabilities) {
    const auto extensions = capabilities.find("extensions");
    if (extensions == capabilities.end() || !extensions->is_object()) return false;
    const auto tasks = extensions->find(k_tasks_extension);
    return tasks != extensions->end() && tasks->is_object();
}

std::string implementation_name(const json& info) {
    if (!info.is_object()) return {};
    const std::string name = string_field(info, "name");
    const std::string version = string_field(info, "version");
    return version.empty() ? name : name + " " + version;
}

json stamped(json result, const ServerInfo& info) {
    result["resultType"] = "complete";
    result["_meta"][k_meta_server] = {{"name", info.name}, {"version", info.version}};
    return result;
}

json call_result(const ToolResult& result) {
    json out = {{"content", {{{"type", "text"}, {"text", result.text}}}},
                {"isError", result.is_error}};
    if (!result.structured.is_null()) out["structuredContent"] = result.structured;
    return out;
}

namespace {

const char* status_name(TaskStatus status) {
    switch (status) {
    case TaskStatus::working: return "working";
    case TaskStatus::input_required: return "input_required";
    case TaskStatus::completed: return "completed";
    case TaskStatus::cancelled: return "cancelled";
    }
    return "working";
}

} // namespace

json task_json(const TaskView& task, const ServerInfo& info) {
    json out = {{"taskId", task.id},
                {"status", status_name(task.status)},
                {"createdAt", task.created_at},
                {"lastUpdatedAt", task.updated_at},
                {"ttlMs", task.ttl_ms ? json(*task.ttl_ms) : json()},
                {"pollIntervalMs", task.poll_ms}};
    if (!task.message.empty()) out["statusMessage"] = task.message;
    if (task.status == TaskStatus::input_required) out["inputRequests"] = task.input_requests;
    if (task.status == TaskStatus::completed)
        out["result"] = stamped(call_result(task.result), info);
    return out;
}

} // namespace sonata::mcp::wire
