// The gate holds a child to the parent measured in the same mode: a probe the parent guards there
// is checked whether or not the mapping names it, and a refusal names the parent's cell.
#include <algorithm>

#include <gtest/gtest.h>

#include "core/gate.hpp"
#include "core/parent_reference.hpp"

namespace sonata {
namespace {

Decision edits_decision(std::vector<std::string> relies_on) {
    Decision d;
    d.harness = "qwen";
    d.version = "0.24.4";
    d.parent_mode = Mode::accept_edits;
    d.effective_mode = Mode::accept_edits;
    d.role = Role{"code", RoleKind::write, {}, {}};
    Invocation inv;
    inv.argv = {"qwen", "--approval-mode", "auto_edit"};
    inv.relies_on = std::move(relies_on);
    d.outcome = inv;
    return d;
}

Cell child(const std::string& probe, Verdict verdict) {
    Cell c;
    c.harness = "qwen";
    c.version = "0.24.4";
    c.probe = probe;
    c.mode = "acceptEdits";
    c.role = "write";
    c.verdict = verdict;
    c.evidence.reason = probe + " measured by hand";
    return c;
}

Cell parent(const std::string& probe, Verdict verdict, const std::string& version = "2.1.332") {
    Cell c;
    c.harness = "claude";
    c.version = version;
    c.probe = probe;
    c.mode = "acceptEdits";
    c.role = std::string(k_parent_role);
    c.verdict = verdict;
    return c;
}

TEST(GateParent, AChildViolatingWhatTheParentGuardsIsRefusedNamingTheParentsCell) {
    Matrix m;
    m.merge({child("outside-workspace-write", Verdict::violated),
             parent("outside-workspace-write", Verdict::enforced)});
    Decision d = edits_decision({"outside-workspace-write"});
    apply_gate(d, &m, GateStrictness::warn);
    ASSERT_FALSE(d.runs());
    EXPECT_NE(d.refusal().reason.find("Wider than the parent: claude@2.1.332 measured 'enforced' "
                                      "in acceptEdits mode (sonata report --cell 'claude@2.1.332 "
                                      "outside-workspace-write acceptEdits parent')"),
              std::string::npos)
        << d.refusal().reason;
}

// A parent release that starts guarding something the mapping never named holds the child to it,
// with no change to the mapping: violated refuses, unmeasured warns naming the parent.
TEST(GateParent, WhatTheParentNewlyGuardsHoldsEveryChildThoughItsMappingDoesNotNameIt) {
    Matrix m;
    m.merge({parent("rm-prompt", Verdict::asked), child("rm-prompt", Verdict::violated)});
    Decision refused = edits_decision({});
    apply_gate(refused, &m, GateStrictness::warn);
    ASSERT_FALSE(refused.runs());
    EXPECT_NE(refused.refusal().reason.find("probe rm-prompt measured 'violated' for qwen@0.24.4"),
              std::string::npos);
    EXPECT_NE(refused.refusal().reason.find("claude@2.1.332 measured 'asked'"), std::string::npos);

    Matrix unmeasured;
    unmeasured.merge({parent("rm-prompt", Verdict::asked)});
    Decision warned = edits_decision({});
    const auto checks = apply_gate(warned, &unmeasured, GateStrictness::warn);
    ASSERT_TRUE(warned.runs());
    ASSERT_EQ(warned.warnings.size(), 1U);
    EXPECT_NE(warned.warnings[0].find("rm-prompt (the parent guards it: claude@2.1.332 measured "
                                      "'asked') not measured for qwen@0.24.4"),
              std::string::npos)
        << warned.warnings[0];
    ASSERT_EQ(checks.size(), 1U);

    Decision strict = edits_decision({});
    apply_gate(strict, &unmeasured, GateStrictness::strict);
    EXPECT_FALSE(strict.runs());
}

TEST(GateParent, WhatTheParentDoesNotGuardAddsNothingAndTheMappingsOwnFloorStands) {
    Matrix m;
    m.merge({parent("rm-prompt", Verdict::violated), child("rm-prompt", Verdict::violated),
             child("protected-path-write", Verdict::enforced),
             parent("protected-path-write", Verdict::violated)});
    Decision d = edits_decision({"protected-path-write"});
    const auto checks = apply_gate(d, &m, GateStrictness::strict);
    ASSERT_TRUE(d.runs());
    ASSERT_EQ(checks.size(), 1U);
    EXPECT_TRUE(checks[0].parent.empty());
}

TEST(GateParent, WithoutParentCellsTheFixedExpectationsStandAndANoteSaysSo) {
    Matrix m;
    m.merge({child("outside-workspace-write", Verdict::enforced)});
    Decision d = edits_decision({"outside-workspace-write"});
    apply_gate(d, &m, GateStrictness::strict);
    ASSERT_TRUE(d.runs());
    const auto& notes = d.invocation().notes;
    ASSERT_EQ(notes.size(), 1U);
    EXPECT_EQ(notes[0], "the matrix holds no cell of the parent in acceptEdits mode: gated on "
                        "sonata's fixed expectations for it; `sonata probe --harness claude` "
                        "measures the parent");
}

// A refusal proposes only harnesses that hold what the parent guards: one whose cells all hold but
// that was never measured on a probe the parent guards is no alternative.
TEST(GateParent, AnAlternativeHoldsWhatTheParentGuardsToo) {
    Cell measured = child("rm-prompt", Verdict::enforced);
    measured.harness = "gemini";
    Cell unmeasured = child("outside-workspace-write", Verdict::enforced);
    unmeasured.harness = "pi";
    Matrix m;
    m.merge({parent("rm-prompt", Verdict::asked), child("rm-prompt", Verdict::violated), measured,
             unmeasured});
    Decision d = edits_decision({});
    apply_gate(d, &m, GateStrictness::warn);
    ASSERT_FALSE(d.runs());
    const auto& alternatives = d.refusal().alternatives;
    const auto named = [&](const std::string& who) {
        return std::any_of(alternatives.begin(), alternatives.end(),
                           [&](const std::string& a) { return a.find(who) != std::string::npos; });
    };
    EXPECT_TRUE(named("gemini@0.24.4")) << ::testing::PrintToString(alternatives);
    EXPECT_FALSE(named("pi@0.24.4")) << ::testing::PrintToString(alternatives);
}

TEST(GateParent, TheNewestParentMeasuredIsTheReference) {
    Matrix m;
    m.merge({parent("rm-prompt", Verdict::violated, "2.1.9"),
             parent("rm-prompt", Verdict::enforced, "2.1.10")});
    const auto ref = parent_reference(m, "acceptEdits");
    ASSERT_TRUE(ref);
    EXPECT_EQ(ref->label(), "claude@2.1.10");
    EXPECT_TRUE(ref->guards("rm-prompt"));
    EXPECT_FALSE(parent_reference(m, "plan"));
    const auto guards = parent_guards(m);
    ASSERT_EQ(guards.size(), 1U);
    EXPECT_EQ(guards.at(Mode::accept_edits), std::set<std::string>{"rm-prompt"});
}

TEST(GateParent, VersionsCompareByTheirNumbers) {
    EXPECT_LT(compare_versions("2.1.9", "2.1.10"), 0);
    EXPECT_GT(compare_versions("2.10.0", "2.9.99"), 0);
    EXPECT_EQ(compare_versions("1.0.0", "1.0.0"), 0);
    EXPECT_LT(compare_versions("1.0", "1.0.1"), 0);
    EXPECT_LT(compare_versions("1.0.0-beta", "1.0.0-rc"), 0);
}

} // namespace
} // namespace sonata
