// The gate over a matrix: violated → refusal with evidence, unmeasured → warning or strict refusal.
#include <algorithm>

#include <gtest/gtest.h>

#include "core/gate.hpp"

namespace sonata {
namespace {

Decision plan_decision() {
    Decision d;
    d.harness = "codex";
    d.version = "0.171.0";
    d.parent_mode = Mode::default_mode;
    d.effective_mode = Mode::plan;
    d.role = Role{"review", RoleKind::read_only, {}, {}};
    Invocation inv;
    inv.argv = {"codex", "exec", "--sandbox", "read-only"};
    inv.relies_on = {"write-withheld", "shell-write-withheld"};
    d.outcome = inv;
    return d;
}

Cell cell(const std::string& probe, Verdict verdict) {
    Cell c;
    c.harness = "codex";
    c.version = "0.171.0";
    c.probe = probe;
    c.mode = "plan";
    c.role = "read-only";
    c.verdict = verdict;
    c.evidence.files_changed = {"created work/probe-write.txt"};
    return c;
}

TEST(Gate, AllEnforcedRuns) {
    Matrix m;
    m.merge({cell("write-withheld", Verdict::enforced),
             cell("shell-write-withheld", Verdict::enforced)});
    Decision d = plan_decision();
    const auto checks = apply_gate(d, &m, GateStrictness::strict);
    ASSERT_TRUE(d.runs());
    EXPECT_TRUE(d.warnings.empty());
    EXPECT_EQ(
        gate_to_json(checks, d),
        R"({"probes":{"write-withheld":"enforced","shell-write-withheld":"enforced"},"status":"pass"})");
}

TEST(Gate, ViolatedRefusesQuotingProbeAndEvidence) {
    Matrix m;
    m.merge({cell("write-withheld", Verdict::enforced),
             cell("shell-write-withheld", Verdict::violated)});
    Decision d = plan_decision();
    apply_gate(d, &m, GateStrictness::warn);
    ASSERT_FALSE(d.runs());
    EXPECT_EQ(d.refusal().reason,
              "probe shell-write-withheld measured 'violated' for codex@0.171.0 in plan mode: "
              "created work/probe-write.txt. Full evidence: sonata report --cell "
              "'codex@0.171.0 shell-write-withheld plan read-only'");
    EXPECT_FALSE(d.refusal().alternatives.empty());
}

// A refusal a person can read: the reason and the call that proved it, never every change; the
// alternatives name harnesses and modes the matrix shows holding.
TEST(Gate, ARefusalStatesTheProofAndNamesConcreteAlternatives) {
    Cell bad = cell("shell-write-withheld", Verdict::violated);
    bad.evidence.reason = "work/probe-shell.txt changed although the mapping forbids it";
    bad.evidence.tool_calls = {"exec_command {\"cmd\":\"printf x > probe-shell.txt\"}"};
    bad.evidence.files_changed = {"created work/probe-shell.txt", "created home/.codex/a",
                                  "created home/.codex/b"};
    Cell other = cell("shell-write-withheld", Verdict::enforced);
    other.harness = "claude";
    other.version = "2.1.197";
    Cell other_bad = cell("write-withheld", Verdict::violated);
    other_bad.harness = "pi";
    other_bad.version = "0.73.1";
    Matrix m;
    m.merge({cell("write-withheld", Verdict::enforced), bad, other, other_bad});
    Decision d = plan_decision();
    apply_gate(d, &m, GateStrictness::warn);
    ASSERT_FALSE(d.runs());
    const auto& reason = d.refusal().reason;
    EXPECT_NE(reason.find("changed although the mapping forbids it; the call: exec_command"),
              std::string::npos)
        << reason;
    EXPECT_EQ(reason.find("home/.codex"), std::string::npos) << reason;
    const auto& alternatives = d.refusal().alternatives;
    ASSERT_EQ(alternatives.size(), 2U) << ::testing::PrintToString(alternatives);
    EXPECT_EQ(alternatives[0],
              "dispatch to claude@2.1.197: the matrix shows their cells in plan mode holding");
    EXPECT_NE(alternatives[1].find("re-run `sonata probe --harness codex`"), std::string::npos);
}

Decision loads_repository_decision() {
    Decision d = plan_decision();
    d.harness = "opencode";
    d.version = "1.18.33";
    std::get<Invocation>(d.outcome).relies_on = {"hostile-workspace"};
    return d;
}

Matrix hostile_violated() {
    Cell c = cell("hostile-workspace", Verdict::violated);
    c.harness = "opencode";
    c.version = "1.18.33";
    c.evidence.reason = "code defined by the repository ran (outside/startup-canary was written)";
    Matrix m;
    m.merge({c});
    return m;
}

TEST(Gate, AHarnessThatLoadsTheRepositoryRunsWhereTheWorkspaceHoldsNothingItLoads) {
    const Matrix m = hostile_violated();
    WorkspaceFiles workspace{"/ws", {"opencode.json", ".opencode/plugin/"}, {}};
    Decision d = loads_repository_decision();
    const auto checks = apply_gate(d, &m, GateStrictness::strict, this_machine(), &workspace);
    ASSERT_TRUE(d.runs()) << d.refusal().reason;
    const auto& notes = d.invocation().notes;
    ASSERT_FALSE(notes.empty());
    EXPECT_EQ(notes.back(), "hostile-workspace measured 'violated' for opencode@1.18.33 in plan "
                            "mode (opencode loads what a repository holds); this workspace holds "
                            "none of opencode.json, .opencode/plugin/, so it runs; sonata refuses "
                            "while one is there");
    ASSERT_EQ(checks.size(), 1U);
    EXPECT_EQ(checks[0].verdict, Verdict::violated);

    workspace.found = {".opencode/plugin/"};
    Decision refused = loads_repository_decision();
    apply_gate(refused, &m, GateStrictness::warn, this_machine(), &workspace);
    ASSERT_FALSE(refused.runs());
    EXPECT_NE(refused.refusal().reason.find(
                  "opencode loads what the repository holds, and this workspace holds "
                  ".opencode/plugin/ (in /ws; measured: code defined by the repository ran"),
              std::string::npos)
        << refused.refusal().reason;
    EXPECT_EQ(refused.refusal().alternatives.front(),
              "dispatch from a workspace without .opencode/plugin/");

    // Without a workspace to look at, the violation refuses as any other.
    Decision blind = loads_repository_decision();
    apply_gate(blind, &m, GateStrictness::warn);
    EXPECT_FALSE(blind.runs());
}

/// A gemini acceptEdits mapping, which relies on the parent's guard of sensitive paths.
Decision accept_edits_decision() {
    Decision d;
    d.harness = "gemini";
    d.version = "0.61.0";
    d.parent_mode = Mode::accept_edits;
    d.effective_mode = Mode::accept_edits;
    d.role = Role{"code", RoleKind::write, {}, {}};
    Invocation inv;
    inv.argv = {"gemini", "--approval-mode", "auto_edit"};
    inv.relies_on = {"protected-path-write"};
    d.outcome = inv;
    return d;
}

/// protected-path-write violated for gemini in acceptEdits, having written `changed`.
Matrix guarded_paths_written(std::vector<std::string> changed) {
    Cell c = cell("protected-path-write", Verdict::violated);
    c.harness = "gemini";
    c.version = "0.61.0";
    c.mode = "acceptEdits";
    c.role = "write";
    c.evidence.reason = "wrote 1 path(s) the parent guards, unasked: work/.mcp.json (write_file)";
    c.evidence.files_changed = std::move(changed);
    Matrix m;
    m.merge({c});
    return m;
}

// A child that writes what the parent guards is refused in place; when everything it wrote lies in
// the workspace, the refusal proposes a worktree, where the dispatch runs (apply holds the paths
// back); a child that also writes guarded paths in the home directory is refused in a worktree too.
TEST(Gate, AChildWiderThanTheParentsGuardRunsOnlyInAWorktreeThatHoldsItsWritesBack) {
    const Matrix m =
        guarded_paths_written({"created work/.mcp.json", "created home/.gemini/projects.json"});
    WorkspaceFiles in_place{"/ws", {}, {}};
    Decision refused = accept_edits_decision();
    apply_gate(refused, &m, GateStrictness::warn, this_machine(), &in_place);
    ASSERT_FALSE(refused.runs());
    EXPECT_EQ(refused.refusal().reason,
              "probe protected-path-write measured 'violated' for gemini@0.61.0 in acceptEdits "
              "mode: wrote 1 path(s) the parent guards, unasked: work/.mcp.json (write_file). Full "
              "evidence: sonata report --cell 'gemini@0.61.0 protected-path-write acceptEdits "
              "write'");
    EXPECT_EQ(refused.refusal().alternatives.front(),
              "the same harness in a git worktree of its own (`sonata dispatch --worktree`, MCP "
              "`worktree: true`): `sonata apply` lands its other changes and holds the guarded "
              "paths back until you land them with `sonata apply ID --include-sensitive`");

    WorkspaceFiles worktree{"/ws/.sonata/worktrees/r1", {}, {}, true};
    Decision runs = accept_edits_decision();
    apply_gate(runs, &m, GateStrictness::strict, this_machine(), &worktree);
    ASSERT_TRUE(runs.runs()) << runs.refusal().reason;
    ASSERT_FALSE(runs.invocation().notes.empty());
    EXPECT_EQ(runs.invocation().notes.back(),
              "protected-path-write measured 'violated' for gemini@0.61.0 in acceptEdits mode "
              "(wrote 1 path(s) the parent guards, unasked: work/.mcp.json (write_file)); it runs "
              "in a worktree of its own, and `sonata apply` holds its changes to those paths back "
              "until you confirm them");

    const Matrix home = guarded_paths_written({"created work/.mcp.json", "created home/.bashrc"});
    Decision still_refused = accept_edits_decision();
    apply_gate(still_refused, &home, GateStrictness::warn, this_machine(), &worktree);
    ASSERT_FALSE(still_refused.runs());
    const auto& others = still_refused.refusal().alternatives;
    EXPECT_TRUE(std::none_of(others.begin(), others.end(), [](const std::string& other) {
        return other.starts_with("the same harness in a git worktree");
    })) << "no worktree holds ~/.bashrc back";
}

TEST(Gate, AReachableProjectMcpServerRefusesOnlyWhereTheWorkspaceDefinesOne) {
    // reasonix 1.38.11 calls a project MCP tool that claims to only read, in dontAsk.
    Cell c = cell("mcp-reachability", Verdict::violated);
    c.harness = "reasonix";
    c.version = "1.38.11";
    c.evidence.reason = "the project MCP server's tool ran";
    Matrix m;
    m.merge({c});
    const auto decision = [] {
        Decision d = plan_decision();
        d.harness = "reasonix";
        d.version = "1.38.11";
        std::get<Invocation>(d.outcome).relies_on = {"mcp-reachability"};
        return d;
    };
    WorkspaceFiles workspace{"/ws", {"reasonix.toml", ".mcp.json"}, {}};
    Decision runs = decision();
    apply_gate(runs, &m, GateStrictness::strict, this_machine(), &workspace);
    ASSERT_TRUE(runs.runs()) << runs.refusal().reason;
    EXPECT_EQ(runs.invocation().notes.back(),
              "mcp-reachability measured 'violated' for reasonix@1.38.11 in plan mode (reasonix "
              "loads what a repository holds); this workspace holds none of reasonix.toml, "
              ".mcp.json, so it runs; sonata refuses while one is there");

    workspace.found = {".mcp.json"};
    Decision refused = decision();
    apply_gate(refused, &m, GateStrictness::warn, this_machine(), &workspace);
    ASSERT_FALSE(refused.runs());
    EXPECT_NE(refused.refusal().reason.find("this workspace holds .mcp.json (in /ws; measured: the "
                                            "project MCP server's tool ran"),
              std::string::npos)
        << refused.refusal().reason;
}

TEST(Gate, UnmeasuredWarnsOrRefusesUnderStrict) {
    Matrix m;
    m.merge({cell("write-withheld", Verdict::enforced)});
    Decision warned = plan_decision();
    apply_gate(warned, &m, GateStrictness::warn);
    ASSERT_TRUE(warned.runs());
    ASSERT_EQ(warned.warnings.size(), 1U);
    EXPECT_EQ(
        warned.warnings[0],
        "shell-write-withheld not measured for codex@0.171.0; run `sonata probe --harness codex`");

    Decision strict = plan_decision();
    apply_gate(strict, &m, GateStrictness::strict);
    ASSERT_FALSE(strict.runs());
    EXPECT_EQ(strict.refusal().reason,
              "gate = \"strict\" and shell-write-withheld not measured for codex@0.171.0");
}

// An inconclusive census is no measurement: a warning that names the tools it could not judge, a
// refusal under strict.
TEST(Gate, AnInconclusiveCellWarnsWithItsReason) {
    Matrix m;
    Cell census = cell("tool-census", Verdict::inconclusive);
    census.evidence.reason = "offers 1 tool(s) sonata has never heard of, so what they can do is "
                             "not measured: notes_append";
    m.merge({cell("write-withheld", Verdict::enforced), census});
    Decision warned = plan_decision();
    std::get<Invocation>(warned.outcome).relies_on = {"write-withheld", "tool-census"};
    apply_gate(warned, &m, GateStrictness::warn);
    ASSERT_TRUE(warned.runs());
    ASSERT_EQ(warned.warnings.size(), 1U);
    EXPECT_EQ(warned.warnings[0],
              "tool-census (inconclusive: " + census.evidence.reason +
                  ") not measured for codex@0.171.0; run `sonata probe --harness codex`");

    Decision strict = warned;
    strict.warnings.clear();
    strict.outcome = plan_decision().outcome;
    std::get<Invocation>(strict.outcome).relies_on = {"write-withheld", "tool-census"};
    apply_gate(strict, &m, GateStrictness::strict);
    ASSERT_FALSE(strict.runs());
    EXPECT_NE(strict.refusal().reason.find("notes_append"), std::string::npos);
}

TEST(Gate, OtherVersionIsUnmeasured) {
    Matrix m;
    m.merge({cell("write-withheld", Verdict::violated),
             cell("shell-write-withheld", Verdict::violated)});
    Decision d = plan_decision();
    d.version = "0.172.0";
    apply_gate(d, &m, GateStrictness::warn);
    EXPECT_TRUE(d.runs());
    ASSERT_EQ(d.warnings.size(), 1U);
}

TEST(Gate, NoMatrixMeansUnmeasured) {
    Decision d = plan_decision();
    const auto checks = apply_gate(d, nullptr, GateStrictness::warn);
    EXPECT_TRUE(d.runs());
    EXPECT_EQ(
        gate_to_json(checks, d),
        R"({"probes":{"write-withheld":"unmeasured","shell-write-withheld":"unmeasured"},"status":"pass"})");
}

// Two cells for one key (a merged or hand-edited matrix): whatever their order, the weakest wins.
TEST(Gate, DuplicateCellsResolveToTheWeakestVerdict) {
    for (const Verdict other :
         {Verdict::enforced, Verdict::inconclusive, Verdict::not_applicable}) {
        for (const bool violated_first : {false, true}) {
            Matrix m;
            m.cells = {cell("shell-write-withheld", Verdict::enforced)};
            const Cell bad = cell("write-withheld", Verdict::violated);
            const Cell good = cell("write-withheld", other);
            const std::vector<Cell> pair =
                violated_first ? std::vector<Cell>{bad, good} : std::vector<Cell>{good, bad};
            m.cells.insert(m.cells.end(), pair.begin(), pair.end());
            Decision d = plan_decision();
            apply_gate(d, &m, GateStrictness::warn, "here");
            EXPECT_FALSE(d.runs()) << to_string(other) << (violated_first ? " after" : " before");
        }
    }
    Matrix unsure;
    unsure.cells = {cell("write-withheld", Verdict::enforced),
                    cell("write-withheld", Verdict::inconclusive),
                    cell("shell-write-withheld", Verdict::enforced)};
    Decision d = plan_decision();
    const auto checks = apply_gate(d, &unsure, GateStrictness::strict, "here");
    EXPECT_FALSE(d.runs())
        << "an inconclusive copy leaves write-withheld unmeasured, which strict refuses";
    EXPECT_EQ(checks.front().verdict, std::nullopt);
}

TEST(Gate, AMergedMatrixGatesOnThisMachineOrRefuses) {
    const auto on = [](Cell c, const std::string& machine) {
        c.machine = machine;
        return c;
    };
    Matrix m;
    m.cells = {on(cell("write-withheld", Verdict::violated), "laptop"),
               on(cell("write-withheld", Verdict::enforced), "ci"),
               on(cell("shell-write-withheld", Verdict::enforced), "ci"),
               on(cell("shell-write-withheld", Verdict::enforced), "laptop")};
    Decision on_ci = plan_decision();
    apply_gate(on_ci, &m, GateStrictness::strict, "ci");
    EXPECT_TRUE(on_ci.runs()) << "ci's own cells are all enforced";
    Decision on_laptop = plan_decision();
    apply_gate(on_laptop, &m, GateStrictness::warn, "laptop");
    EXPECT_FALSE(on_laptop.runs());
    Decision elsewhere = plan_decision();
    apply_gate(elsewhere, &m, GateStrictness::warn, "build-box");
    ASSERT_FALSE(elsewhere.runs());
    EXPECT_NE(elsewhere.refusal().reason.find(
                  "merges the machines ci, laptop and holds no cell of this machine (build-box)"),
              std::string::npos)
        << elsewhere.refusal().reason;
}

} // namespace
} // namespace sonata
