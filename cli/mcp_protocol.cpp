// An MCP connection (see mcp_protocol.hpp). Messages are parsed after a nesting-depth check;
// every request gets an answer, a notification never does. A bad call is a JSON-RPC error
// (-32602) before anything runs; what the tool itself reports is a result, with isError.
#include "cli/mcp_protocol.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>
#include <mutex>
#include <thread>

#include "core/json_parse.hpp"

namespace sonata::mcp {
namespace {

constexpr const char* k_latest_protocol = "2025-11-25";
constexpr std::array k_protocols = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
/// The stateless era: no handshake, every request names its version and the client's capabilities.
constexpr const char* k_modern_protocol = "2026-07-28";
constexpr const char* k_meta_version = "io.modelcontextprotocol/protocolVersion";
constexpr const char* k_meta_capabilities = "io.modelcontextprotocol/clientCapabilities";
constexpr const char* k_meta_server = "io.modelcontextprotocol/serverInfo";
/// How long a client may keep server/discover's and tools/list's answers: the tools never change
/// while a server runs.
constexpr long long k_cache_ms = 3600 * 1000;

enum RpcError : int {
    parse_error = -32700,
    invalid_request = -32600,
    method_not_found = -32601,
    invalid_params = -32602,
    not_initialized = -32002,
    unsupported_version = -32022,
};

/// Which protocol a request speaks: the handshake era (initialize, then requests), or the
/// stateless one (each request's _meta names its version).
enum class Era { legacy, modern };

/// The protocol version a stateless request names in its _meta; "" when it names none.
std::string modern_version(const json& params) {
    const auto meta = params.find("_meta");
    if (meta == params.end() || !meta->is_object()) return {};
    const auto version = meta->find(k_meta_version);
    return version != meta->end() && version->is_string() ? version->get<std::string>() : "";
}

std::string dump(const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json error_message(const json& id, int code, const std::string& message) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json result_message(const json& id, json result) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

/// The string field `key` of `object`, or "" when it is absent or not a string.
std::string string_field(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// The progress token a tools/call asked for (a string or an integer), or null.
json progress_token(const json& params) {
    const auto meta = params.find("_meta");
    if (meta == params.end() || !meta->is_object()) return nullptr;
    const auto token = meta->find("progressToken");
    if (token == meta->end() || !(token->is_string() || token->is_number_integer())) return nullptr;
    return *token;
}

std::string type_error(const json& value, const std::string& type) {
    bool ok = false;
    if (type == "string") ok = value.is_string();
    if (type == "integer") ok = value.is_number_integer();
    if (type == "number") ok = value.is_number();
    if (type == "object") {
        ok = value.is_object() &&
             std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); });
    }
    if (ok) return {};
    return "must be " + (type == "object" ? std::string("an object of strings") : "a " + type);
}

/// Whether one argument fits its property's declared type, enum and range; empty when it does.
std::string property_error(const std::string& key, const json& value, const json& property) {
    const std::string type = property["type"].get<std::string>();
    if (auto bad = type_error(value, type); !bad.empty()) return "argument '" + key + "' " + bad;
    if (const auto e = property.find("enum");
        e != property.end() && std::find(e->begin(), e->end(), value) == e->end()) {
        return "argument '" + key + "' must be one of " + e->dump();
    }
    if (type == "integer") {
        const auto n = value.get<long long>();
        if (n < property.value("minimum", 0LL) || n > property.value("maximum", 1LL << 40))
            return "argument '" + key + "' is out of range";
    }
    return {};
}

} // namespace

std::string check_arguments(const json& args, const json& schema) {
    if (!args.is_object()) return "arguments must be an object";
    const auto& properties = schema["properties"];
    for (const auto& [key, value] : args.items()) {
        const auto it = properties.find(key);
        if (it == properties.end()) return "unknown argument '" + key + "'";
        if (auto bad = property_error(key, value, *it); !bad.empty()) return bad;
    }
    for (const auto& key : schema.value("required", json::array())) {
        if (!args.contains(key.get<std::string>()))
            return "missing argument '" + key.get<std::string>() + "'";
    }
    return {};
}

struct Connection::State {
    ServerInfo info;
    std::vector<Tool> tools;
    Send send;
    std::mutex send_mutex;
    std::atomic<bool> initialized{false};
    std::atomic<bool> closing{false};
    std::mutex workers_mutex;
    struct Worker {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    std::vector<Worker> workers;
    std::map<std::string, std::shared_ptr<Stop>> in_flight; ///< By request id.

    void emit(const json& message) {
        const std::string text = dump(message);
        std::lock_guard lock(send_mutex);
        send(text);
    }

    json tool_list() const;
    json initialize(const json& params);
    void call_tool(const json& id, const json& params, Era era);
    void start_worker(const json& id, const json& args, const json& token, const Tool& tool,
                      Era era);
    json stamped(json result) const;
    json discover() const;
    void modern_request(const json& id, const std::string& method, const json& params);
    void join_answered();
    void notification(const std::string& method, const json& params);
    void request(const json& id, const std::string& method, const json& params);
    void handle(const json& message);
};

json Connection::State::tool_list() const {
    json list = json::array();
    for (const auto& tool : tools) {
        list.push_back(json({{"name", tool.name},
                             {"description", tool.description},
                             {"inputSchema", tool.input_schema},
                             {"annotations", {{"readOnlyHint", tool.access == Access::reads}}},
                             {"_meta", info.tool_meta}}));
    }
    return {{"tools", list}};
}

json Connection::State::initialize(const json& params) {
    const std::string asked = string_field(params, "protocolVersion");
    const bool known =
        std::find(k_protocols.begin(), k_protocols.end(), asked) != k_protocols.end();
    initialized = true;
    return {{"protocolVersion", known ? asked : std::string(k_latest_protocol)},
            {"capabilities", {{"tools", {{"listChanged", false}}}}},
            {"serverInfo", {{"name", info.name}, {"version", info.version}}},
            {"instructions", info.instructions}};
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
    start_worker(id, args, progress_token(params), *tool, era);
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

void Connection::State::start_worker(const json& id, const json& args, const json& token,
                                     const Tool& tool, Era era) {
    auto stop = std::make_shared<Stop>(false);
    const std::string key = id.dump();
    std::lock_guard lock(workers_mutex);
    if (closing) return;
    join_answered();
    in_flight[key] = stop;
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread thread([this, id, args, token, stop, done, key, era, run = tool.run] {
        // A body's exception is the call's error, named as the server names itself.
        int step = 0;
        const Progress progress = [&](const std::string& message) {
            if (token.is_null()) return;
            emit({{"jsonrpc", "2.0"},
                  {"method", "notifications/progress"},
                  {"params",
                   {{"progressToken", token}, {"progress", ++step}, {"message", message}}}});
        };
        ToolResult outcome;
        try {
            outcome = run(args, progress, *stop);
        } catch (const std::exception& e) {
            outcome = {info.name + ": error: " + e.what(), true};
        }
        {
            std::lock_guard guard(workers_mutex);
            in_flight.erase(key);
        }
        // A cancelled request gets no answer; neither does one the closing client left.
        json result = {{"content", {{{"type", "text"}, {"text", outcome.text}}}},
                       {"isError", outcome.is_error}};
        if (!*stop) emit(result_message(id, era == Era::modern ? stamped(result) : result));
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

/// A stateless result: final ("complete"), and naming the server.
json Connection::State::stamped(json result) const {
    result["resultType"] = "complete";
    result["_meta"][k_meta_server] = {{"name", info.name}, {"version", info.version}};
    return result;
}

json Connection::State::discover() const {
    json capabilities = {{"tools", json::object()}};
    json result = {{"supportedVersions", {k_modern_protocol}},
                   {"capabilities", capabilities},
                   {"ttlMs", k_cache_ms},
                   {"cacheScope", "public"}};
    if (!info.instructions.empty()) result["instructions"] = info.instructions;
    return stamped(result);
}

/// A request of the stateless era: its _meta must name the version and the client's capabilities
/// (whatever earlier requests said), and the version must be one this server speaks.
void Connection::State::modern_request(const json& id, const std::string& method,
                                       const json& params) {
    const auto meta = params.find("_meta");
    if (meta == params.end() || !meta->is_object() || !meta->contains(k_meta_version) ||
        !(*meta)[k_meta_version].is_string() || !meta->contains(k_meta_capabilities) ||
        !(*meta)[k_meta_capabilities].is_object()) {
        return emit(error_message(id, invalid_params,
                                  std::string("_meta must name ") + k_meta_version + " and " +
                                      k_meta_capabilities));
    }
    const std::string version = (*meta)[k_meta_version];
    if (version != k_modern_protocol) {
        json error = error_message(id, unsupported_version,
                                   "unsupported protocol version '" + version + "'");
        error["error"]["data"] = {{"supported", {k_modern_protocol}}, {"requested", version}};
        return emit(error);
    }
    if (method == "server/discover") return emit(result_message(id, discover()));
    if (method == "ping") return emit(result_message(id, stamped(json::object())));
    if (method == "tools/list") {
        json list = tool_list();
        list["ttlMs"] = k_cache_ms;
        list["cacheScope"] = "public";
        return emit(result_message(id, stamped(list)));
    }
    if (method == "tools/call") return call_tool(id, params, Era::modern);
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
