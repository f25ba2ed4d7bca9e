// Making captured text (harness output, tool results) legal in XML, HTML and Markdown documents.
// This is not escaping — the XML library escapes — but replacing characters no document may hold.
#pragma once

#include <string>
#include <string_view>

namespace sonata::reports {

/// `raw` as valid UTF-8 holding only characters that XML 1.0 allows in text: invalid bytes become
/// U+FFFD, control characters other than tab and newline become their Unicode "control picture"
/// (ESC → U+241B) so terminal output stays readable, and CR LF / lone CR become LF.
std::string printable_text(std::string_view raw);

/// The last `max_lines` lines of `text`, prefixed with "…\n" when lines were dropped.
std::string last_lines(std::string_view text, std::size_t max_lines);

} // namespace sonata::reports
