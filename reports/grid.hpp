// The layout every renderer shares: verdict styles for the legend, and the matrix arranged as one
// harness × probe table per mode, with a machine column once several machines are merged.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/matrix.hpp"

namespace sonata::reports {

/// How a verdict looks in a report, and what it means, for the legend.
struct VerdictStyle {
    Verdict verdict;
    std::string_view symbol;  ///< Markdown: one emoji.
    std::string_view colour;  ///< HTML: background colour (CSS hex).
    std::string_view meaning; ///< One sentence for the legend.
};

/// Every verdict's style, in legend order (best to worst).
const std::vector<VerdictStyle>& verdict_styles();
const VerdictStyle& style_of(Verdict verdict);

/// One row of a mode's table: a harness version in a role (on a machine, when merged).
struct GridRow {
    std::string harness;
    std::string version;
    std::string role;
    std::string machine;            ///< Empty for a single machine's matrix.
    std::vector<const Cell*> cells; ///< One per probe column; nullptr when not measured.
};

/// The table for one mode.
struct ModeTable {
    std::string mode;                ///< Claude Code spelling.
    std::vector<std::string> probes; ///< Columns: catalogue order, then unknown ids sorted.
    std::vector<GridRow> rows;       ///< Sorted by harness, version, role, machine.
};

/// The whole matrix laid out. Points into the matrix it was built from: keep that alive.
struct Grid {
    bool merged = false;               ///< Some cell names a machine: show the machine column.
    std::vector<ModeTable> tables;     ///< Modes narrowest first, then unknown spellings sorted.
    std::set<std::string> disagreeing; ///< Cell keys whose verdict differs between machines.

    /// True when machines disagree about this cell's key.
    bool disagrees(const Cell& cell) const { return disagreeing.count(cell.key()) != 0; }
};

Grid build_grid(const Matrix& matrix);

/// "harness@version", or just "harness" when the version is unknown.
std::string harness_label(const std::string& harness, const std::string& version);

/// The keys (Cell::key()) on which the matrix's machines give different verdicts.
std::set<std::string> disagreeing_keys(const Matrix& matrix);

} // namespace sonata::reports
