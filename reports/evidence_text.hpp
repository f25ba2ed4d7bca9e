// A cell's evidence as plain text, shared by the JUnit failure bodies, the HTML detail panes and
// the Markdown findings. Captured text is passed through printable_text.
#pragma once

#include <string>

#include "core/matrix.hpp"

namespace sonata::reports {

/// Every non-empty evidence field, one labelled block per field, in a fixed order. The output tail
/// is cut to its last `max_tail_lines` lines.
std::string evidence_text(const Cell& cell, std::size_t max_tail_lines = 40);

/// One line: the reason when there is one, else the files changed, else the verdict's meaning.
std::string evidence_summary(const Cell& cell);

} // namespace sonata::reports
