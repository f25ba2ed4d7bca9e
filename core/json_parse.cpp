// parse_json: the depth scan of core/text.hpp, then nlohmann's parser with its exceptions caught.
#include "core/json_parse.hpp"

#include <nlohmann/json.hpp>

namespace sonata {
namespace {

template <class Json>
JsonResult<Json> parse_bounded(std::string_view text, const JsonParseOptions& options) {
    if (!json_depth_within(text, options.max_depth)) {
        return tl::unexpected(
            JsonError{JsonFault::too_deep, 0,
                      "nested deeper than " + std::to_string(options.max_depth) + " levels"});
    }
    try {
        return Json::parse(text.begin(), text.end(), nullptr, true,
                           options.comments == JsonComments::ignored);
    } catch (const nlohmann::json::parse_error& e) {
        return tl::unexpected(JsonError{JsonFault::invalid, e.byte, e.what()});
    } catch (const nlohmann::json::exception& e) { // a number beyond a double's range
        return tl::unexpected(JsonError{JsonFault::invalid, 0, e.what()});
    }
}

} // namespace

JsonResult<nlohmann::json> parse_json(std::string_view text, const JsonParseOptions& options) {
    return parse_bounded<nlohmann::json>(text, options);
}

JsonResult<nlohmann::ordered_json> parse_ordered_json(std::string_view text,
                                                      const JsonParseOptions& options) {
    return parse_bounded<nlohmann::ordered_json>(text, options);
}

} // namespace sonata
