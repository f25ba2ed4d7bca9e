// A tool call's arguments checked against its input schema (see check_arguments in
// mcp_protocol.hpp), before its body runs.
#include <algorithm>

#include "cli/mcp_protocol.hpp"

namespace sonata::mcp {
namespace {

std::string type_error(const json& value, const std::string& type) {
    bool ok = false;
    if (type == "string") ok = value.is_string();
    if (type == "integer") ok = value.is_number_integer();
    if (type == "number") ok = value.is_number();
    if (type == "boolean") ok = value.is_boolean();
    if (type == "array") {
        ok = value.is_array() &&
             std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); });
    }
    if (type == "object") {
        ok = value.is_object() &&
             std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); });
    }
    if (ok) return {};
    if (type == "object") return "must be an object of strings";
    if (type == "array") return "must be an array of strings";
    return "must be a " + type;
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

} // namespace sonata::mcp
