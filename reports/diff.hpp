// What changed between two matrices (last week's and today's, say): cells whose verdict moved,
// cells that appeared or disappeared. A harness upgrade is followed across versions, so an upgrade
// that weakens enforcement shows as "weaker" rather than as one cell gone and another new; a cell
// that held and is no longer measured is weaker too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/matrix.hpp"

namespace sonata::reports {

/// How a cell changed.
enum class ChangeKind {
    /// weakening(before, after) > 0: enforced → violated, asked → inconclusive…; also an enforced
    /// or asked cell that is no longer measured (`after` empty).
    weaker,
    /// A parent's cell (role k_parent_role) that starts holding, or a new one that holds: the
    /// parent guards something new, and every child that does not is now wider than it. To
    /// review, like weaker.
    parent_guards,
    stronger, ///< The reverse: the new verdict is the old one strengthened.
    changed,  ///< Different, but neither weaker nor stronger (inconclusive → error…).
    added,    ///< Measured now, not before.
    removed,  ///< Measured before (not holding: violated, inconclusive…), not now.
};

std::string_view to_string(ChangeKind kind);

/// One changed cell: `before` is empty for added cells, `after` for removed ones.
struct CellChange {
    ChangeKind kind = ChangeKind::changed;
    std::optional<Cell> before;
    std::optional<Cell> after;

    bool operator==(const CellChange&) const = default;
};

/// The changed cells, weaker first, then what the parent newly guards, stronger, changed, added,
/// removed; each group by key. Cells pair by harness, probe, mode, role and machine: the same
/// version first, and otherwise when exactly one version is left on each side (an upgrade).
/// Unchanged verdicts are left out.
std::vector<CellChange> diff_matrices(const Matrix& before, const Matrix& after);

/// True when some change is ChangeKind::weaker.
bool any_weaker(const std::vector<CellChange>& changes);

/// True when some change needs a review: weaker, or the parent guarding something new.
bool any_to_review(const std::vector<CellChange>& changes);

/// The changes as Markdown: a summary line and a table with each cell's evidence summary.
std::string render_diff_markdown(const std::vector<CellChange>& changes,
                                 const std::string& before_label, const std::string& after_label);

} // namespace sonata::reports
