// The JUnit report's serializer: XML 1.0 in UTF-8, indented where an element holds only elements.
#include "reports/markup_node.hpp"

namespace sonata::reports {
namespace {

bool holds_text(const MarkupNode& node) {
    for (const auto& child : node.children) {
        if (child->is_text()) return true;
    }
    return false;
}

void indent(std::string& out, int level) { out.append(static_cast<std::size_t>(2 * level), ' '); }

// Whether an element's content is laid out on lines of its own: never inside an element that holds
// text, where whitespace would change the text.
enum class Layout { indented, as_is };

void write_node(std::string& out, const MarkupNode& node, int level, Layout layout) {
    if (node.is_text()) {
        append_escaped(out, node.text, "\r");
        return;
    }
    out += '<';
    out += node.name;
    for (const auto& [name, value] : node.attributes) {
        out += ' ' + name + "=\"";
        append_escaped(out, value, "\"\n\r\t");
        out += '"';
    }
    if (node.children.empty()) {
        out += "/>";
        return;
    }
    out += '>';
    const bool indented = layout == Layout::indented && !holds_text(node);
    if (indented) out += '\n';
    for (const auto& child : node.children) {
        if (indented) indent(out, level + 1);
        write_node(out, *child, level + 1, indented ? Layout::indented : Layout::as_is);
        if (indented) out += '\n';
    }
    if (indented) indent(out, level);
    out += "</" + node.name + '>';
}

} // namespace

std::string write_xml(const MarkupNode& root) {
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    write_node(out, root, 0, Layout::indented);
    out += '\n';
    return out;
}

} // namespace sonata::reports
