// The gate: before a mapping runs, every property it relies on is looked up in the capability
// matrix for the installed harness version. Violated → refuse with the evidence; unmeasured → warn
// (or refuse under gate = "strict").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/decision.hpp"
#include "core/matrix.hpp"
#include "core/parent_reference.hpp"

namespace sonata {

/// One relied-on property as the matrix has it.
struct GateCheck {
    std::string probe;
    std::optional<Verdict> verdict; ///< nullopt: not measured for this harness version.
    std::string evidence;           ///< A one-line summary of the cell's evidence.
    /// protected-path-write: every guarded path the cell wrote lies in the workspace (none in the
    /// home directory), so a worktree, whose guarded paths apply holds back, contains it.
    bool workspace_only = false;
    /// The parent's cell for this probe in the same mode, when the parent guards it there
    /// ("claude@2.1.332 measured 'enforced'"); empty when no parent cell guards it.
    std::string parent;
};

/// What the dispatch's workspace holds of what the harness would load from a repository (the
/// files its adapter's hostile-workspace and mcp-reachability probes plant): either probe
/// `violated` refuses only when one of them is there.
struct WorkspaceFiles {
    std::string root;                    ///< The dispatch's workspace.
    std::vector<std::string> looked_for; ///< Relative; a trailing "/" is a directory of them.
    std::vector<std::string> found;      ///< Those present (a directory: when not empty).
    /// The dispatch runs in a git worktree of its own, whose changes to the paths the parent
    /// guards `sonata apply` holds back until the user confirms them.
    bool worktree = false;
};

/// The role key a cell is stored under: every plan-mode mapping is the read-only mapping.
std::string matrix_role(Mode effective, RoleKind role);

/// Looks up every relied-on probe and turns `decision` into a refusal when one is violated (or,
/// under strict, unmeasured). Adds warnings for unmeasured properties and a note for the
/// default-mode rule. `matrix` may be null (no matrix on this machine): everything is then
/// unmeasured. A matrix that merges several machines (its cells carry machine labels) gates on the
/// cells of `machine` only, and refuses when it holds none of them: another machine's verdicts say
/// nothing about the binaries installed here. With `workspace`, a violated hostile-workspace or
/// mcp-reachability refuses only when the workspace holds a file the harness would load, naming it;
/// otherwise the mapping runs with a note. A violated protected-path-write whose writes all lie in
/// the workspace runs with a note in a worktree (apply holds those paths back), and its refusal
/// elsewhere proposes the worktree. A refusal states the cell's reason and the call that did
/// it, points to `sonata report --cell KEY`, and names the narrower modes and the other harnesses
/// whose cells in the matrix hold. The parent's own cells (role "parent") in the same mode are the
/// reference: every probe the parent guards there is checked as if the mapping relied on it, and a
/// refusal names the parent's cell; without parent cells the fixed expectations stand, and a note
/// says so.
std::vector<GateCheck> apply_gate(Decision& decision, const Matrix* matrix,
                                  GateStrictness strictness,
                                  const std::string& machine = this_machine(),
                                  const WorkspaceFiles* workspace = nullptr);

/// The "gate" object for `plan --json`: {"probe": "verdict" | "unmeasured", …} plus "status".
std::string gate_to_json(const std::vector<GateCheck>& checks, const Decision& decision);

} // namespace sonata
