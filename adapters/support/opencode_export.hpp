// What reading opencode's two export documents shares (1.x `export`, 2.x `session export`): the
// document after any leading text, the text items of a message, and the verdict on the last
// assistant message. Included by opencode_family.cpp and opencode_v2.cpp only (it brings
// nlohmann/json).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sonata::adapters::opencode_export {

/// The JSON document from the first `{` of `exported` on; null when there is none or it does not
/// parse.
nlohmann::ordered_json document(const std::string& exported);

/// The `text` of every item of `items` whose type is "text", joined; "" when `items` is not an
/// array.
std::string text_items(const nlohmann::ordered_json& items);

/// Why the last assistant message, whose error, time and finish are in `meta` and whose text is
/// `text`, did not complete its answer; empty when it did (no error, completed, finished with
/// "stop", some text).
std::string unfinished_answer(const nlohmann::ordered_json& meta, const std::string& text);

} // namespace sonata::adapters::opencode_export
