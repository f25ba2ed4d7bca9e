// Anthropic Messages (claude): POST /v1/messages[?beta=true], streaming SSE with `event:` and
// `data:` lines, or one JSON message. Event order, as measured against claude 2.1: message_start →
// content_block_start → content_block_delta → content_block_stop → message_delta → message_stop.
#include "probes/protocol.hpp"

namespace sonata::probes::wire {
namespace {

using nlohmann::json;

const json& array_at(const json& object, const char* key) {
    static const json empty = json::array();
    const auto it = object.find(key);
    return it != object.end() && it->is_array() ? *it : empty;
}

void read_assistant(const json& content, ParsedRequest& req) {
    if (content.is_string()) {
        req.facts.assistant_texts.push_back(content.get<std::string>());
        return;
    }
    if (!content.is_array()) return;
    std::string text;
    bool called = false;
    for (const auto& block : content) {
        const auto type = block.value("type", "");
        if (type == "tool_use") {
            req.facts.tool_calls.push_back(
                {block.value("name", ""),
                 block.value("input", json::object())
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                 string_at(block, "id")});
            called = true;
        } else if (type == "text") {
            append_text(text, block.value("text", ""));
        }
    }
    if (!called && !text.empty()) req.facts.assistant_texts.push_back(text);
}

void read_user(const json& content, ParsedRequest& req) {
    if (content.is_string()) {
        append_text(req.facts.user_text, content.get<std::string>());
        return;
    }
    if (!content.is_array()) return;
    for (const auto& block : content) {
        const auto type = block.value("type", "");
        if (type == "text") {
            append_text(req.facts.user_text, block.value("text", ""));
        } else if (type == "tool_result") {
            ToolResultRecord result;
            result.call_id = block.value("tool_use_id", "");
            if (const auto c = block.find("content"); c != block.end()) result.text = text_of(*c);
            if (const auto e = block.find("is_error"); e != block.end() && e->is_boolean()) {
                result.is_error = e->get<bool>();
            }
            req.results.push_back(std::move(result));
        }
    }
}

bool asks_for_block_verdict(const json& body) {
    for (const auto& stop : array_at(body, "stop_sequences")) {
        if (stop.is_string() && stop.get<std::string>().find("</block>") != std::string::npos)
            return true;
    }
    return false;
}

json usage(const RenderInfo& info, std::uint64_t output_tokens) {
    return {{"input_tokens", info.input_tokens},
            {"cache_creation_input_tokens", 0},
            {"cache_read_input_tokens", 0},
            {"output_tokens", output_tokens}};
}

json stop_reason(const Answer& answer) {
    if (answer.move.kind == MoveKind::tool_call) return "tool_use";
    return answer.stop_sequence.empty() ? "end_turn" : "stop_sequence";
}

json stop_sequence(const Answer& answer) {
    return answer.stop_sequence.empty() ? json(nullptr) : json(answer.stop_sequence);
}

json content_block(const Answer& answer, bool complete) {
    const auto& move = answer.move;
    if (move.kind == MoveKind::tool_call) {
        return {{"type", "tool_use"},
                {"id", "toolu_" + move.call_id},
                {"name", move.tool},
                {"input", complete ? parse_arguments(move.arguments_json) : json::object()}};
    }
    return {{"type", "text"}, {"text", complete ? move.text : ""}};
}

json delta(const Answer& answer) {
    if (answer.move.kind == MoveKind::tool_call) {
        return {{"type", "input_json_delta"}, {"partial_json", answer.move.arguments_json}};
    }
    return {{"type", "text_delta"}, {"text", answer.move.text}};
}

class Anthropic final : public Protocol {
public:
    adapters::WireProtocol id() const override {
        return adapters::WireProtocol::anthropic_messages;
    }

    std::string_view call_prefix() const override { return "toolu_"; }

    bool serves(std::string_view path) const override { return path == "/v1/messages"; }

    ParsedRequest parse(const json& body, std::string_view) const override {
        ParsedRequest req;
        req.stream = body.value("stream", false);
        req.model = body.value("model", "");
        for (const auto& tool : array_at(body, "tools")) {
            if (!tool.contains("name")) continue;
            req.facts.tools.push_back(
                {tool.at("name").get<std::string>(),
                 tool.contains("input_schema") ? "function" : tool.value("type", "function"),
                 schema_text(tool, "input_schema"), string_at(tool, "description")});
        }
        for (const auto& message : array_at(body, "messages")) {
            const auto role = message.value("role", "");
            const auto content = message.find("content");
            if (content == message.end()) continue;
            if (role == "assistant") read_assistant(*content, req);
            if (role == "user") read_user(*content, req);
        }
        if (!req.facts.tools.empty())
            req.kind = RequestKind::turn;
        else
            req.kind = asks_for_block_verdict(body) ? RequestKind::classifier : RequestKind::side;
        return req;
    }

    HttpReply render(const Answer& answer, const RenderInfo& info, bool stream) const override {
        HttpReply reply;
        if (!stream) {
            reply.body = json{{"id", info.id},
                              {"type", "message"},
                              {"role", "assistant"},
                              {"model", info.model},
                              {"content", json::array({content_block(answer, true)})},
                              {"stop_reason", stop_reason(answer)},
                              {"stop_sequence", stop_sequence(answer)},
                              {"usage", usage(info, info.output_tokens)}}
                             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            return reply;
        }
        reply.stream = true;
        reply.content_type = "text/event-stream";
        json message = {{"id", info.id},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", info.model},
                        {"content", json::array()},
                        {"stop_reason", nullptr},
                        {"stop_sequence", nullptr},
                        {"usage", usage(info, 1)}};
        reply.events = {
            sse_event("message_start", {{"type", "message_start"}, {"message", message}}),
            sse_event("content_block_start", {{"type", "content_block_start"},
                                              {"index", 0},
                                              {"content_block", content_block(answer, false)}}),
            sse_event("content_block_delta",
                      {{"type", "content_block_delta"}, {"index", 0}, {"delta", delta(answer)}}),
            sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}),
            sse_event("message_delta", {{"type", "message_delta"},
                                        {"delta",
                                         {{"stop_reason", stop_reason(answer)},
                                          {"stop_sequence", stop_sequence(answer)}}},
                                        {"usage", {{"output_tokens", info.output_tokens}}}}),
            sse_event("message_stop", {{"type", "message_stop"}}),
        };
        return reply;
    }

    HttpReply error(unsigned status, std::string_view message) const override {
        HttpReply reply;
        reply.status = status;
        reply.body =
            json{{"type", "error"}, {"error", {{"type", error_type(status)}, {"message", message}}}}
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return reply;
    }

private:
    static const char* error_type(unsigned status) {
        switch (status) {
        case 400: return "invalid_request_error";
        case 401: return "authentication_error";
        case 403: return "permission_error";
        case 404: return "not_found_error";
        case 413: return "request_too_large";
        case 429: return "rate_limit_error";
        case 529: return "overloaded_error";
        default: return "api_error";
        }
    }
};

} // namespace

std::unique_ptr<Protocol> make_anthropic_protocol() { return std::make_unique<Anthropic>(); }

} // namespace sonata::probes::wire
