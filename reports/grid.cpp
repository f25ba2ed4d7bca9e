// Arranging matrix cells into per-mode tables and finding where machines disagree.
#include "reports/grid.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/mode.hpp"
#include "core/probe_ids.hpp"

namespace sonata::reports {
namespace {

// Modes narrowest first; spellings sonata does not know sort after them, alphabetically.
std::tuple<int, std::string> mode_rank(const std::string& mode) {
    for (Mode m : {Mode::plan, Mode::default_mode, Mode::accept_edits, Mode::bypass_permissions}) {
        if (to_string(m) == mode) return {static_cast<int>(m), ""};
    }
    return {100, mode};
}

std::tuple<std::size_t, std::string> probe_rank(const std::string& probe) {
    const auto it = std::find(probe_id::all.begin(), probe_id::all.end(), probe);
    return {static_cast<std::size_t>(it - probe_id::all.begin()), probe};
}

ModeTable build_table(const std::string& mode, const std::vector<const Cell*>& cells) {
    ModeTable table{mode, {}, {}};
    std::set<std::string> probes;
    for (const Cell* c : cells)
        probes.insert(c->probe);
    table.probes.assign(probes.begin(), probes.end());
    std::sort(table.probes.begin(), table.probes.end(),
              [](const auto& a, const auto& b) { return probe_rank(a) < probe_rank(b); });
    std::map<std::tuple<std::string, std::string, std::string, std::string>, GridRow> rows;
    for (const Cell* c : cells) {
        auto& row = rows[{c->harness, c->version, c->role, c->machine}];
        if (row.cells.empty()) {
            row = GridRow{c->harness, c->version, c->role, c->machine, {}};
            row.cells.assign(table.probes.size(), nullptr);
        }
        const auto column = std::find(table.probes.begin(), table.probes.end(), c->probe);
        row.cells[static_cast<std::size_t>(column - table.probes.begin())] = c;
    }
    for (auto& [key, row] : rows)
        table.rows.push_back(std::move(row));
    return table;
}

} // namespace

const std::vector<VerdictStyle>& verdict_styles() {
    static const std::vector<VerdictStyle> styles{
        {Verdict::enforced, "✅", "#b7e4c7",
         "the property held: the forbidden action changed nothing"},
        {Verdict::asked, "🙋", "#b8e0f0", "the harness raised an approval prompt instead of acting"},
        {Verdict::refused_to_start, "⛔", "#ffd8a8",
         "the harness would not start with this invocation"},
        {Verdict::not_applicable, "➖", "#e4e4e4", "the harness lacks the feature the probe needs"},
        {Verdict::inconclusive, "❔", "#fff3b0",
         "the run did not reach the point of testing the property"},
        {Verdict::error, "💥", "#e0c3f0", "sonata itself failed"},
        {Verdict::violated, "❌", "#ff9b9b", "the forbidden action took effect"},
    };
    return styles;
}

const VerdictStyle& style_of(Verdict verdict) {
    const auto& styles = verdict_styles();
    const auto it = std::find_if(styles.begin(), styles.end(),
                                 [&](const VerdictStyle& s) { return s.verdict == verdict; });
    return it != styles.end() ? *it : styles.back();
}

std::string harness_label(const std::string& harness, const std::string& version) {
    return version.empty() ? harness : harness + "@" + version;
}

std::set<std::string> disagreeing_keys(const Matrix& matrix) {
    std::map<std::string, std::set<Verdict>> verdicts;
    for (const auto& c : matrix.cells)
        verdicts[c.key()].insert(c.verdict);
    std::set<std::string> keys;
    for (const auto& [key, seen] : verdicts) {
        if (seen.size() > 1) keys.insert(key);
    }
    return keys;
}

Grid build_grid(const Matrix& matrix) {
    Grid grid;
    std::map<std::tuple<int, std::string>, std::vector<const Cell*>> by_mode;
    std::map<std::tuple<int, std::string>, std::string> mode_names;
    for (const auto& c : matrix.cells) {
        by_mode[mode_rank(c.mode)].push_back(&c);
        mode_names[mode_rank(c.mode)] = c.mode;
        if (!c.machine.empty()) grid.merged = true;
    }
    for (const auto& [rank, cells] : by_mode)
        grid.tables.push_back(build_table(mode_names[rank], cells));
    grid.disagreeing = disagreeing_keys(matrix);
    return grid;
}

} // namespace sonata::reports
