// Markdown building blocks (GitHub-flavoured): escaped inline text, code spans and fences that no
// content can close early, and table rows.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sonata::reports {

/// Inline text with Markdown's and GitHub's special characters backslash-escaped (`|`, so it is
/// safe inside a table cell; `@`, so a report posted as a comment mentions nobody) and line breaks
/// turned into spaces.
std::string md_escape(std::string_view text);

/// `text` as an inline code span; the backtick run delimiting it is longer than any inside.
/// Not for table cells (a `|` inside would still split the cell).
std::string md_code_span(std::string_view text);

/// `text` as a fenced code block; the fence is longer than any backtick run inside.
std::string md_fenced(std::string_view text);

/// "| a | b |\n" from already escaped cells.
std::string md_table_row(const std::vector<std::string>& cells);

/// The header rule "|---|---|\n" for `columns` columns.
std::string md_table_rule(std::size_t columns);

} // namespace sonata::reports
