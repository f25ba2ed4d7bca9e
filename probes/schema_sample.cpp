// Sample values for JSON Schemas: type names are matched case-insensitively, so Gemini's "STRING"
// and JSON Schema's "string" are the same; anyOf/oneOf/allOf take their first branch.
#include "probes/schema_sample.hpp"

#include <algorithm>
#include <string>

#include "core/text.hpp"

namespace sonata::probes {
namespace {

using nlohmann::json;

constexpr int k_max_depth = 12;

// The schema's type, lower-case; a list of types gives its first non-null member.
std::string type_of(const json& schema) {
    const auto it = schema.find("type");
    if (it != schema.end() && it->is_string()) return ascii_lower(it->get<std::string>());
    if (it != schema.end() && it->is_array()) {
        for (const auto& t : *it) {
            if (t.is_string() && ascii_lower(t.get<std::string>()) != "null")
                return ascii_lower(t.get<std::string>());
        }
    }
    if (schema.contains("properties")) return "object";
    if (schema.contains("items")) return "array";
    return "";
}

json sample(const json& schema, SampleFields fields, int depth);

json sample_string(const json& schema) {
    std::string value = "sonata probe";
    if (const auto max = schema.find("maxLength");
        max != schema.end() && max->is_number_unsigned()) {
        value.resize(std::min<std::size_t>(value.size(), max->get<std::size_t>()));
    }
    if (const auto min = schema.find("minLength");
        min != schema.end() && min->is_number_unsigned()) {
        if (value.size() < min->get<std::size_t>()) value.resize(min->get<std::size_t>(), 'x');
    }
    return value;
}

json sample_number(const json& schema, bool integer) {
    double value = 1;
    if (const auto min = schema.find("minimum"); min != schema.end() && min->is_number()) {
        value = min->get<double>();
    } else if (const auto max = schema.find("maximum"); max != schema.end() && max->is_number()) {
        value = std::min(value, max->get<double>());
    }
    if (integer) return static_cast<long long>(value);
    return value;
}

json sample_object(const json& schema, SampleFields fields, int depth) {
    json out = json::object();
    const auto props = schema.find("properties");
    if (props == schema.end() || !props->is_object()) return out;
    const auto required = schema.find("required");
    const bool has_required = required != schema.end() && required->is_array();
    if (fields == SampleFields::required_only || has_required) {
        if (!has_required) return out;
        for (const auto& name : *required) {
            if (!name.is_string()) continue;
            const auto prop = props->find(name.get<std::string>());
            out[name.get<std::string>()] =
                prop == props->end() ? json("sonata probe") : sample(*prop, fields, depth + 1);
        }
        if (fields == SampleFields::required_only) return out;
    }
    for (const auto& [name, prop] : props->items()) {
        if (!out.contains(name)) out[name] = sample(prop, fields, depth + 1);
    }
    return out;
}

json sample_array(const json& schema, SampleFields fields, int depth) {
    json out = json::array();
    std::size_t count = 0;
    if (const auto min = schema.find("minItems");
        min != schema.end() && min->is_number_unsigned()) {
        count = min->get<std::size_t>();
    }
    const json items = schema.value("items", json::object());
    for (std::size_t i = 0; i < count; ++i)
        out.push_back(sample(items, fields, depth + 1));
    return out;
}

json sample(const json& schema, SampleFields fields, int depth) {
    if (!schema.is_object() || depth > k_max_depth) return nullptr;
    if (const auto c = schema.find("const"); c != schema.end()) return *c;
    if (const auto e = schema.find("enum"); e != schema.end() && e->is_array() && !e->empty()) {
        return e->front();
    }
    if (const auto d = schema.find("default"); d != schema.end()) return *d;
    for (const char* branch : {"anyOf", "oneOf", "allOf"}) {
        const auto b = schema.find(branch);
        if (b != schema.end() && b->is_array() && !b->empty() && type_of(schema).empty()) {
            return sample(b->front(), fields, depth + 1);
        }
    }
    const std::string type = type_of(schema);
    if (type == "object") return sample_object(schema, fields, depth);
    if (type == "array") return sample_array(schema, fields, depth);
    if (type == "number") return sample_number(schema, false);
    if (type == "integer") return sample_number(schema, true);
    if (type == "boolean") return false;
    if (type == "null") return nullptr;
    return sample_string(schema);
}

} // namespace

json schema_sample(const json& schema, SampleFields fields) { return sample(schema, fields, 0); }

json fill_required(json args, const json& schema) {
    if (!args.is_object() || !schema.is_object()) return args;
    const auto required = schema.find("required");
    const auto props = schema.find("properties");
    if (required == schema.end() || !required->is_array()) return args;
    for (const auto& name : *required) {
        if (!name.is_string() || args.contains(name.get<std::string>())) continue;
        const bool known =
            props != schema.end() && props->is_object() && props->contains(name.get<std::string>());
        args[name.get<std::string>()] =
            known ? schema_sample((*props)[name.get<std::string>()], SampleFields::required_only)
                  : json("sonata probe");
    }
    return args;
}

} // namespace sonata::probes
