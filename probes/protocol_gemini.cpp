// Gemini API (gemini, qwen's upstream): POST /v1beta/models/<any>:streamGenerateContent?alt=sse
// (SSE `data:` lines, no [DONE]) and :generateContent (one JSON response). As measured against
// gemini 0.61: each chunk carries candidates[0].content.parts[] (functionCall{name,args} or text),
// finishReason and usageMetadata; the router side call asks for JSON matching a response schema.
#include "probes/protocol.hpp"

namespace sonata::probes::wire {
namespace {

using nlohmann::json;

void read_function_response(const json& response, ParsedRequest& req) {
    ToolResultRecord result;
    result.call_id = response.value("id", "");
    result.tool = response.value("name", "");
    const auto body = response.value("response", json::object());
    const auto pick = [&](const char* key) -> std::optional<std::string> {
        const auto it = body.find(key);
        if (it == body.end()) return std::nullopt;
        return it->is_string() ? it->get<std::string>()
                               : it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    if (auto error = pick("error")) {
        result.text = *error;
        result.is_error = true;
    } else {
        result.text = pick("output").value_or(
            body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        result.is_error = false;
    }
    req.results.push_back(std::move(result));
}

void read_content(const json& content, ParsedRequest& req) {
    const auto role = content.value("role", "user");
    const auto parts = content.find("parts");
    if (parts == content.end() || !parts->is_array()) return;
    std::string text;
    bool called = false;
    for (const auto& part : *parts) {
        if (const auto call = part.find("functionCall"); call != part.end()) {
            req.facts.tool_calls.push_back(
                {call->value("name", ""),
                 call->value("args", json::object())
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                 string_at(*call, "id")});
            called = true;
        } else if (const auto response = part.find("functionResponse"); response != part.end()) {
            read_function_response(*response, req);
        } else if (part.contains("text") && !part.value("thought", false)) {
            append_text(text, part.value("text", ""));
        }
    }
    if (role == "model" && !called && !text.empty()) req.facts.assistant_texts.push_back(text);
    if (role == "user") append_text(req.facts.user_text, text);
}

void read_tools(const json& body, ParsedRequest& req) {
    const auto tools = body.find("tools");
    if (tools == body.end() || !tools->is_array()) return;
    for (const auto& tool : *tools) {
        const auto declarations = tool.find("functionDeclarations");
        if (declarations == tool.end() || !declarations->is_array()) continue;
        for (const auto& fn : *declarations) {
            const auto schema = fn.contains("parametersJsonSchema")
                                    ? schema_text(fn, "parametersJsonSchema")
                                    : schema_text(fn, "parameters");
            req.facts.tools.push_back(
                {fn.value("name", ""), "function", schema, string_at(fn, "description")});
        }
    }
}

json part(const Move& move) {
    if (move.kind != MoveKind::tool_call) return {{"text", move.text}};
    return {{"functionCall",
             {{"id", move.call_id},
              {"name", move.tool},
              {"args", parse_arguments(move.arguments_json)}}}};
}

json generate_response(const Answer& answer, const RenderInfo& info) {
    return {{"candidates",
             json::array(
                 {{{"content", {{"role", "model"}, {"parts", json::array({part(answer.move)})}}},
                   {"finishReason", "STOP"},
                   {"index", 0}}})},
            {"usageMetadata",
             {{"promptTokenCount", info.input_tokens},
              {"candidatesTokenCount", info.output_tokens},
              {"totalTokenCount", info.input_tokens + info.output_tokens}}},
            {"modelVersion", info.model},
            {"responseId", info.id}};
}

class Gemini final : public Protocol {
public:
    adapters::WireProtocol id() const override { return adapters::WireProtocol::gemini; }

    std::string_view call_prefix() const override { return ""; }

    bool serves(std::string_view path) const override {
        const bool models = path.starts_with("/v1beta/models/") ||
                            path.starts_with("/v1/models/") || path.starts_with("/v1alpha/models/");
        return models &&
               (path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent"));
    }

    ParsedRequest parse(const json& body, std::string_view path) const override {
        ParsedRequest req;
        req.stream = path.ends_with(":streamGenerateContent");
        const auto slash = path.find("/models/");
        const auto colon = path.rfind(':');
        if (slash != std::string_view::npos && colon > slash)
            req.model = std::string(path.substr(slash + 8, colon - slash - 8));
        read_tools(body, req);
        if (const auto contents = body.find("contents");
            contents != body.end() && contents->is_array()) {
            for (const auto& content : *contents)
                read_content(content, req);
        }
        req.kind = req.facts.tools.empty() ? RequestKind::side : RequestKind::turn;
        const auto config = body.value("generationConfig", json::object());
        for (const char* key : {"responseJsonSchema", "responseSchema"}) {
            if (req.facts.tools.empty() && config.contains(key) && config[key].is_object()) {
                req.kind = RequestKind::structured;
                req.schema = config[key];
                break;
            }
        }
        return req;
    }

    HttpReply render(const Answer& answer, const RenderInfo& info, bool stream) const override {
        HttpReply reply;
        if (!stream) {
            reply.body = generate_response(answer, info)
                             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            return reply;
        }
        reply.stream = true;
        reply.content_type = "text/event-stream";
        reply.events.push_back(
            sse_data(generate_response(answer, info)
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
        return reply;
    }

    HttpReply error(unsigned status, std::string_view message) const override {
        HttpReply reply;
        reply.status = status;
        reply.body =
            json{{"error",
                  {{"code", status}, {"message", message}, {"status", status_name(status)}}}}
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return reply;
    }

private:
    static const char* status_name(unsigned status) {
        switch (status) {
        case 400: return "INVALID_ARGUMENT";
        case 401: return "UNAUTHENTICATED";
        case 403: return "PERMISSION_DENIED";
        case 404: return "NOT_FOUND";
        case 429: return "RESOURCE_EXHAUSTED";
        case 503: return "UNAVAILABLE";
        default: return "INTERNAL";
        }
    }
};

} // namespace

std::unique_ptr<Protocol> make_gemini_protocol() { return std::make_unique<Gemini>(); }

} // namespace sonata::probes::wire
