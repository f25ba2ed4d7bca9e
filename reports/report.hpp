// The report formats `sonata report` writes, and the one entry point that renders any of them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/matrix.hpp"
#include "core/result.hpp"

namespace sonata::reports {

/// A report format; the spellings are those of `--format`.
enum class ReportFormat {
    markdown, ///< "md": tables per mode, legend, evidence of what went wrong.
    junit,    ///< "junit": JUnit XML for CI test-result views.
    html,     ///< "html": one self-contained page.
    json,     ///< "json": the matrix itself (schema 1), merged cells naming their machine.
};

std::string_view to_string(ReportFormat format);

/// "md", "junit", "html" or "json" (also "markdown", "xml"); else a usage error with "did you
/// mean".
Result<ReportFormat> parse_report_format(std::string_view text);

/// The spellings parse_report_format accepts, for help text.
std::vector<std::string> report_format_names();

/// Renders `matrix` in `format`.
std::string render_report(const Matrix& matrix, ReportFormat format);

} // namespace sonata::reports
