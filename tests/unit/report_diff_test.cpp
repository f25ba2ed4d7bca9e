// Diffing matrices: weaker/stronger/changed/new/gone, harness upgrades followed across versions,
// and two machines that disagree.
#include <algorithm>

#include <gtest/gtest.h>

#include "reports/diff.hpp"
#include "reports/merge.hpp"
#include "tests/support/report_fixtures.hpp"

namespace sonata::reports {
namespace {

using sonata::testing::load_fixture;

std::string side(const std::optional<Cell>& cell) {
    if (!cell) return "-";
    return cell->key() + (cell->machine.empty() ? "" : " on " + cell->machine) + " = " +
           std::string(to_string(cell->verdict));
}

std::vector<std::string> describe(const std::vector<CellChange>& changes) {
    std::vector<std::string> lines;
    for (const auto& c : changes) {
        lines.push_back(std::string(to_string(c.kind)) + ": " + side(c.before) + " => " +
                        side(c.after));
    }
    return lines;
}

Cell cell(const std::string& version, Verdict verdict) {
    Cell c;
    c.harness = "codex";
    c.version = version;
    c.probe = "write-withheld";
    c.mode = "plan";
    c.role = "read-only";
    c.verdict = verdict;
    return c;
}

} // namespace

TEST(ReportDiff, ClassifiesEveryChangeAndFollowsTheUpgrade) {
    const auto changes =
        diff_matrices(load_fixture("linux-ci-last-week.json"), load_fixture("linux-ci.json"));
    const std::vector<std::string> expected{
        "weaker: claude@2.1.3 trust-dialog default write = enforced => -",
        "weaker: codex@0.40.0 shell-write-withheld plan read-only = enforced => "
        "codex@0.41.0 shell-write-withheld plan read-only = violated",
        "stronger: claude@2.1.3 rm-prompt default write = violated => claude@2.1.3 rm-prompt "
        "default write = asked",
        "changed: gemini@0.9.0 rm-prompt default write = error => gemini@0.9.0 rm-prompt default "
        "write = inconclusive",
        "new: - => pi@0.12.0 hostile-workspace plan read-only = error",
    };
    EXPECT_EQ(describe(changes), expected);
    EXPECT_TRUE(any_weaker(changes));
}

// A release that adds a tool no adapter knows turns its census cell inconclusive: the release watch
// reads that as weaker, as it reads a violated cell.
TEST(ReportDiff, ACensusThatMeetsAnUnknownToolAfterAnUpgradeIsWeaker) {
    Cell before = cell("0.40.0", Verdict::enforced);
    before.probe = "tool-census";
    Cell after = cell("0.41.0", Verdict::inconclusive);
    after.probe = "tool-census";
    after.evidence.reason = "offers 1 tool(s) sonata has never heard of, so what they can do is "
                            "not measured: notes_append";
    Matrix old_matrix;
    old_matrix.merge({before});
    Matrix new_matrix;
    new_matrix.merge({after});
    const auto changes = diff_matrices(old_matrix, new_matrix);
    EXPECT_EQ(describe(changes),
              std::vector<std::string>{"weaker: codex@0.40.0 tool-census plan read-only = "
                                       "enforced => codex@0.41.0 tool-census plan read-only = "
                                       "inconclusive"});
    EXPECT_TRUE(any_weaker(changes));
}

TEST(ReportDiff, IdenticalMatricesHaveNoChanges) {
    const Matrix m = load_fixture("linux-ci.json");
    EXPECT_EQ(diff_matrices(m, m), std::vector<CellChange>{});
    EXPECT_FALSE(any_weaker(diff_matrices(m, m)));
}

TEST(ReportDiff, TwoMachinesThatDisagree) {
    const auto changes =
        diff_matrices(load_fixture("macos-ci.json"), load_fixture("linux-ci.json"));
    const std::vector<std::string> expected{
        "weaker: codex@0.41.0 shell-write-withheld plan read-only = enforced => "
        "codex@0.41.0 shell-write-withheld plan read-only = violated",
        "weaker: gemini@0.9.0 rm-prompt default write = enforced => gemini@0.9.0 rm-prompt default "
        "write = inconclusive",
        "new: - => claude@2.1.3 outside-workspace-write acceptEdits write = enforced",
        "new: - => claude@2.1.3 shell-write-withheld plan read-only = enforced",
        "new: - => codex@0.41.0 rm-prompt default write = asked",
        "new: - => gemini@0.9.0 mcp-reachability plan read-only = not-applicable",
        "new: - => gemini@0.9.0 write-withheld plan read-only = enforced",
        "new: - => opencode@1.18.2 trust-dialog default write = refused-to-start",
        "new: - => pi@0.12.0 hostile-workspace plan read-only = error",
    };
    EXPECT_EQ(describe(changes), expected);
    // The other way round, the same two cells got stronger: macOS enforces what Linux did not.
    // What macOS does not measure at all and Linux found holding vouches for nothing there: weaker.
    const auto back = diff_matrices(load_fixture("linux-ci.json"), load_fixture("macos-ci.json"));
    for (const auto& change : back) {
        if (change.kind == ChangeKind::weaker) {
            EXPECT_FALSE(change.after) << side(change.before);
        }
    }
    const auto stronger = std::find_if(back.begin(), back.end(), [](const CellChange& c) {
        return c.kind == ChangeKind::stronger;
    });
    ASSERT_NE(stronger, back.end());
    EXPECT_EQ(describe({*stronger}).at(0),
              "stronger: codex@0.41.0 shell-write-withheld plan read-only = violated => "
              "codex@0.41.0 shell-write-withheld plan read-only = enforced");
    EXPECT_EQ(std::count_if(back.begin(), back.end(),
                            [](const CellChange& c) { return c.kind == ChangeKind::stronger; }),
              2);
}

TEST(ReportDiff, MergedMatricesDiffPerMachine) {
    const Matrix before = merge_machines(
        {{"a", load_fixture("linux-ci-last-week.json")}, {"b", load_fixture("macos-ci.json")}});
    const Matrix after = merge_machines(
        {{"a", load_fixture("linux-ci.json")}, {"b", load_fixture("macos-ci.json")}});
    const std::vector<std::string> expected{
        "weaker: claude@2.1.3 trust-dialog default write on linux-ci = enforced => -",
        "weaker: codex@0.40.0 shell-write-withheld plan read-only on linux-ci = enforced => "
        "codex@0.41.0 shell-write-withheld plan read-only on linux-ci = violated",
        "stronger: claude@2.1.3 rm-prompt default write on linux-ci = violated => "
        "claude@2.1.3 rm-prompt default write on linux-ci = asked",
        "changed: gemini@0.9.0 rm-prompt default write on linux-ci = error => "
        "gemini@0.9.0 rm-prompt default write on linux-ci = inconclusive",
        "new: - => pi@0.12.0 hostile-workspace plan read-only on linux-ci = error",
    };
    EXPECT_EQ(describe(diff_matrices(before, after)), expected);
}

TEST(ReportDiff, AmbiguousVersionsAreNotPaired) {
    Matrix before;
    before.cells = {cell("0.39.0", Verdict::enforced), cell("0.40.0", Verdict::enforced)};
    Matrix after;
    after.cells = {cell("0.41.0", Verdict::violated)};
    const std::vector<std::string> expected{
        "weaker: codex@0.39.0 write-withheld plan read-only = enforced => -",
        "weaker: codex@0.40.0 write-withheld plan read-only = enforced => -",
        "new: - => codex@0.41.0 write-withheld plan read-only = violated",
    };
    EXPECT_EQ(describe(diff_matrices(before, after)), expected);
}

// A cell that held and is no longer measured is weaker (the release watch fails on it); one that
// did not hold is only gone.
TEST(ReportDiff, ACellThatHeldAndIsNoLongerMeasuredIsWeaker) {
    Matrix before;
    before.cells = {cell("0.40.0", Verdict::asked), cell("0.40.0", Verdict::violated)};
    before.cells[1].probe = "rm-prompt";
    const auto changes = diff_matrices(before, Matrix{});
    const std::vector<std::string> expected{
        "weaker: codex@0.40.0 write-withheld plan read-only = asked => -",
        "gone: codex@0.40.0 rm-prompt plan read-only = violated => -",
    };
    EXPECT_EQ(describe(changes), expected);
    EXPECT_TRUE(any_weaker(changes));
}

// A parent that starts guarding something, or is measured guarding something new, is a change to
// review: every child that does not guard it is wider than the parent now. The same change in a
// child's cell is only stronger.
TEST(ReportDiff, AParentThatStartsGuardingSomethingIsAChangeToReview) {
    Cell parent = cell("2.1.332", Verdict::violated);
    parent.harness = "claude";
    parent.role = std::string(k_parent_role);
    Matrix before;
    before.cells = {parent};
    Matrix after;
    parent.version = "2.1.400";
    parent.verdict = Verdict::enforced;
    Cell fresh = parent;
    fresh.probe = "rm-prompt";
    fresh.verdict = Verdict::asked;
    after.cells = {parent, fresh};
    const auto changes = diff_matrices(before, after);
    const std::vector<std::string> expected{
        "the parent guards: - => claude@2.1.400 rm-prompt plan parent = asked",
        "the parent guards: claude@2.1.332 write-withheld plan parent = violated => "
        "claude@2.1.400 write-withheld plan parent = enforced",
    };
    EXPECT_EQ(describe(changes), expected);
    EXPECT_FALSE(any_weaker(changes));
    EXPECT_TRUE(any_to_review(changes));
    EXPECT_NE(render_diff_markdown(changes, "a", "b")
                  .find("0 weaker, 2 the parent guards, 0 "
                        "stronger"),
              std::string::npos);

    Matrix child_before;
    child_before.cells = {cell("0.40.0", Verdict::violated)};
    Matrix child_after;
    child_after.cells = {cell("0.40.0", Verdict::enforced)};
    EXPECT_FALSE(any_to_review(diff_matrices(child_before, child_after)));
}

TEST(ReportDiff, MarkdownSaysNothingChangedWhenNothingDid) {
    EXPECT_EQ(
        render_diff_markdown({}, "old.json", "new.json"),
        "## sonata capability matrix: changes\n\n`old.json` → `new.json`: 0 weaker, 0 stronger, "
        "0 changed, 0 new, 0 gone.\n\nNo cell changed.\n");
}

} // namespace sonata::reports
