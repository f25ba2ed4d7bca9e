// The tree a Markup document holds, and the two serializers that write it. Internal to reports/.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sonata::reports {

/// An element (its name, attributes in the order first set, children) or a text node (its text).
/// Every string here has passed printable_text: valid UTF-8, no control characters but tab and LF.
struct MarkupNode {
    enum class Kind { element, text };

    Kind kind = Kind::element;
    std::string name; ///< The element's name; empty for text.
    std::string text; ///< The text node's content; empty for an element.
    std::vector<std::pair<std::string, std::string>> attributes;
    std::vector<std::unique_ptr<MarkupNode>> children;

    bool is_text() const { return kind == Kind::text; }
};

/// Appends `text` with <, > and & as named references, and each character of `also` escaped too:
/// `"` as &quot;, any other as a decimal reference (CR as &#13;).
void append_escaped(std::string& out, std::string_view text, std::string_view also = {});

/// `<?xml version="1.0" encoding="UTF-8"?>`, then `root` indented two spaces a level wherever an
/// element holds only elements; UTF-8 throughout.
std::string write_xml(const MarkupNode& root);

/// `<!DOCTYPE html>`, then `root` with a line break between block elements of HTML 4; every
/// character past ASCII written as a character reference.
std::string write_html(const MarkupNode& root);

} // namespace sonata::reports
