// Building a Markup document's tree; markup_xml.cpp and markup_html.cpp write it.
#include "reports/markup.hpp"

#include "reports/markup_node.hpp"
#include "reports/text_safety.hpp"

namespace sonata::reports {
namespace {

std::unique_ptr<MarkupNode> element_node(std::string_view name) {
    auto node = std::make_unique<MarkupNode>();
    node->name = std::string(name);
    return node;
}

// Appends text to `parent`, joined to a text node that ends its children (one text node, as a
// serializer that formats by the kinds of a node's children must see it).
void append_text(MarkupNode& parent, std::string text) {
    if (!parent.children.empty() && parent.children.back()->is_text()) {
        parent.children.back()->text += text;
        return;
    }
    auto node = std::make_unique<MarkupNode>();
    node->kind = MarkupNode::Kind::text;
    node->text = std::move(text);
    parent.children.push_back(std::move(node));
}

} // namespace

void append_escaped(std::string& out, std::string_view text, std::string_view also) {
    for (const char c : text) {
        if (c == '<') {
            out += "&lt;";
        } else if (c == '>') {
            out += "&gt;";
        } else if (c == '&') {
            out += "&amp;";
        } else if (also.find(c) == std::string_view::npos) {
            out += c;
        } else if (c == '"') {
            out += "&quot;";
        } else {
            out += "&#" + std::to_string(static_cast<int>(c)) + ';';
        }
    }
}

Element Element::add(std::string_view name, std::string_view text) {
    auto child = element_node(name);
    if (!text.empty()) append_text(*child, printable_text(text));
    m_node->children.push_back(std::move(child));
    return Element(m_node->children.back().get());
}

Element& Element::set(std::string_view name, std::string_view value) {
    std::string safe = printable_text(value);
    for (auto& [key, existing] : m_node->attributes) {
        if (key == name) {
            existing = std::move(safe);
            return *this;
        }
    }
    m_node->attributes.emplace_back(std::string(name), std::move(safe));
    return *this;
}

Element& Element::text(std::string_view content) {
    append_text(*m_node, printable_text(content));
    return *this;
}

Markup::Markup(Kind kind, std::string_view root_name)
    : m_kind(kind), m_root(element_node(root_name)) {}

Markup::~Markup() = default;

Element Markup::root() { return Element(m_root.get()); }

std::string Markup::str() const {
    return m_kind == Kind::html ? write_html(*m_root) : write_xml(*m_root);
}

} // namespace sonata::reports
