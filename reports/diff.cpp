// Pairing cells of two matrices and classifying their changes.
#include "reports/diff.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/probe_ids.hpp"
#include "reports/evidence_text.hpp"
#include "reports/grid.hpp"
#include "reports/markdown_text.hpp"

namespace sonata::reports {
namespace {

using Identity = std::tuple<std::string, std::string, std::string, std::string, std::string>;

Identity identity(const Cell& c) { return {c.harness, c.probe, c.mode, c.role, c.machine}; }

/// Whether a verdict vouches for the property: enforced or asked.
bool holding(Verdict v) { return v == Verdict::enforced || v == Verdict::asked; }

/// A parent cell whose probe holds every child to it (probe_id::binds_every_child).
bool binds_children(const Cell& cell) {
    return cell.role == k_parent_role && probe_id::binds_every_child(cell.probe);
}

struct Sides {
    std::vector<const Cell*> before;
    std::vector<const Cell*> after;
};

void classify(const Cell& before, const Cell& after, std::vector<CellChange>& out) {
    if (before.verdict == after.verdict) return;
    ChangeKind kind = ChangeKind::changed;
    if (weakening(before.verdict, after.verdict) > 0)
        kind = ChangeKind::weaker;
    else if (weakening(after.verdict, before.verdict) > 0)
        kind = binds_children(after) ? ChangeKind::parent_guards : ChangeKind::stronger;
    out.push_back({kind, before, after});
}

void pair_sides(Sides& sides, std::vector<CellChange>& out) {
    for (auto b = sides.before.begin(); b != sides.before.end();) {
        const auto a = std::find_if(sides.after.begin(), sides.after.end(),
                                    [&](const Cell* c) { return c->version == (*b)->version; });
        if (a == sides.after.end()) {
            ++b;
            continue;
        }
        classify(**b, **a, out);
        sides.after.erase(a);
        b = sides.before.erase(b);
    }
    if (sides.before.size() == 1 && sides.after.size() == 1) {
        classify(*sides.before.front(), *sides.after.front(), out);
        return;
    }
    // A cell that held and is no longer measured vouches for nothing now: weaker, not just gone.
    for (const Cell* c : sides.before) {
        out.push_back(
            {holding(c->verdict) ? ChangeKind::weaker : ChangeKind::removed, *c, std::nullopt});
    }
    for (const Cell* c : sides.after) {
        const bool guards = binds_children(*c) && holding(c->verdict);
        out.push_back({guards ? ChangeKind::parent_guards : ChangeKind::added, std::nullopt, *c});
    }
}

const Cell& either(const CellChange& change) {
    return change.after ? *change.after : *change.before;
}

std::string verdict_text(const std::optional<Cell>& cell) {
    if (!cell) return "—";
    return std::string(style_of(cell->verdict).symbol) + " " +
           std::string(to_string(cell->verdict));
}

std::string version_text(const CellChange& change) {
    if (change.before && change.after && change.before->version != change.after->version) {
        return change.before->version + " → " + change.after->version;
    }
    return either(change).version;
}

std::string summary_line(const std::vector<CellChange>& changes) {
    std::string line;
    for (ChangeKind kind : {ChangeKind::weaker, ChangeKind::parent_guards, ChangeKind::stronger,
                            ChangeKind::changed, ChangeKind::added, ChangeKind::removed}) {
        const auto n = std::count_if(changes.begin(), changes.end(),
                                     [&](const CellChange& c) { return c.kind == kind; });
        if (n == 0 && kind == ChangeKind::parent_guards) continue; // only a matrix with a parent
        if (!line.empty()) line += ", ";
        line += std::to_string(n) + " " + std::string(to_string(kind));
    }
    return line;
}

} // namespace

std::string_view to_string(ChangeKind kind) {
    switch (kind) {
    case ChangeKind::weaker: return "weaker";
    case ChangeKind::parent_guards: return "the parent guards";
    case ChangeKind::stronger: return "stronger";
    case ChangeKind::changed: return "changed";
    case ChangeKind::added: return "new";
    case ChangeKind::removed: return "gone";
    }
    return "changed";
}

std::vector<CellChange> diff_matrices(const Matrix& before, const Matrix& after) {
    std::map<Identity, Sides> groups;
    for (const auto& c : before.cells)
        groups[identity(c)].before.push_back(&c);
    for (const auto& c : after.cells)
        groups[identity(c)].after.push_back(&c);
    std::vector<CellChange> changes;
    for (auto& [id, sides] : groups)
        pair_sides(sides, changes);
    std::stable_sort(changes.begin(), changes.end(), [](const CellChange& a, const CellChange& b) {
        const Cell& ca = either(a);
        const Cell& cb = either(b);
        return std::tie(a.kind, ca.harness, ca.version, ca.probe, ca.mode, ca.role, ca.machine) <
               std::tie(b.kind, cb.harness, cb.version, cb.probe, cb.mode, cb.role, cb.machine);
    });
    return changes;
}

bool any_weaker(const std::vector<CellChange>& changes) {
    return std::any_of(changes.begin(), changes.end(),
                       [](const CellChange& c) { return c.kind == ChangeKind::weaker; });
}

bool any_to_review(const std::vector<CellChange>& changes) {
    return std::any_of(changes.begin(), changes.end(), [](const CellChange& c) {
        return c.kind == ChangeKind::weaker || c.kind == ChangeKind::parent_guards;
    });
}

namespace {

/// The mark a change to review carries in the table.
std::string_view review_mark(ChangeKind kind) {
    if (kind == ChangeKind::weaker) return "🔻 ";
    if (kind == ChangeKind::parent_guards) return "🔶 ";
    return "";
}

} // namespace

std::string render_diff_markdown(const std::vector<CellChange>& changes,
                                 const std::string& before_label, const std::string& after_label) {
    std::string out = "## sonata capability matrix: changes\n\n";
    out += md_code_span(before_label) + " → " + md_code_span(after_label) + ": " +
           summary_line(changes) + ".\n\n";
    if (changes.empty()) return out + "No cell changed.\n";
    const bool machines = std::any_of(changes.begin(), changes.end(), [](const CellChange& c) {
        return !either(c).machine.empty();
    });
    std::vector<std::string> header{"change", "harness", "version", "probe", "mode", "role"};
    if (machines) header.emplace_back("machine");
    for (const char* column : {"before", "after", "evidence"})
        header.emplace_back(column);
    out += md_table_row(header) + md_table_rule(header.size());
    for (const auto& change : changes) {
        const Cell& cell = either(change);
        std::vector<std::string> row{std::string(review_mark(change.kind)) +
                                         std::string(to_string(change.kind)),
                                     md_escape(cell.harness),
                                     md_escape(version_text(change)),
                                     md_escape(cell.probe),
                                     md_escape(cell.mode),
                                     md_escape(cell.role)};
        if (machines) row.push_back(md_escape(cell.machine));
        row.push_back(verdict_text(change.before));
        row.push_back(verdict_text(change.after));
        row.push_back(md_escape(change.after || !change.before
                                    ? evidence_summary(cell)
                                    : "not measured any more; it was: " + evidence_summary(cell)));
        out += md_table_row(row);
    }
    return out;
}

} // namespace sonata::reports
