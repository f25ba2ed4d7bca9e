// The parent as measured: Claude Code's own cells (role "parent") in one mode, the reference every
// child dispatched in that mode is held to. What the parent guards there (its cells that hold), a
// child may not do.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "core/mode.hpp"

namespace sonata {

/// The parent's cells in one mode, from one version of it (the newest the matrix holds).
struct ParentReference {
    std::string harness;            ///< The parent's harness id ("claude").
    std::string version;            ///< The parent's version those cells measured.
    std::string mode;               ///< Claude Code spelling.
    std::vector<const Cell*> cells; ///< Its cells in `mode`; point into the matrix.

    /// The parent's cell for `probe`, or nullptr.
    const Cell* cell(const std::string& probe) const;
    /// Whether the parent guards `probe` in this mode: its cell is enforced or asked.
    bool guards(const std::string& probe) const;
    /// The probes the parent guards in this mode that hold every child (not parent-rule, which
    /// holds only a mapping that carries the parent's rules), in the order of its cells.
    std::vector<std::string> guarded() const;
    /// "claude@2.1.332", the parent as a refusal names it.
    std::string label() const;
};

/// The parent's cells in `mode` (on `machine` when the matrix merges machines; "" for all), or
/// nullopt when the matrix holds none there. Several versions of the parent: the newest.
std::optional<ParentReference> parent_reference(const Matrix& matrix, const std::string& mode,
                                                const std::string& machine = {});

/// Per mode, the probes the parent guards there: what the prober measures every child on besides
/// what its mapping relies on, so a parent that starts guarding something new shows each child
/// that does not as wider.
using ParentGuards = std::map<Mode, std::set<std::string>>;

/// The guards of every mode the matrix holds parent cells in.
ParentGuards parent_guards(const Matrix& matrix, const std::string& machine = {});

/// Orders dotted versions numerically where both parts are numbers ("2.1.10" > "2.1.9"), else as
/// text; negative, zero or positive like strcmp.
int compare_versions(const std::string& a, const std::string& b);

} // namespace sonata
