// The model server test fixture: a server per test on an ephemeral port, and request builders.
#include "tests/support/model_server_fixture.hpp"

#include <algorithm>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <gtest/gtest.h>

#include "adapters/registry.hpp"

namespace sonata::testing {

using nlohmann::json;

probes::Script script_of(const std::string& text) {
    auto script = probes::parse_script(text);
    if (!script) throw std::runtime_error(script.error().message);
    script->input_tokens = k_probe_tokens;
    return *script;
}

unsigned short free_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address_v4("127.0.0.1"), 0});
    return acceptor.local_endpoint().port();
}

adapters::ToolVocabulary vocabulary_of(std::string_view harness) {
    auto adapter = adapters::find_adapter(harness);
    if (!adapter) throw std::runtime_error(adapter.error().message);
    return (*adapter)->tools();
}

std::uint64_t tokens_of(const std::string& text) {
    return std::max<std::size_t>(1, text.size() / 4);
}

Served::Served(const std::string& script, adapters::ToolVocabulary vocabulary)
    : server(script_of(script), std::move(vocabulary), "/ws") {
    const auto port = server.start();
    if (!port) throw std::runtime_error(port.error().message);
    client = std::make_unique<HttpClient>(*port);
}

HttpResponse Served::post(const std::string& target, const json& body) {
    return client->send("POST", target, body.dump());
}

std::vector<SseEvent> Served::stream(const std::string& target, const json& body) {
    const auto response = post(target, body);
    EXPECT_EQ(response.status, 200U) << response.body;
    EXPECT_TRUE(response.complete);
    EXPECT_EQ(response.content_type, "text/event-stream");
    return parse_sse(response.body);
}

std::vector<std::string> names_of(const std::vector<SseEvent>& events) {
    std::vector<std::string> names;
    for (const auto& e : events)
        names.push_back(e.event);
    return names;
}

std::vector<json> data_of(const std::vector<SseEvent>& events) {
    std::vector<json> data;
    for (const auto& e : events)
        data.push_back(e.data == "[DONE]" ? json("[DONE]") : json::parse(e.data));
    return data;
}

probes::RequestRecord without_timing(probes::RequestRecord record) {
    record.handling_ms = 0;
    return record;
}

json claude_tool(const std::string& name, json schema) {
    return {{"name", name}, {"description", name + " tool"}, {"input_schema", std::move(schema)}};
}

json claude_request(json messages, json tools, bool stream) {
    return {{"model", "claude-sonnet-x"},
            {"max_tokens", 32000},
            {"stream", stream},
            {"system", json::array({{{"type", "text"}, {"text", "You are Claude Code."}}})},
            {"messages", std::move(messages)},
            {"tools", std::move(tools)}};
}

json chat_tool(const std::string& name, json schema) {
    return {
        {"type", "function"},
        {"function", {{"name", name}, {"description", name}, {"parameters", std::move(schema)}}}};
}

json chat_request(json messages, json tools, bool stream) {
    json body = {{"model", "probe-model"}, {"stream", stream}, {"messages", std::move(messages)}};
    if (!tools.empty()) body["tools"] = std::move(tools);
    if (stream) body["stream_options"] = {{"include_usage", true}};
    return body;
}

} // namespace sonata::testing
