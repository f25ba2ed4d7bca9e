// OpenAI Chat Completions (opencode, pi, qwen): POST /v1/chat/completions, streaming SSE (`data:`
// lines ending with `data: [DONE]`) or one JSON completion. Chunk order, as measured: a role chunk,
// then the tool call's id and name, then its arguments (or one content chunk), then finish_reason,
// then a usage chunk with no choices when stream_options.include_usage asks for it.
#include "core/json_parse.hpp"
#include "probes/protocol.hpp"

namespace sonata::probes::wire {
namespace {

using nlohmann::json;

void read_chat_message(const json& message, ParsedRequest& req) {
    const auto role = message.value("role", "");
    const auto content = message.find("content");
    const std::string text = content == message.end() ? "" : text_of(*content);
    if (role == "user") {
        append_text(req.facts.user_text, text);
    } else if (role == "tool") {
        ToolResultRecord result;
        result.call_id = message.value("tool_call_id", "");
        result.text = text;
        req.results.push_back(std::move(result));
    } else if (role == "assistant") {
        const auto calls = message.find("tool_calls");
        if (calls != message.end() && calls->is_array() && !calls->empty()) {
            for (const auto& call : *calls) {
                const auto function = call.value("function", json::object());
                req.facts.tool_calls.push_back({function.value("name", ""),
                                                function.value("arguments", ""),
                                                string_at(call, "id")});
            }
        } else if (!text.empty()) {
            req.facts.assistant_texts.push_back(text);
        }
    }
}

json tool_call(const Move& move, bool with_arguments) {
    return {{"index", 0},
            {"id", "call_" + move.call_id},
            {"type", "function"},
            {"function",
             {{"name", move.tool}, {"arguments", with_arguments ? move.arguments_json : ""}}}};
}

const char* finish_reason(const Answer& answer) {
    return answer.move.kind == MoveKind::tool_call ? "tool_calls" : "stop";
}

json usage(const RenderInfo& info) {
    return {{"prompt_tokens", info.input_tokens},
            {"completion_tokens", info.output_tokens},
            {"total_tokens", info.input_tokens + info.output_tokens}};
}

class OpenAiChat final : public Protocol {
public:
    adapters::WireProtocol id() const override { return adapters::WireProtocol::openai_chat; }

    std::string_view call_prefix() const override { return "call_"; }

    bool serves(std::string_view path) const override {
        return path == "/v1/chat/completions" || path == "/chat/completions";
    }

    ParsedRequest parse(const json& body, std::string_view) const override {
        ParsedRequest req;
        req.stream = body.value("stream", false);
        req.model = body.value("model", "");
        if (const auto options = body.find("stream_options");
            options != body.end() && options->is_object()) {
            req.stream_usage = options->value("include_usage", false);
        }
        if (const auto tools = body.find("tools"); tools != body.end() && tools->is_array()) {
            for (const auto& tool : *tools) {
                const auto function = tool.value("function", json::object());
                req.facts.tools.push_back(
                    {function.value("name", ""), tool.value("type", "function"),
                     schema_text(function, "parameters"), string_at(function, "description")});
            }
        }
        if (const auto messages = body.find("messages");
            messages != body.end() && messages->is_array()) {
            for (const auto& message : *messages)
                read_chat_message(message, req);
        }
        req.kind = req.facts.tools.empty() ? RequestKind::side : RequestKind::turn;
        const auto format = body.value("response_format", json::object());
        if (req.facts.tools.empty() && format.value("type", "") == "json_schema") {
            req.kind = RequestKind::structured;
            req.schema =
                format.value("json_schema", json::object()).value("schema", json::object());
        }
        // qwen's structured side requests (its auto-mode classifier, titles, the next-speaker
        // check) offer one tool, respond_in_schema, and take its JSON as text too.
        if (req.facts.tools.size() == 1 && req.facts.tools.front().name == "respond_in_schema") {
            req.kind = RequestKind::structured;
            req.schema = parse_json(req.facts.tools.front().schema_json).value_or(nullptr);
            if (!req.schema.is_object()) req.schema = json::object();
        }
        return req;
    }

    HttpReply render(const Answer& answer, const RenderInfo& info, bool stream) const override {
        return stream ? render_stream(answer, info) : render_json(answer, info);
    }

    HttpReply error(unsigned status, std::string_view message) const override {
        return openai_error(status, message);
    }

private:
    static HttpReply render_json(const Answer& answer, const RenderInfo& info) {
        const auto& move = answer.move;
        json message = {{"role", "assistant"}, {"content", nullptr}};
        if (move.kind == MoveKind::tool_call) {
            message["tool_calls"] = json::array({tool_call(move, true)});
            message["tool_calls"][0].erase("index");
        } else {
            message["content"] = move.text;
        }
        HttpReply reply;
        reply.body = json{{"id", "chatcmpl-" + info.id},
                          {"object", "chat.completion"},
                          {"created", info.created},
                          {"model", info.model},
                          {"choices", json::array({{{"index", 0},
                                                    {"message", message},
                                                    {"finish_reason", finish_reason(answer)}}})},
                          {"usage", usage(info)}}
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return reply;
    }

    static HttpReply render_stream(const Answer& answer, const RenderInfo& info) {
        HttpReply reply;
        reply.stream = true;
        reply.content_type = "text/event-stream";
        auto chunk = [&](json choices, json extra = json::object()) {
            json data = {{"id", "chatcmpl-" + info.id},
                         {"object", "chat.completion.chunk"},
                         {"created", info.created},
                         {"model", info.model},
                         {"choices", std::move(choices)}};
            data.update(extra);
            reply.events.push_back(
                sse_data(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
        };
        auto choice = [](json delta, json finish = nullptr) {
            return json::array({{{"index", 0},
                                 {"delta", std::move(delta)},
                                 {"finish_reason", std::move(finish)}}});
        };
        const auto& move = answer.move;
        chunk(choice({{"role", "assistant"}, {"content", ""}}));
        if (move.kind == MoveKind::tool_call) {
            chunk(choice({{"tool_calls", json::array({tool_call(move, false)})}}));
            chunk(choice({{"tool_calls",
                           json::array({{{"index", 0},
                                         {"function", {{"arguments", move.arguments_json}}}}})}}));
        } else {
            chunk(choice({{"content", move.text}}));
        }
        chunk(choice(json::object(), finish_reason(answer)));
        if (info.stream_usage) chunk(json::array(), {{"usage", usage(info)}});
        reply.events.push_back(sse_data("[DONE]"));
        return reply;
    }
};

} // namespace

std::unique_ptr<Protocol> make_openai_chat_protocol() { return std::make_unique<OpenAiChat>(); }

} // namespace sonata::probes::wire
