// libxml2 tree building and serialization for the XML and HTML reports.
#include "reports/markup.hpp"

#include <stdexcept>

#include <libxml/HTMLtree.h>
#include <libxml/tree.h>

#include "reports/text_safety.hpp"

namespace sonata::reports {
namespace {

const xmlChar* chars(const std::string& s) { return reinterpret_cast<const xmlChar*>(s.c_str()); }

} // namespace

struct Markup::Doc {
    xmlDocPtr doc = nullptr;
    ~Doc() {
        if (doc != nullptr) xmlFreeDoc(doc);
    }
};

Element Element::add(std::string_view name, std::string_view text) {
    const std::string tag(name);
    const std::string content = printable_text(text);
    xmlNodePtr child =
        xmlNewTextChild(m_node, nullptr, chars(tag), text.empty() ? nullptr : chars(content));
    if (child == nullptr) throw std::bad_alloc();
    return Element(child);
}

Element& Element::set(std::string_view name, std::string_view value) {
    // xmlSetProp stores the value as text: the serializer escapes it (xmlNewDocProp would not).
    if (xmlSetProp(m_node, chars(std::string(name)), chars(printable_text(value))) == nullptr) {
        throw std::bad_alloc();
    }
    return *this;
}

Element& Element::text(std::string_view content) {
    xmlNodePtr node = xmlNewText(chars(printable_text(content)));
    if (node == nullptr || xmlAddChild(m_node, node) == nullptr) throw std::bad_alloc();
    return *this;
}

Markup::Markup(Kind kind, std::string_view root_name)
    : m_kind(kind), m_doc(std::make_unique<Doc>()) {
    const std::string name(root_name);
    if (kind == Kind::html) {
        m_doc->doc = htmlNewDocNoDtD(nullptr, nullptr);
        if (m_doc->doc != nullptr) xmlCreateIntSubset(m_doc->doc, chars(name), nullptr, nullptr);
    } else {
        m_doc->doc = xmlNewDoc(chars("1.0"));
    }
    if (m_doc->doc == nullptr) throw std::bad_alloc();
    xmlDocSetRootElement(m_doc->doc, xmlNewDocNode(m_doc->doc, nullptr, chars(name), nullptr));
}

Markup::~Markup() = default;

Element Markup::root() { return Element(xmlDocGetRootElement(m_doc->doc)); }

std::string Markup::str() const {
    xmlChar* buffer = nullptr;
    int size = 0;
    if (m_kind == Kind::html) {
        htmlDocDumpMemoryFormat(m_doc->doc, &buffer, &size, 1);
    } else {
        xmlDocDumpFormatMemoryEnc(m_doc->doc, &buffer, &size, "UTF-8", 1);
    }
    if (buffer == nullptr) throw std::runtime_error("libxml2 could not serialize the report");
    std::string out(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(size));
    xmlFree(buffer);
    return out;
}

} // namespace sonata::reports
