// What reading opencode's export documents shares (see opencode_export.hpp).
#include "adapters/support/opencode_export.hpp"

#include "core/json_parse.hpp"

namespace sonata::adapters::opencode_export {

using Json = nlohmann::ordered_json;

Json document(const std::string& exported) {
    const auto brace = exported.find('{');
    if (brace == std::string::npos) return nullptr;
    return parse_ordered_json(std::string_view(exported).substr(brace)).value_or(nullptr);
}

std::string text_items(const Json& items) {
    std::string text;
    if (!items.is_array()) return text;
    for (const auto& item : items) {
        if (item.is_object() && item.value("type", "") == "text") text += item.value("text", "");
    }
    return text;
}

std::string unfinished_answer(const Json& meta, const std::string& text) {
    if (meta.contains("error") && !meta["error"].is_null())
        return "the last assistant message ended with an error: " + meta["error"].dump();
    if (!meta.value("time", Json::object()).contains("completed"))
        return "the last assistant message never completed (interrupted)";
    if (const std::string finish = meta.value("finish", ""); finish != "stop")
        return "the last assistant message finished with \"" + finish + "\", not \"stop\"";
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        return "the last assistant message has no text";
    return {};
}

} // namespace sonata::adapters::opencode_export
