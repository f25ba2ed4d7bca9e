// Helpers shared by the wire protocols of the scripted model server.
#include "probes/protocol.hpp"

#include "core/json_parse.hpp"

namespace sonata::probes::wire {

using nlohmann::json;

std::string sse_event(std::string_view name, const json& data) {
    std::string out = "event: ";
    out.append(name);
    out += "\ndata: ";
    out += data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += "\n\n";
    return out;
}

std::string sse_data(std::string_view payload) {
    std::string out = "data: ";
    out.append(payload);
    out += "\n\n";
    return out;
}

void append_text(std::string& out, std::string_view text) {
    if (text.empty()) return;
    if (!out.empty()) out += '\n';
    out.append(text);
}

std::string text_of(const json& content) {
    if (content.is_string()) return content.get<std::string>();
    std::string out;
    if (!content.is_array()) return out;
    for (const auto& part : content) {
        if (part.is_string()) {
            append_text(out, part.get<std::string>());
        } else if (part.is_object()) {
            const auto text = part.find("text");
            if (text != part.end() && text->is_string()) append_text(out, text->get<std::string>());
        }
    }
    return out;
}

std::string schema_text(const json& tool, std::string_view key) {
    const auto it = tool.find(key);
    if (it == tool.end() || it->is_null()) return "";
    return it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string string_at(const json& object, std::string_view key) {
    if (!object.is_object()) return "";
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json parse_arguments(std::string_view arguments_json) {
    auto parsed = parse_json(arguments_json).value_or(nullptr);
    return parsed.is_object() ? parsed : json::object();
}

HttpReply openai_error(unsigned status, std::string_view message) {
    HttpReply reply;
    reply.status = status;
    const char* type = status == 429  ? "rate_limit_exceeded"
                       : status < 500 ? "invalid_request_error"
                                      : "server_error";
    reply.body =
        nlohmann::json{
            {"error",
             {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}}
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return reply;
}

} // namespace sonata::probes::wire
