// A small owner of an XML or HTML document built with libxml2, so that every character of the JUnit
// and HTML reports is escaped by a maintained serializer and libxml2 stays out of other headers.
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct _xmlNode; // libxml2's node type (xmlNode), declared here to keep its headers out.

namespace sonata::reports {

/// An element of a Markup document; valid while the document lives.
class Element {
public:
    explicit Element(_xmlNode* node) : m_node(node) {}

    /// Appends a child element, with `text` as its content when not empty.
    Element add(std::string_view name, std::string_view text = {});
    /// Sets an attribute; the serializer escapes the value.
    Element& set(std::string_view name, std::string_view value);
    /// Appends text content.
    Element& text(std::string_view content);

private:
    _xmlNode* m_node;
};

/// An XML document (JUnit) or an HTML5 document (the HTML report). All text and attribute values
/// pass through printable_text first, so no captured output can make the document ill-formed.
class Markup {
public:
    /// Which serializer writes the document.
    enum class Kind {
        xml,  ///< `<?xml …?>` declaration, UTF-8, XML escaping.
        html, ///< `<!DOCTYPE html>`, HTML serialization (raw text in <style>, void elements).
    };

    Markup(Kind kind, std::string_view root_name);
    ~Markup();
    Markup(const Markup&) = delete;
    Markup& operator=(const Markup&) = delete;

    Element root();
    /// The serialized document, indented.
    std::string str() const;

private:
    struct Doc;
    Kind m_kind;
    std::unique_ptr<Doc> m_doc;
};

} // namespace sonata::reports
