// OpenAI Responses (codex): POST /v1/responses, streaming SSE (`event:` + `data:` lines) or one
// JSON response. Event order, as measured against codex 0.171: response.created →
// response.output_item.added → (text) response.output_text.delta → response.output_item.done →
// response.completed. Tool results come back as function_call_output input items. Tools in a
// deferred namespace (codex lists "Deferred tool namespaces:" in its developer message, e.g.
// multi_agent_v1 with spawn_agent), like the tools of an offered namespace, are called as a
// function_call carrying that `namespace`.
#include <algorithm>

#include "probes/protocol.hpp"

namespace sonata::probes::wire {
namespace {

using nlohmann::json;

/// The namespaces a "Deferred tool namespaces:" list in `text` names ("- multi_agent_v1: …").
void read_deferred(std::string_view text, ParsedRequest& req) {
    constexpr std::string_view k_list = "Deferred tool namespaces:";
    auto at = text.find(k_list);
    if (at == std::string_view::npos) return;
    at += k_list.size();
    while (at < text.size()) {
        const auto end = std::min(text.find('\n', at), text.size());
        auto line = text.substr(at, end - at);
        at = end + 1;
        if (line.empty()) continue;
        if (!line.starts_with("- ")) break;
        line.remove_prefix(2);
        const auto colon = line.find(':');
        const auto name = line.substr(0, colon);
        if (name.empty() || name.find(' ') != std::string_view::npos) break;
        auto& known = req.facts.deferred_namespaces;
        if (std::find(known.begin(), known.end(), name) == known.end()) known.emplace_back(name);
    }
}

/// A past call's name: "namespace.name" for a tool of a namespace.
std::string call_name(const json& item) {
    const auto ns = string_at(item, "namespace");
    const auto name = item.value("name", "");
    return ns.empty() ? name : ns + "." + name;
}

/// One offered tool; a namespace's tools are offered as "namespace.tool" (codex 0.171 groups its
/// sub-agent tools in the namespace multi_agent_v1).
void read_tool(const json& tool, const std::string& ns, ParsedRequest& req) {
    const auto kind = tool.value("type", "function");
    const auto name = tool.value("name", kind);
    if (kind == "namespace" && ns.empty()) {
        if (const auto inner = tool.find("tools"); inner != tool.end() && inner->is_array()) {
            for (const auto& t : *inner)
                read_tool(t, name, req);
            return;
        }
    }
    req.facts.tools.push_back({ns.empty() ? name : ns + "." + name, kind,
                               schema_text(tool, "parameters"), string_at(tool, "description")});
}

void read_message_item(const json& item, ParsedRequest& req) {
    const auto role = item.value("role", "");
    const auto content = item.find("content");
    if (content == item.end()) return;
    if (role == "developer" || role == "system") read_deferred(text_of(*content), req);
    if (role == "user") append_text(req.facts.user_text, text_of(*content));
    if (role == "assistant") req.facts.assistant_texts.push_back(text_of(*content));
}

void read_output(const json& item, ParsedRequest& req) {
    ToolResultRecord result;
    result.call_id = item.value("call_id", "");
    if (const auto out = item.find("output"); out != item.end()) {
        result.text = out->is_string() ? out->get<std::string>() : text_of(*out);
    }
    req.results.push_back(std::move(result));
}

void read_item(const json& item, ParsedRequest& req) {
    const auto type = item.value("type", item.contains("role") ? "message" : "");
    if (type == "message") {
        read_message_item(item, req);
    } else if (type == "function_call") {
        req.facts.tool_calls.push_back(
            {call_name(item), item.value("arguments", ""), string_at(item, "call_id")});
    } else if (type == "custom_tool_call") {
        req.facts.tool_calls.push_back(
            {item.value("name", ""), item.value("input", ""), string_at(item, "call_id")});
    } else if (type == "local_shell_call") {
        req.facts.tool_calls.push_back(
            {"local_shell",
             item.value("action", json::object())
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
             string_at(item, "call_id")});
    } else if (type == "function_call_output" || type == "custom_tool_call_output" ||
               type == "local_shell_call_output") {
        read_output(item, req);
    }
}

json output_item(const Answer& answer, const RenderInfo& info, bool complete) {
    const auto& move = answer.move;
    const char* status = complete ? "completed" : "in_progress";
    if (move.kind != MoveKind::tool_call) {
        json content = json::array();
        if (complete)
            content.push_back(
                {{"type", "output_text"}, {"text", move.text}, {"annotations", json::array()}});
        return {{"type", "message"},
                {"id", "msg_" + info.id},
                {"role", "assistant"},
                {"status", status},
                {"content", content}};
    }
    if (move.tool_kind == "custom") {
        const auto args = parse_arguments(move.arguments_json);
        const auto input = args.contains("input") && args["input"].is_string()
                               ? args["input"].get<std::string>()
                               : move.arguments_json;
        return {{"type", "custom_tool_call"},        {"id", "ctc_" + move.call_id},
                {"call_id", "call_" + move.call_id}, {"name", move.tool},
                {"input", complete ? input : ""},    {"status", status}};
    }
    json call = {{"type", "function_call"},
                 {"id", "fc_" + move.call_id},
                 {"call_id", "call_" + move.call_id},
                 {"name", move.tool},
                 {"arguments", complete ? move.arguments_json : ""},
                 {"status", status}};
    if (const auto dot = move.tool.find('.'); dot != std::string::npos) {
        call["namespace"] = move.tool.substr(0, dot);
        call["name"] = move.tool.substr(dot + 1);
    }
    return call;
}

json response_object(const Answer& answer, const RenderInfo& info, bool complete) {
    json out = {
        {"id", "resp_" + info.id},
        {"object", "response"},
        {"created_at", info.created},
        {"status", complete ? "completed" : "in_progress"},
        {"model", info.model},
        {"output", complete ? json::array({output_item(answer, info, true)}) : json::array()},
        {"usage", nullptr}};
    if (complete) {
        out["usage"] = {{"input_tokens", info.input_tokens},
                        {"input_tokens_details", {{"cached_tokens", 0}}},
                        {"output_tokens", info.output_tokens},
                        {"output_tokens_details", {{"reasoning_tokens", 0}}},
                        {"total_tokens", info.input_tokens + info.output_tokens}};
    }
    return out;
}

class OpenAiResponses final : public Protocol {
public:
    adapters::WireProtocol id() const override { return adapters::WireProtocol::openai_responses; }

    std::string_view call_prefix() const override { return "call_"; }

    bool serves(std::string_view path) const override { return path == "/v1/responses"; }

    ParsedRequest parse(const json& body, std::string_view) const override {
        ParsedRequest req;
        req.stream = body.value("stream", false);
        req.model = body.value("model", "");
        if (const auto tools = body.find("tools"); tools != body.end() && tools->is_array()) {
            for (const auto& tool : *tools)
                read_tool(tool, "", req);
        }
        read_deferred(string_at(body, "instructions"), req);
        if (const auto input = body.find("input"); input != body.end()) {
            if (input->is_string()) append_text(req.facts.user_text, input->get<std::string>());
            if (input->is_array()) {
                for (const auto& item : *input)
                    read_item(item, req);
            }
        }
        req.kind = req.facts.tools.empty() ? RequestKind::side : RequestKind::turn;
        const auto text = body.find("text");
        if (req.facts.tools.empty() && text != body.end() && text->is_object()) {
            const auto format = text->value("format", json::object());
            if (format.value("type", "") == "json_schema") {
                req.kind = RequestKind::structured;
                req.schema = format.value("schema", json::object());
            }
        }
        return req;
    }

    HttpReply render(const Answer& answer, const RenderInfo& info, bool stream) const override {
        HttpReply reply;
        if (!stream) {
            reply.body = response_object(answer, info, true)
                             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            return reply;
        }
        reply.stream = true;
        reply.content_type = "text/event-stream";
        int seq = 0;
        auto event = [&](const char* name, const json& fields) {
            json data = {{"type", name}, {"sequence_number", seq++}};
            data.update(fields);
            reply.events.push_back(sse_event(name, data));
        };
        event("response.created", {{"response", response_object(answer, info, false)}});
        event("response.output_item.added",
              {{"output_index", 0}, {"item", output_item(answer, info, false)}});
        if (answer.move.kind != MoveKind::tool_call) {
            event("response.output_text.delta", {{"item_id", "msg_" + info.id},
                                                 {"output_index", 0},
                                                 {"content_index", 0},
                                                 {"delta", answer.move.text}});
        }
        event("response.output_item.done",
              {{"output_index", 0}, {"item", output_item(answer, info, true)}});
        event("response.completed", {{"response", response_object(answer, info, true)}});
        return reply;
    }

    HttpReply error(unsigned status, std::string_view message) const override {
        return openai_error(status, message);
    }
};

} // namespace

std::unique_ptr<Protocol> make_openai_responses_protocol() {
    return std::make_unique<OpenAiResponses>();
}

} // namespace sonata::probes::wire
