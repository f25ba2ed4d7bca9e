// Markdown rendering of a capability matrix.
#include "reports/markdown.hpp"

#include <fmt/format.h>

#include "reports/evidence_text.hpp"
#include "reports/grid.hpp"
#include "reports/markdown_text.hpp"

namespace sonata::reports {
namespace {

constexpr std::size_t k_tail_lines = 15;
constexpr std::string_view k_warning_sign = "⚠️";
constexpr std::string_view k_not_measured = "·";

std::string heading(const Matrix& m, const Grid& grid) {
    std::string out = "## sonata capability matrix\n\n";
    std::vector<std::string> facts;
    facts.push_back(std::string(grid.merged ? "Machines: " : "Machine: ") +
                    md_code_span(m.machine));
    if (!m.platform.empty()) facts.push_back("platform: " + md_code_span(m.platform));
    if (!m.sonata_version.empty()) facts.push_back("sonata " + md_escape(m.sonata_version));
    if (!m.created_at.empty()) facts.push_back("measured " + md_escape(m.created_at));
    std::string line;
    for (const auto& fact : facts)
        line += (line.empty() ? "" : " · ") + fact;
    out += line + "\n\n";
    if (!grid.disagreeing.empty()) {
        out += fmt::format("{} Machines disagree on {} cell(s).\n\n", k_warning_sign,
                           grid.disagreeing.size());
    }
    return out;
}

std::string cell_text(const Cell* cell, const Grid& grid) {
    if (cell == nullptr) return std::string(k_not_measured);
    std::string text(style_of(cell->verdict).symbol);
    if (grid.disagrees(*cell)) text += std::string(" ") + std::string(k_warning_sign);
    return text;
}

std::string table(const ModeTable& t, const Grid& grid) {
    std::string out = "### Mode: " + md_code_span(t.mode) + "\n\n";
    std::vector<std::string> header{"harness", "version", "role"};
    if (grid.merged) header.emplace_back("machine");
    for (const auto& probe : t.probes)
        header.push_back(md_escape(probe));
    out += md_table_row(header) + md_table_rule(header.size());
    for (const auto& row : t.rows) {
        std::vector<std::string> cells{md_escape(row.harness), md_escape(row.version),
                                       md_escape(row.role)};
        if (grid.merged) cells.push_back(md_escape(row.machine));
        for (const Cell* cell : row.cells)
            cells.push_back(cell_text(cell, grid));
        out += md_table_row(cells);
    }
    return out + "\n";
}

std::string legend(const Grid& grid) {
    std::string out = "### Legend\n\n";
    for (const auto& style : verdict_styles()) {
        out +=
            fmt::format("- {} **{}**: {}\n", style.symbol, to_string(style.verdict), style.meaning);
    }
    out += fmt::format("- {} not measured\n", k_not_measured);
    if (grid.merged)
        out += fmt::format("- {} the machines disagree on this cell\n", k_warning_sign);
    return out + "\n";
}

bool is_finding(const Cell& cell, const Grid& grid) {
    return cell.verdict == Verdict::violated || cell.verdict == Verdict::error ||
           grid.disagrees(cell);
}

std::string findings(const Matrix& m, const Grid& grid) {
    std::string out;
    for (const auto& cell : m.cells) {
        if (!is_finding(cell, grid)) continue;
        std::string title =
            fmt::format("#### {} {} · {} · {} · {}", style_of(cell.verdict).symbol,
                        md_escape(cell.harness + " " + cell.version), md_escape(cell.probe),
                        md_escape(cell.mode), md_escape(cell.role));
        if (!cell.machine.empty()) title += " · " + md_escape(cell.machine);
        out += title + "\n\n" + md_escape(evidence_summary(cell)) + "\n\n" +
               md_fenced(evidence_text(cell, k_tail_lines)) + "\n";
    }
    return out.empty() ? out : "### Evidence\n\n" + out;
}

} // namespace

std::string render_markdown(const Matrix& matrix) {
    const Grid grid = build_grid(matrix);
    std::string out = heading(matrix, grid);
    if (grid.tables.empty()) out += "No cells measured.\n\n";
    for (const auto& t : grid.tables)
        out += table(t, grid);
    out += legend(grid);
    out += findings(matrix, grid);
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
        out.pop_back();
    return out;
}

} // namespace sonata::reports
