// Report format names and dispatch to the renderers.
#include "reports/report.hpp"

#include <array>

#include "core/text.hpp"
#include "reports/html.hpp"
#include "reports/junit.hpp"
#include "reports/markdown.hpp"

namespace sonata::reports {
namespace {

constexpr std::array<std::pair<std::string_view, ReportFormat>, 6> k_names{{
    {"md", ReportFormat::markdown},
    {"junit", ReportFormat::junit},
    {"html", ReportFormat::html},
    {"json", ReportFormat::json},
    {"markdown", ReportFormat::markdown},
    {"xml", ReportFormat::junit},
}};

} // namespace

std::string_view to_string(ReportFormat format) {
    for (const auto& [name, f] : k_names) {
        if (f == format) return name;
    }
    return "md";
}

std::vector<std::string> report_format_names() {
    std::vector<std::string> names;
    for (const auto& [name, f] : k_names)
        names.emplace_back(name);
    return names;
}

Result<ReportFormat> parse_report_format(std::string_view text) {
    for (const auto& [name, f] : k_names) {
        if (name == text) return f;
    }
    return fail(ExitCode::usage, "unknown report format '" + std::string(text) + "'" +
                                     did_you_mean(text, report_format_names()) +
                                     "; use md, junit, html or json");
}

std::string render_report(const Matrix& matrix, ReportFormat format) {
    switch (format) {
    case ReportFormat::markdown: return render_markdown(matrix);
    case ReportFormat::junit: return render_junit(matrix);
    case ReportFormat::html: return render_html(matrix);
    case ReportFormat::json: return matrix_to_json(matrix);
    }
    return render_markdown(matrix);
}

} // namespace sonata::reports
