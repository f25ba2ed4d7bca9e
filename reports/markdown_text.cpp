// Escaping and fencing for GitHub-flavoured Markdown.
#include "reports/markdown_text.hpp"

#include <algorithm>

#include "reports/text_safety.hpp"

namespace sonata::reports {
namespace {

constexpr std::string_view k_special = "\\`*_{}[]<>()#+!|~&@";

std::size_t longest_backtick_run(std::string_view text) {
    std::size_t longest = 0;
    std::size_t run = 0;
    for (char ch : text) {
        run = ch == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return longest;
}

} // namespace

std::string md_escape(std::string_view text) {
    std::string out;
    for (char ch : printable_text(text)) {
        if (ch == '\n' || ch == '\t') {
            out += ' ';
            continue;
        }
        if (k_special.find(ch) != std::string_view::npos) out += '\\';
        out += ch;
    }
    return out;
}

std::string md_code_span(std::string_view text) {
    std::string content = printable_text(text);
    std::replace(content.begin(), content.end(), '\n', ' ');
    const std::string ticks(longest_backtick_run(content) + 1, '`');
    const bool pad = !content.empty() && (content.front() == '`' || content.back() == '`');
    return ticks + (pad ? " " : "") + content + (pad ? " " : "") + ticks;
}

std::string md_fenced(std::string_view text) {
    std::string content = printable_text(text);
    if (!content.empty() && content.back() != '\n') content += '\n';
    const std::string fence(std::max<std::size_t>(3, longest_backtick_run(content) + 1), '`');
    return fence + "text\n" + content + fence + "\n";
}

std::string md_table_row(const std::vector<std::string>& cells) {
    std::string row = "|";
    for (const auto& cell : cells)
        row += " " + cell + " |";
    return row + "\n";
}

std::string md_table_rule(std::size_t columns) {
    std::string rule = "|";
    for (std::size_t i = 0; i < columns; ++i)
        rule += "---|";
    return rule + "\n";
}

} // namespace sonata::reports
