// An MCP connection (see mcp_protocol.hpp). Messages are parsed after a nesting-depth check;
// every request gets an answer, a notification never does. A bad call is a JSON-RPC error
// (-32602) before anything runs; what the tool itself reports is a result, with isError. The
// tasks extension's requests are in mcp_task_requests.cpp.
#include "cli/mcp_protocol.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "cli/mcp_connection.hpp"
#include "core/json_parse.hpp"

namespace sonata::mcp {
namespace {

using namespace wire;

constexpr const char* k_latest_protocol = "2025-11-25";
constexpr std::array k_protocols = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
/// How long a client may keep server/discover's and tools/list's answers: the tools never change
/// while a server runs.
constexpr long long k_cache_ms = 3600 * 1000;

/// The protocol version a stateless request names in its _meta; "" when it names none.
std::string modern_version(const json& params) {
    const json version = meta_field(params, k_meta_version);
    return version.is_string() ? version.get<std::string>() : "";
}

/// The progress token a tools/call asked for (a string or an integer), or null.
json progress_token(const json& params) {
    json token = meta_field(params, "progressToken");
    return token.is_string() || token.is_number_integer() ? token : json();
}

} // namespace

void Connection::State::emit(const json& message) {
    const std::string text = dump(message);
    std::lock_guard lock(send_mutex);
    send(text);
}

json Connection::State::tool_list() const {
    json list = json::array();
    for (const auto& tool : tools) {
        json entry = {{"name", tool.name},
                      {"description", tool.description},
                      {"inputSchema", tool.input_schema},
                      {"annotations", {{"readOnlyHint", tool.access == Access::reads}}},
                      {"_meta", info.tool_meta}};
        if (!tool.output_schema.is_null()) entry["outputSchema"] = tool.output_schema;
        list.push_back(std::move(entry));
    }
    return {{"tools", list}};
}

json Connection::State::initialize(const json& params) {
    const std::string asked = string_field(params, "protocolVersion");
    const bool known =
        std::find(k_protocols.begin(), k_protocols.end(), asked) != k_protocols.end();
    {
        std::lock_guard lock(workers_mutex);
        legacy_version = known ? asked : std::string(k_latest_protocol);
        legacy_client = implementation_name(params.value("clientInfo", json()));
    }
    initialized = true;
    return {{"protocolVersion", known ? asked : std::string(k_latest_protocol)},
            {"capabilities", {{"tools", {{"listChanged", false}}}}},
            {"serverInfo", {{"name", info.name}, {"version", info.version}}},
            {"instructions", info.instructions}};
}

/// Tells the server which client calls, in which protocol, and whether it takes tasks.
void Connection::State::tell_call(const json& params, Era era, const json& capabilities) {
    if (!info.on_call) return;
    ClientSeen seen;
    if (era == Era::modern) {
        seen = {k_modern_protocol, implementation_name(meta_field(params, k_meta_client)),
                takes_tasks(capabilities)};
    } else {
        std::lock_guard lock(workers_mutex);
        seen = {legacy_version, legacy_client, false};
    }
    info.on_call(seen);
}

void Connection::State::call_tool(const json& id, const json& params, Era era) {
    const std::string name = string_field(params, "name");
    const auto tool =
        std::find_if(tools.begin(), tools.end(), [&](const Tool& t) { return name == t.name; });
    if (tool == tools.end()) {
        emit(error_message(id, invalid_params, "unknown tool '" + name + "'"));
        return;
    }
    const json args = params.contains("arguments") ? params["arguments"] : json::object();
    if (auto bad = check_arguments(args, tool->input_schema); !bad.empty()) {
        emit(error_message(id, invalid_params, tool->name + ": " + bad));
        return;
    }
    const json capabilities = client_capabilities(params);
    tell_call(params, era, capabilities);
    // A body's exception is the call's error, named as the server names itself.
    const auto failed = [this](const std::exception& e) {
        return ToolResult{info.name + ": error: " + e.what(), true};
    };
    if (era == Era::modern && tool->start_task && info.tasks && takes_tasks(capabilities)) {
        spawn(id, progress_token(params),
              [this, id, args, capabilities, failed,
               start = tool->start_task](const Progress& progress, const Stop& stop) {
                  TaskStart begun;
                  try {
                      begun = start(args, progress, stop);
                  } catch (const std::exception& e) {
                      begun = {"", failed(e)};
                  }
                  return task_started(id, begun, capabilities);
              });
        return;
    }
    spawn(
        id, progress_token(params),
        [this, id, args, era, failed, run = tool->run](const Progress& progress, const Stop& stop) {
            ToolResult outcome;
            try {
                outcome = run(args, progress, stop);
            } catch (const std::exception& e) {
                outcome = failed(e);
            }
            json result = call_result(outcome);
            return result_message(id, era == Era::modern ? stamped(result, info) : result);
        });
}

/// Joins the calls that have answered, so a long session does not keep their threads.
void Connection::State::join_answered() {
    for (auto it = workers.begin(); it != workers.end();) {
        if (*it->done) {
            it->thread.join();
            it = workers.erase(it);
        } else {
            ++it;
        }
    }
}

void Connection::State::spawn(const json& id, const json& token, Work work) {
    auto stop = std::make_shared<Stop>(false);
    const std::string key = id.dump();
    std::lock_guard lock(workers_mutex);
    if (closing) return;
    join_answered();
    in_flight[key] = stop;
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread thread([this, id, token, stop, done, key, work = std::move(work)] {
        int step = 0;
        const Progress progress = [&](const std::string& message) {
            if (token.is_null()) return;
            emit({{"jsonrpc", "2.0"},
                  {"method", "notifications/progress"},
                  {"params",
                   {{"progressToken", token}, {"progress", ++step}, {"message", message}}}});
        };
        json answer;
        try {
            answer = work(progress, *stop);
        } catch (const std::exception& e) {
            answer = error_message(id, internal_error, info.name + ": error: " + e.what());
        }
        {
            std::lock_guard guard(workers_mutex);
            in_flight.erase(key);
        }
        // A cancelled request gets no answer; neither does one the closing client left.
        if (!*stop && !answer.is_null()) emit(answer);
        *done = true;
    });
    workers.push_back({std::move(thread), done});
}

void Connection::State::notification(const std::string& method, const json& params) {
    if (method != "notifications/cancelled") return; // initialized and the rest need nothing
    const std::string key = params.contains("requestId") ? params["requestId"].dump() : "";
    std::lock_guard lock(workers_mutex);
    if (const auto it = in_flight.find(key); it != in_flight.end()) *it->second = true;
}

json Connection::State::discover() const {
    json capabilities = {{"tools", json::object()}};
    if (info.tasks) capabilities["extensions"] = {{k_tasks_extension, json::object()}};
    json result = {{"supportedVersions", {k_modern_protocol}},
                   {"capabilities", capabilities},
                   {"ttlMs", k_cache_ms},
                   {"cacheScope", "public"}};
    if (!info.instructions.empty()) result["instructions"] = info.instructions;
    return stamped(result, info);
}

/// A request of the stateless era: its _meta must name the version and the client's capabilities
/// (whatever earlier requests said), and the version must be one this server speaks.
void Connection::State::modern_request(const json& id, const std::string& method,
                                       const json& params) {
    if (!meta_field(params, k_meta_version).is_string() ||
        !meta_field(params, k_meta_capabilities).is_object()) {
        return emit(error_message(id, invalid_params,
                                  std::string("_meta must name ") + k_meta_version + " and " +
                                      k_meta_capabilities));
    }
    const std::string version = modern_version(params);
    if (version != k_modern_protocol) {
        json error = error_message(id, unsupported_version,
                                   "unsupported protocol version '" + version + "'");
        error["error"]["data"] = {{"supported", {k_modern_protocol}}, {"requested", version}};
        return emit(error);
    }
    if (method == "server/discover") return emit(result_message(id, discover()));
    if (method == "ping") return emit(result_message(id, stamped(json::object(), info)));
    if (method == "tools/list") {
        json list = tool_list();
        list["ttlMs"] = k_cache_ms;
        list["cacheScope"] = "public";
        return emit(result_message(id, stamped(list, info)));
    }
    if (method == "tools/call") return call_tool(id, params, Era::modern);
    if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel")
        return task_request(id, method, params);
    if (method == "subscriptions/listen") return listen(id, params);
    emit(error_message(id, method_not_found, "method not found: " + method));
}

void Connection::State::request(const json& id, const std::string& method, const json& params) {
    if (method == "initialize") return emit(result_message(id, initialize(params)));
    if (method == "server/discover" || !modern_version(params).empty())
        return modern_request(id, method, params);
    if (method == "ping") return emit(result_message(id, json::object()));
    if (method != "tools/list" && method != "tools/call")
        return emit(error_message(id, method_not_found, "method not found: " + method));
    if (!initialized) return emit(error_message(id, not_initialized, "initialize first"));
    if (method == "tools/list") return emit(result_message(id, tool_list()));
    call_tool(id, params, Era::legacy);
}

void Connection::State::handle(const json& message) {
    if (!message.is_object()) {
        emit(error_message(nullptr, invalid_request,
                           message.is_array() ? "batches are not supported"
                                              : "a message must be a JSON object"));
        return;
    }
    const auto id_field = message.find("id");
    const bool is_request = id_field != message.end();
    const json id = is_request ? *id_field : json();
    if (is_request && !id.is_string() && !id.is_number_integer()) {
        emit(error_message(nullptr, invalid_request, "id must be a string or an integer"));
        return;
    }
    const auto method = message.find("method");
    if (method == message.end() || !method->is_string()) {
        // A response to nothing we asked, or garbage: answer requests only.
        if (is_request && !message.contains("result") && !message.contains("error"))
            emit(error_message(id, invalid_request, "method must be a string"));
        return;
    }
    const json params = message.contains("params") && message["params"].is_object()
                            ? message["params"]
                            : json::object();
    if (is_request)
        request(id, *method, params);
    else
        notification(*method, params);
}

Connection::Connection(ServerInfo info, std::vector<Tool> tools, Send send)
    : m_state(std::make_unique<State>()) {
    m_state->info = std::move(info);
    m_state->tools = std::move(tools);
    m_state->send = std::move(send);
}

Connection::~Connection() { close(); }

void Connection::handle(std::string_view line) {
    if (line.size() > k_max_message) {
        m_state->emit(error_message(nullptr, invalid_request, "message larger than 4 MiB"));
        return;
    }
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    auto parsed = parse_json(line);
    if (!parsed && parsed.error().fault == JsonFault::too_deep) {
        m_state->emit(error_message(nullptr, invalid_request, "message nested too deep"));
        return;
    }
    if (!parsed) {
        m_state->emit(error_message(nullptr, parse_error, "parse error"));
        return;
    }
    m_state->handle(*parsed);
}

void Connection::drain() {
    std::vector<State::Worker> workers;
    {
        std::lock_guard lock(m_state->workers_mutex);
        workers.swap(m_state->workers);
    }
    for (auto& worker : workers)
        if (worker.thread.joinable()) worker.thread.join();
}

void Connection::close() {
    {
        std::lock_guard lock(m_state->workers_mutex);
        m_state->closing = true;
        for (auto& [key, stop] : m_state->in_flight)
            *stop = true;
    }
    drain();
}

void serve_lines(int fd, Connection& connection) {
    std::string line;
    bool oversized = false;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; ++i) {
            if (buffer[i] != '\n') {
                if (line.size() <= k_max_message)
                    line.push_back(buffer[i]);
                else
                    oversized = true;
                continue;
            }
            if (oversized) line.assign(k_max_message + 1, 'x');
            connection.handle(line);
            line.clear();
            oversized = false;
        }
    }
    if (!line.empty()) connection.handle(line);
    connection.close();
}

} // namespace sonata::mcp
