// The one way sonata parses JSON text: depth-bounded first, so that a document nested tens of
// thousands deep (a planted settings file, a forged receipt, a harness's output) is an error value
// instead of a stack overflow in the recursive copies, comparisons and dumps that follow a parse.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

#include "core/text.hpp"

namespace sonata {

/// Whether comments count as whitespace.
enum class JsonComments {
    rejected, ///< Standard JSON: a comment is a syntax error.
    ignored,  ///< `//` and `/* */` comments are skipped, as Claude Code's settings files allow.
};

/// How parse_json reads a text.
struct JsonParseOptions {
    std::size_t max_depth = k_max_json_depth; ///< The deepest array/object nesting accepted.
    JsonComments comments = JsonComments::rejected;
};

/// Why a text was refused.
enum class JsonFault {
    too_deep, ///< Arrays or objects nest deeper than max_depth; the text was not parsed.
    invalid,  ///< Not JSON (or a number beyond a double's range).
};

/// What parse_json refused, for the caller to word with the file it read.
struct JsonError {
    JsonFault fault = JsonFault::invalid;
    std::size_t byte = 0; ///< invalid: where the parser stopped (0 when it cannot tell).
    /// "nested deeper than N levels", or the parser's own message.
    std::string message;
};

template <class Json> using JsonResult = tl::expected<Json, JsonError>;

/// `text` as a JSON value, when it nests no deeper than options.max_depth and parses.
JsonResult<nlohmann::json> parse_json(std::string_view text, const JsonParseOptions& options = {});

/// parse_json for an ordered_json, which keeps the order of each object's keys.
JsonResult<nlohmann::ordered_json> parse_ordered_json(std::string_view text,
                                                      const JsonParseOptions& options = {});

} // namespace sonata
