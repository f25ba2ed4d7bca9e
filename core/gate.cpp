// Gate lookups and the refusal they produce.
#include "core/gate.hpp"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/probe_ids.hpp"
#include "core/protected_paths.hpp"
#include "core/text.hpp"

namespace sonata {
namespace {

std::string clipped(const std::string& text, std::size_t limit) {
    if (text.size() <= limit) return text;
    auto cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U)
        --cut; // never inside a UTF-8 sequence
    return text.substr(0, cut) + "…";
}

/// The one or two facts that prove the cell's verdict: its reason, and the first call the model
/// made (or, with no call, the first change); never the whole list of changes.
std::string summarize(const Cell& cell) {
    const Evidence& e = cell.evidence;
    std::vector<std::string> parts;
    if (!e.reason.empty()) parts.push_back(clipped(e.reason, 300));
    if (!e.tool_calls.empty()) {
        parts.push_back("the call: " + clipped(e.tool_calls.front(), 160));
    } else if (!e.files_changed.empty() && e.reason.empty()) {
        parts.push_back(e.files_changed.front());
    }
    if (parts.empty()) parts.push_back("exit code " + std::to_string(e.exit_code));
    return join(parts, "; ");
}

bool holds(Verdict v) {
    return v == Verdict::enforced || v == Verdict::asked || v == Verdict::not_applicable;
}

/// The probes the parent guards in `mode` (none without parent cells there).
std::vector<std::string> guarded_in(const Matrix& matrix, const std::string& mode,
                                    const std::string& machine) {
    const auto parent = parent_reference(matrix, mode, machine);
    return parent ? parent->guarded() : std::vector<std::string>{};
}

/// Whether the matrix shows every cell of `harness@version` in `mode`/`role` holding (at least
/// one cell, none violated), and a holding cell for every probe in `guarded` (what the parent
/// guards in that mode).
bool all_hold(const Matrix& matrix, const std::string& harness, const std::string& version,
              const std::string& mode, const std::string& role, const std::string& machine,
              const std::vector<std::string>& guarded) {
    bool any = false;
    for (const auto& cell : matrix.cells) {
        if (cell.harness != harness || cell.version != version || cell.mode != mode ||
            cell.role != role || (!machine.empty() && cell.machine != machine)) {
            continue;
        }
        if (cell.verdict == Verdict::violated) return false;
        any = true;
    }
    return any && std::all_of(guarded.begin(), guarded.end(), [&](const std::string& probe) {
               const Cell* cell = matrix.find(harness, version, probe, mode, role, machine);
               return cell != nullptr && holds(cell->verdict);
           });
}

/// The alternatives a refusal names: narrower modes of this harness, and the other harnesses,
/// whose cells in the matrix for that mode all hold; then re-probing.
std::vector<std::string> alternatives(const Decision& decision, const Matrix& matrix,
                                      const std::string& machine) {
    std::vector<std::string> out;
    for (int m = static_cast<int>(decision.effective_mode) - 1; m >= 0; --m) {
        const auto narrower = static_cast<Mode>(m);
        const std::string mode(to_string(narrower));
        if (all_hold(matrix, decision.harness, decision.version, mode,
                     matrix_role(narrower, decision.role.kind), machine,
                     guarded_in(matrix, mode, machine))) {
            out.push_back("dispatch " + decision.harness + " in " + mode +
                          " mode: the matrix shows its cells there holding");
            break;
        }
    }
    const std::string mode(to_string(decision.effective_mode));
    const std::string role = matrix_role(decision.effective_mode, decision.role.kind);
    const auto guarded = guarded_in(matrix, mode, machine);
    std::vector<std::string> tried;
    std::vector<std::string> others;
    for (const auto& cell : matrix.cells) {
        const std::string name = cell.harness + "@" + cell.version;
        if (cell.harness == decision.harness || cell.mode != mode || cell.role != role ||
            std::find(tried.begin(), tried.end(), name) != tried.end()) {
            continue;
        }
        tried.push_back(name);
        if (all_hold(matrix, cell.harness, cell.version, mode, role, machine, guarded))
            others.push_back(name);
    }
    if (!others.empty()) {
        out.push_back("dispatch to " + join(others, ", ") + ": the matrix shows their cells in " +
                      mode + " mode holding");
    }
    out.push_back("re-run `sonata probe --harness " + decision.harness +
                  "` after upgrading the harness");
    return out;
}

/// The files `workspace` found, as a phrase: "opencode.json" or "opencode.json and 2 more".
std::string found_phrase(const WorkspaceFiles& workspace) {
    const auto more = workspace.found.size() - 1;
    return workspace.found.front() + (more == 0 ? "" : " and " + std::to_string(more) + " more");
}

void note_default_rule(Decision& decision, const std::vector<GateCheck>& checks) {
    if (decision.effective_mode != Mode::default_mode || !decision.runs()) return;
    for (const auto& check : checks) {
        if (check.probe != probe_id::rm_prompt || !check.verdict) continue;
        auto& inv = std::get<Invocation>(decision.outcome);
        if (*check.verdict == Verdict::asked) {
            inv.notes.push_back(
                "rm-prompt measured 'asked': unapproved actions surface as approval prompts");
        } else if (*check.verdict == Verdict::enforced) {
            inv.notes.push_back(
                "rm-prompt measured 'enforced': unapproved actions are refused, not asked");
        }
    }
}

} // namespace

std::string matrix_role(Mode effective, RoleKind role) {
    return effective == Mode::plan ? "read-only" : std::string(to_string(role));
}

namespace {

/// What every check of one decision shares: the matrix's words for its mode and role, and the
/// machine a merged matrix is read for ("" when the matrix is one machine's).
struct GateScope {
    const Matrix* matrix;
    std::string mode;
    std::string role;
    std::string machine;
    std::optional<ParentReference> parent; ///< The parent's cells in `mode`, when measured.
};

/// The refusal of a matrix that merges machines without this one; nullopt when it is fine.
std::optional<Refusal> foreign_matrix(const Decision& decision, const Matrix* matrix,
                                      const std::string& machine) {
    const auto machines = matrix != nullptr ? matrix->machines() : std::vector<std::string>{};
    if (machines.empty() || std::find(machines.begin(), machines.end(), machine) != machines.end())
        return std::nullopt;
    return Refusal{
        "the matrix merges the machines " + join(machines, ", ") +
            " and holds no cell of this machine (" + machine +
            "): another machine's verdicts say nothing about the harnesses installed here",
        {"gate with this machine's own matrix (drop --matrix, or pass the one `sonata probe` "
         "wrote here)",
         "run `sonata probe --harness " + decision.harness + "` on this machine"}};
}

/// The matrix's verdict on `probe` for the decision (none when it has no conclusive cell); a
/// probe that does not hold and is not violated goes to `unmeasured`, with the reason its cell
/// gives when it could not conclude (the census names the unknown tools).
/// Whether `cell` changed a guarded path in the home directory ("created home/.bashrc").
bool wrote_home_guard(const Cell& cell) {
    for (const auto& change : cell.evidence.files_changed) {
        const auto path = std::string_view(change).substr(change.find(' ') + 1);
        for (const auto& p : k_protected_paths) {
            if (p.root == PathRoot::home && path.starts_with("home/") && path.substr(5) == p.file)
                return true;
        }
    }
    return false;
}

GateCheck check_probe(const Decision& decision, const std::string& probe, const GateScope& scope,
                      std::vector<std::string>& unmeasured) {
    GateCheck check{probe, std::nullopt, {}, false, {}};
    if (scope.parent && scope.parent->guards(probe)) {
        check.parent = scope.parent->label() + " measured '" +
                       std::string(to_string(scope.parent->cell(probe)->verdict)) + "'";
    }
    const Cell* cell = scope.matrix != nullptr && !decision.version.empty()
                           ? scope.matrix->find(decision.harness, decision.version, probe,
                                                scope.mode, scope.role, scope.machine)
                           : nullptr;
    if (cell != nullptr && cell->verdict != Verdict::inconclusive &&
        cell->verdict != Verdict::error) {
        check.verdict = cell->verdict;
        check.evidence = summarize(*cell);
        check.workspace_only = probe == probe_id::protected_path_write && !wrote_home_guard(*cell);
    }
    if (check.verdict && (holds(*check.verdict) || *check.verdict == Verdict::violated))
        return check;
    const bool said = cell != nullptr && !cell->evidence.reason.empty();
    std::string what = said ? probe + " (" + std::string(to_string(cell->verdict)) + ": " +
                                  clipped(cell->evidence.reason, 200) + ")"
                            : probe;
    if (!check.parent.empty()) what += " (the parent guards it: " + check.parent + ")";
    unmeasured.push_back(std::move(what));
    return check;
}

/// Whether a violated check is one a worktree contains: protected-path-write, every guarded path
/// written in the workspace, and the dispatch in a worktree whose guarded paths apply holds back.
bool worktree_contains(const GateCheck& check, const WorkspaceFiles* workspace) {
    return check.probe == probe_id::protected_path_write && check.workspace_only &&
           workspace != nullptr && workspace->worktree;
}

/// Whether a violated check is about what a repository defines (hostile-workspace,
/// mcp-reachability): without any of it, nothing is there to load or call.
bool loads_repository(const GateCheck& check, const WorkspaceFiles* workspace) {
    return (check.probe == probe_id::hostile_workspace ||
            check.probe == probe_id::mcp_reachability) &&
           *check.verdict == Verdict::violated && workspace != nullptr;
}

/// The refusal a check that does not hold makes, naming its evidence and the alternatives.
Refusal refusal_for(const Decision& decision, const GateCheck& check, const GateScope& scope,
                    const WorkspaceFiles* workspace) {
    const std::string who = decision.harness + "@" + decision.version;
    const std::string key = who + " " + check.probe + " " + scope.mode + " " + scope.role;
    const bool repository = loads_repository(check, workspace);
    std::string reason = "probe " + check.probe + " measured '" +
                         std::string(to_string(*check.verdict)) + "' for " + who + " in " +
                         scope.mode + " mode: ";
    if (repository) {
        reason += decision.harness + " loads what the repository holds, and this workspace holds " +
                  found_phrase(*workspace) + " (in " + workspace->root +
                  "; measured: " + check.evidence + ")";
    } else {
        reason += check.evidence;
    }
    reason += ". Full evidence: sonata report --cell '" + key + "'";
    if (!check.parent.empty()) {
        reason += ". Wider than the parent: " + check.parent + " in " + scope.mode +
                  " mode (sonata report --cell '" + scope.parent->cell(check.probe)->key() + "')";
    }
    auto others = alternatives(decision, *scope.matrix, scope.machine);
    if (check.probe == probe_id::protected_path_write && check.workspace_only) {
        others.insert(
            others.begin(),
            "the same harness in a git worktree of its own (`sonata dispatch --worktree`, "
            "MCP `worktree: true`): `sonata apply` lands its other changes and holds "
            "the guarded paths back until you land them with `sonata apply ID "
            "--include-sensitive`");
    }
    if (repository) {
        others.insert(others.begin(),
                      "dispatch from a workspace without " + join(workspace->found, ", "));
    }
    return Refusal{std::move(reason), std::move(others)};
}

/// The note a repository-loading violation leaves when this workspace holds nothing to load.
std::string empty_workspace_note(const Decision& decision, const GateCheck& check,
                                 const GateScope& scope, const WorkspaceFiles& workspace) {
    return check.probe + " measured 'violated' for " + decision.harness + "@" + decision.version +
           " in " + scope.mode + " mode (" + decision.harness +
           " loads what a repository holds); this workspace holds none of " +
           join(workspace.looked_for, ", ") + ", so it runs; sonata refuses while one is there";
}

/// The probes a mapping is held to: what it relies on, then what the parent guards in the same
/// mode and the mapping does not name (a parent that starts guarding something new holds every
/// child to it).
std::vector<std::string> held_to(const std::vector<std::string>& relies_on,
                                 const GateScope& scope) {
    std::vector<std::string> probes = relies_on;
    if (!scope.parent) return probes;
    for (auto& probe : scope.parent->guarded()) {
        if (std::find(probes.begin(), probes.end(), probe) == probes.end())
            probes.push_back(std::move(probe));
    }
    return probes;
}

/// The note of a matrix that holds no cell of the parent in this mode.
std::string fixed_expectations_note(const GateScope& scope) {
    return "the matrix holds no cell of the parent in " + scope.mode +
           " mode: gated on sonata's fixed expectations for it; `sonata probe --harness claude` "
           "measures the parent";
}

/// Unmeasured relied-on probes: a refusal under gate = "strict", else a warning.
void gate_unmeasured(Decision& decision, const std::vector<std::string>& unmeasured,
                     GateStrictness strictness) {
    if (unmeasured.empty()) return;
    const std::string what =
        join(unmeasured, ", ") + " not measured for " + decision.harness +
        (decision.version.empty() ? " (version unknown)" : "@" + decision.version);
    if (strictness == GateStrictness::strict) {
        decision.outcome =
            Refusal{"gate = \"strict\" and " + what,
                    {"run `sonata probe --harness " + decision.harness + "`",
                     "set gate = \"warn\" in sonata.toml to run unmeasured mappings"}};
        return;
    }
    decision.warnings.push_back(what + "; run `sonata probe --harness " + decision.harness + "`");
}

} // namespace

std::vector<GateCheck> apply_gate(Decision& decision, const Matrix* matrix,
                                  GateStrictness strictness, const std::string& machine,
                                  const WorkspaceFiles* workspace) {
    std::vector<GateCheck> checks;
    if (!decision.runs()) return checks;
    if (auto refusal = foreign_matrix(decision, matrix, machine)) {
        decision.outcome = std::move(*refusal);
        return checks;
    }
    const bool merged = matrix != nullptr && !matrix->machines().empty();
    GateScope scope{matrix, std::string(to_string(decision.effective_mode)),
                    matrix_role(decision.effective_mode, decision.role.kind),
                    merged ? machine : std::string(), std::nullopt};
    if (matrix != nullptr) scope.parent = parent_reference(*matrix, scope.mode, scope.machine);
    std::vector<std::string> unmeasured;
    for (const auto& probe : held_to(decision.invocation().relies_on, scope))
        checks.push_back(check_probe(decision, probe, scope, unmeasured));
    std::vector<std::string> notes;
    if (matrix != nullptr && !scope.parent) notes.push_back(fixed_expectations_note(scope));
    for (const auto& check : checks) {
        if (!check.verdict || holds(*check.verdict) || *check.verdict == Verdict::inconclusive)
            continue;
        if (loads_repository(check, workspace) && workspace->found.empty()) {
            notes.push_back(empty_workspace_note(decision, check, scope, *workspace));
            continue;
        }
        if (worktree_contains(check, workspace)) {
            notes.push_back(check.probe + " measured 'violated' for " + decision.harness + "@" +
                            decision.version + " in " + scope.mode + " mode (" + check.evidence +
                            "); it runs in a worktree of its own, and `sonata apply` holds its "
                            "changes to those paths back until you confirm them");
            continue;
        }
        decision.outcome = refusal_for(decision, check, scope, workspace);
        return checks;
    }
    gate_unmeasured(decision, unmeasured, strictness);
    if (!decision.runs()) return checks;
    note_default_rule(decision, checks);
    auto& inv = std::get<Invocation>(decision.outcome);
    inv.notes.insert(inv.notes.end(), notes.begin(), notes.end());
    return checks;
}

std::string gate_to_json(const std::vector<GateCheck>& checks, const Decision& decision) {
    nlohmann::ordered_json gate;
    nlohmann::ordered_json probes = nlohmann::ordered_json::object();
    for (const auto& check : checks) {
        probes[check.probe] =
            check.verdict ? std::string(to_string(*check.verdict)) : std::string("unmeasured");
    }
    gate["probes"] = probes;
    gate["status"] = decision.runs() ? "pass" : "refuse";
    return gate.dump();
}

} // namespace sonata
