// A small owner of an XML or HTML document, so that every character of the JUnit and HTML reports
// is escaped in one place (markup_xml.cpp, markup_html.cpp). The hostile-text golden files pin
// their output byte for byte.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace sonata::reports {

struct MarkupNode; // markup_node.hpp: the tree, known only to the serializers.

/// An element of a Markup document; valid while the document lives.
class Element {
public:
    explicit Element(MarkupNode* node) : m_node(node) {}

    /// Appends a child element, with `text` as its content when not empty.
    Element add(std::string_view name, std::string_view text = {});
    /// Sets an attribute, in place when it is already set; the serializer escapes the value.
    Element& set(std::string_view name, std::string_view value);
    /// Appends text content.
    Element& text(std::string_view content);

private:
    MarkupNode* m_node;
};

/// An XML document (JUnit) or an HTML5 document (the HTML report). All text and attribute values
/// pass through printable_text first, so no captured output can make the document ill-formed.
class Markup {
public:
    /// Which serializer writes the document.
    enum class Kind {
        xml,  ///< `<?xml …?>` declaration, UTF-8, XML escaping, indented.
        html, ///< `<!DOCTYPE html>`, ASCII with character references, raw text in <style>.
    };

    Markup(Kind kind, std::string_view root_name);
    ~Markup();
    Markup(const Markup&) = delete;
    Markup& operator=(const Markup&) = delete;

    Element root();
    /// The serialized document.
    std::string str() const;

private:
    Kind m_kind;
    std::unique_ptr<MarkupNode> m_root;
};

} // namespace sonata::reports
