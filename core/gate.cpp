// Gate lookups and the refusal they produce.
#include "core/gate.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/probe_ids.hpp"
#include "core/text.hpp"

namespace sonata {
namespace {

std::string summarize(const Cell& cell) {
    const Evidence& e = cell.evidence;
    std::vector<std::string> parts;
    if (!e.reason.empty()) parts.push_back(e.reason);
    if (!e.files_changed.empty()) parts.push_back("files changed: " + join(e.files_changed, ", "));
    if (!e.tool_calls.empty()) parts.push_back("model asked for: " + e.tool_calls.front());
    if (parts.empty()) parts.push_back("exit code " + std::to_string(e.exit_code));
    return join(parts, "; ");
}

bool holds(Verdict v) {
    return v == Verdict::enforced || v == Verdict::asked || v == Verdict::not_applicable;
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

std::vector<GateCheck> apply_gate(Decision& decision, const Matrix* matrix,
                                  GateStrictness strictness, const std::string& machine) {
    std::vector<GateCheck> checks;
    if (!decision.runs()) return checks;
    const std::string mode(to_string(decision.effective_mode));
    const std::string role = matrix_role(decision.effective_mode, decision.role.kind);
    const auto machines = matrix != nullptr ? matrix->machines() : std::vector<std::string>{};
    const bool merged = !machines.empty();
    if (merged && std::find(machines.begin(), machines.end(), machine) == machines.end()) {
        decision.outcome = Refusal{
            "the matrix merges the machines " + join(machines, ", ") +
                " and holds no cell of this machine (" + machine +
                "): another machine's verdicts say nothing about the harnesses installed here",
            {"gate with this machine's own matrix (drop --matrix, or pass the one `sonata probe` "
             "wrote here)",
             "run `sonata probe --harness " + decision.harness + "` on this machine"}};
        return checks;
    }
    std::vector<std::string> unmeasured;
    for (const auto& probe : decision.invocation().relies_on) {
        GateCheck check{probe, std::nullopt, {}};
        const Cell* cell = matrix != nullptr && !decision.version.empty()
                               ? matrix->find(decision.harness, decision.version, probe, mode, role,
                                              merged ? machine : std::string())
                               : nullptr;
        if (cell != nullptr && cell->verdict != Verdict::inconclusive &&
            cell->verdict != Verdict::error) {
            check.verdict = cell->verdict;
            check.evidence = summarize(*cell);
        }
        if (!check.verdict || !holds(*check.verdict)) {
            if (!check.verdict || *check.verdict != Verdict::violated) unmeasured.push_back(probe);
        }
        checks.push_back(check);
    }
    for (const auto& check : checks) {
        if (check.verdict && !holds(*check.verdict) && *check.verdict != Verdict::inconclusive) {
            decision.outcome =
                Refusal{"probe " + check.probe + " measured '" +
                            std::string(to_string(*check.verdict)) + "' for " + decision.harness +
                            "@" + decision.version + " in " + mode + " mode: " + check.evidence,
                        {"dispatch in a narrower mode",
                         "use another harness whose matrix shows " + check.probe + " enforced",
                         "re-run `sonata probe --harness " + decision.harness +
                             "` after upgrading the harness"}};
            return checks;
        }
    }
    if (!unmeasured.empty()) {
        const std::string what =
            join(unmeasured, ", ") + " not measured for " + decision.harness +
            (decision.version.empty() ? " (version unknown)" : "@" + decision.version);
        if (strictness == GateStrictness::strict) {
            decision.outcome =
                Refusal{"gate = \"strict\" and " + what,
                        {"run `sonata probe --harness " + decision.harness + "`",
                         "set gate = \"warn\" in sonata.toml to run unmeasured mappings"}};
            return checks;
        }
        decision.warnings.push_back(what + "; run `sonata probe --harness " + decision.harness +
                                    "`");
    }
    note_default_rule(decision, checks);
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
