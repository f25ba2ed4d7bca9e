// Fuzzes `sonata mcp`'s connection layer (cli/mcp_protocol.cpp) with a tool of every argument type
// it checks: each line of the input is one message from the client. Every message the server sends
// is one JSON-RPC 2.0 object on one line, every answer has either a result or an error, a
// notification is never answered, and nothing throws or outlives close().
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/mcp_protocol.hpp"
#include "core/json_parse.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using nlohmann::json;
using sonata::fuzz::check;

std::vector<sonata::mcp::Tool> tools() {
    const json schema = {{"type", "object"},
                         {"properties",
                          {{"text", {{"type", "string"}}},
                           {"count", {{"type", "integer"}, {"minimum", 0}, {"maximum", 100}}},
                           {"ratio", {{"type", "number"}}},
                           {"options", {{"type", "object"}}},
                           {"answer", {{"type", "string"}, {"enum", {"yes", "no"}}}}}},
                         {"required", {"text"}},
                         {"additionalProperties", false}};
    return {{"echo", "Says its text back.", schema, sonata::mcp::Access::reads,
             [](const json& args, const sonata::mcp::Progress& progress, const sonata::mcp::Stop&) {
                 progress("echoing");
                 return sonata::mcp::ToolResult{args.at("text").get<std::string>()};
             }}};
}

/// A store that knows no task: every tasks/ request reaches it and is turned down.
class NoTasks : public sonata::mcp::TaskStore {
public:
    sonata::Result<sonata::mcp::TaskView> get(const std::string& id, const json&) override {
        return sonata::fail(sonata::ExitCode::usage, "no task " + id);
    }
    sonata::Result<void> update(const std::string& id, const json&) override {
        return sonata::fail(sonata::ExitCode::usage, "no task " + id);
    }
    sonata::Result<void> cancel(const std::string& id) override {
        return sonata::fail(sonata::ExitCode::usage, "no task " + id);
    }
};

/// Whether `message` is a notification: an object with a string method and no id.
bool is_notification(const json& message) {
    return message.is_object() && !message.contains("id") && message.contains("method") &&
           message["method"].is_string();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::mutex mutex;
    std::vector<std::string> sent;
    std::size_t notifications = 0;
    {
        sonata::mcp::ServerInfo info{"fuzz", "0", "", json::object()};
        info.tasks = std::make_shared<NoTasks>();
        sonata::mcp::Connection connection(info, tools(), [&](const std::string& message) {
            std::lock_guard lock(mutex);
            sent.push_back(message);
        });
        std::string_view rest = sonata::fuzz::as_text(data, size);
        while (!rest.empty()) {
            const auto end = rest.find('\n');
            const std::string_view line = rest.substr(0, end);
            rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
            const auto before = [&] {
                std::lock_guard lock(mutex);
                return sent.size();
            }();
            connection.handle(line);
            connection.drain();
            // sonata's own parser: depth-checked, as the connection reads the line.
            const auto message = sonata::parse_json(line);
            if (message && is_notification(*message)) {
                std::lock_guard lock(mutex);
                notifications += sent.size() - before;
            }
        }
        connection.close();
    }
    check(notifications == 0, "a notification was answered");
    for (const auto& reply : sent) {
        check(reply.find('\n') == std::string::npos, "a message spans lines: " + reply);
        const auto message = json::parse(reply, nullptr, false);
        check(message.is_object() && message.value("jsonrpc", "") == "2.0",
              "not a JSON-RPC 2.0 message: " + reply);
        if (message.contains("method")) continue; // a progress notification
        check(message.contains("id") && (message.contains("result") != message.contains("error")),
              "an answer without exactly one of result and error: " + reply);
    }
    return 0;
}
