// The HTML report's serializer. It breaks lines as the report always has — between the block
// elements HTML 4 knows, never inside an element whose name starts with p (<p>, <pre>), not around
// elements HTML 4 does not know (<section>, <details>) — and writes ASCII: every other character as
// HTML 4's named reference, or a decimal one where HTML 4 names none.
#include <array>
#include <cstdint>

#include <fmt/format.h>

#include "reports/html_entities.hpp"
#include "reports/markup_node.hpp"

namespace sonata::reports {
namespace {

// What the writer needs to know of an element HTML 4 knows: whether it is void, flows inline (no
// line breaks around it), or is written without an end tag when it is empty (li).
struct ElementFacts {
    std::string_view name;
    bool is_void = false;
    bool is_inline = false;
    bool omits_empty_end_tag = false;
};

constexpr std::array k_html4_elements = std::to_array<ElementFacts>({
    {.name = "a", .is_inline = true},
    {.name = "b", .is_inline = true},
    {.name = "body"},
    {.name = "br", .is_void = true, .is_inline = true},
    {.name = "code", .is_inline = true},
    {.name = "div"},
    {.name = "em", .is_inline = true},
    {.name = "h1"},
    {.name = "h2"},
    {.name = "h3"},
    {.name = "head"},
    {.name = "hr", .is_void = true},
    {.name = "html"},
    {.name = "li", .omits_empty_end_tag = true},
    {.name = "meta", .is_void = true},
    {.name = "ol"},
    {.name = "p"},
    {.name = "pre"},
    {.name = "script", .is_inline = true},
    {.name = "span", .is_inline = true},
    {.name = "strong", .is_inline = true},
    {.name = "style"},
    {.name = "table"},
    {.name = "tbody"},
    {.name = "td"},
    {.name = "th"},
    {.name = "thead"},
    {.name = "title"},
    {.name = "tr"},
    {.name = "ul"},
});

const ElementFacts* facts_of(const MarkupNode& node) {
    if (node.is_text()) return nullptr;
    for (const auto& facts : k_html4_elements) {
        if (facts.name == node.name) return &facts;
    }
    return nullptr;
}

bool breaks_lines(const ElementFacts* facts) { return facts != nullptr && !facts->is_inline; }

bool keeps_its_lines(const MarkupNode& node) { return !node.name.empty() && node.name[0] == 'p'; }

bool is_raw_text(const MarkupNode& element) {
    return element.name == "style" || element.name == "script";
}

// An attribute's value, escaped as text is, in double quotes unless it holds one and no single
// quote; a value that holds both keeps double quotes and writes its own as &quot;.
void append_quoted(std::string& out, const std::string& value) {
    std::string escaped;
    append_escaped(escaped, value);
    if (escaped.find('"') == std::string::npos) {
        out += '"' + escaped + '"';
    } else if (escaped.find('\'') == std::string::npos) {
        out += '\'' + escaped + '\'';
    } else {
        out += '"';
        for (const char c : escaped)
            out += c == '"' ? std::string("&quot;") : std::string(1, c);
        out += '"';
    }
}

class HtmlWriter {
public:
    std::string take() { return std::move(m_out); }

    void element(const MarkupNode& node, const MarkupNode* parent, const MarkupNode* next) {
        const ElementFacts* facts = facts_of(node);
        start_tag(node);
        if (facts != nullptr && facts->is_void) {
            // A void element has no end tag, and so no content.
        } else if (node.children.empty()) {
            if (facts == nullptr || !facts->omits_empty_end_tag) m_out += "</" + node.name + '>';
        } else {
            children(node, facts);
            m_out += "</" + node.name + '>';
        }
        if (breaks_lines(facts) && next != nullptr && !next->is_text() && parent != nullptr &&
            !keeps_its_lines(*parent))
            m_out += '\n';
    }

private:
    void start_tag(const MarkupNode& node) {
        m_out += '<' + node.name;
        for (const auto& [name, value] : node.attributes) {
            m_out += ' ' + name + '=';
            append_quoted(m_out, value);
        }
        m_out += '>';
    }

    void children(const MarkupNode& node, const ElementFacts* facts) {
        const bool several = node.children.size() > 1;
        const bool broken = breaks_lines(facts) && several && !keeps_its_lines(node);
        if (broken && !node.children.front()->is_text()) m_out += '\n';
        for (std::size_t i = 0; i < node.children.size(); ++i) {
            const MarkupNode& child = *node.children[i];
            const MarkupNode* next =
                i + 1 < node.children.size() ? node.children[i + 1].get() : nullptr;
            if (!child.is_text()) {
                element(child, &node, next);
            } else if (is_raw_text(node)) {
                m_out += child.text;
            } else {
                append_escaped(m_out, child.text);
            }
        }
        if (broken && !node.children.back()->is_text()) m_out += '\n';
    }

    std::string m_out;
};

// Decodes the UTF-8 sequence that starts at `at` (valid: printable_text made it so).
std::pair<std::uint32_t, std::size_t> code_point_at(std::string_view s, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
    const std::uint8_t lead = byte(at);
    const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    std::uint32_t cp = lead & (0x7FU >> length);
    for (std::size_t i = 1; i < length && at + i < s.size(); ++i)
        cp = (cp << 6U) | (byte(at + i) & 0x3FU);
    return {cp, length};
}

std::string as_ascii(std::string_view utf8) {
    std::string out;
    out.reserve(utf8.size());
    for (std::size_t at = 0; at < utf8.size();) {
        if (static_cast<std::uint8_t>(utf8[at]) < 0x80) {
            out += utf8[at++];
            continue;
        }
        const auto [cp, length] = code_point_at(utf8, at);
        const std::string_view name = html4_entity_name(cp);
        out += name.empty() ? fmt::format("&#{};", cp) : fmt::format("&{};", name);
        at += length;
    }
    return out;
}

} // namespace

std::string write_html(const MarkupNode& root) {
    HtmlWriter writer;
    writer.element(root, nullptr, nullptr);
    return as_ascii("<!DOCTYPE " + root.name + ">\n" + writer.take() + '\n');
}

} // namespace sonata::reports
