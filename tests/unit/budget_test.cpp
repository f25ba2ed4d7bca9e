// --max-budget-usd over every adapter: passed on where the harness enforces it, otherwise a warning
// that says it cannot be, and a refusal under `budget = "strict"`; never silently dropped. A ranked
// role never moves on past a run its harness stopped at its budget.
#include <algorithm>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "adapters/support/planner.hpp"
#include "core/config.hpp"
#include "dispatch/caller/dispatcher.hpp"

namespace sonata::adapters {
namespace {

PlanRequest budget_request(const std::string& id, BudgetPolicy policy, Mode mode) {
    PlanRequest request;
    request.harness_id = id;
    request.parent_mode = mode;
    request.role = mode == Mode::plan ? Role{"review", RoleKind::read_only, {}, {}}
                                      : Role{"code", RoleKind::write, {}, {}};
    request.version = "0";
    request.max_budget_usd = 2.5;
    request.budget_policy = policy;
    request.support_dir = ::testing::TempDir() + "sonata-budget-support";
    request.host.env["HOME"] = "/home/user"; // cn pins Continue's directory under it
    return request;
}

bool argv_has_budget(const Decision& d) {
    const auto& argv = d.invocation().argv;
    const auto at = std::find(argv.begin(), argv.end(), "--max-budget-usd");
    return at != argv.end() && at + 1 != argv.end() && *(at + 1) == "2.50";
}

class BudgetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BudgetTest, EnforcedByTheHarnessOrWarnedAboutOrRefusedWhenStrict) {
    auto adapter = find_adapter(GetParam());
    ASSERT_TRUE(adapter);
    const Adapter& a = **adapter;
    // The narrowest mode the harness runs in (agy refuses all but bypassPermissions).
    Mode mode = Mode::plan;
    auto warned = decide(budget_request(GetParam(), BudgetPolicy::warn, mode));
    for (const Mode wider : {Mode::accept_edits, Mode::bypass_permissions}) {
        if (warned && warned->runs()) break;
        mode = wider;
        warned = decide(budget_request(GetParam(), BudgetPolicy::warn, mode));
    }
    ASSERT_TRUE(warned) << warned.error().message;
    ASSERT_TRUE(warned->runs()) << GetParam() << " runs in no mode";
    const std::string warning =
        GetParam() + " cannot enforce --max-budget-usd 2.50: the run goes ahead without a "
                     "spending limit (budget = \"strict\" in config refuses instead)";
    const bool warns = std::count(warned->warnings.begin(), warned->warnings.end(), warning) == 1;
    auto strict = decide(budget_request(GetParam(), BudgetPolicy::strict, mode));
    ASSERT_TRUE(strict) << strict.error().message;
    if (a.enforces_budget()) {
        EXPECT_TRUE(argv_has_budget(*warned));
        EXPECT_FALSE(warns);
        ASSERT_TRUE(strict->runs());
        EXPECT_TRUE(argv_has_budget(*strict));
        return;
    }
    EXPECT_TRUE(warns) << "a budget " << GetParam() << " cannot enforce must be warned about";
    ASSERT_FALSE(strict->runs());
    EXPECT_EQ(strict->refusal().reason,
              GetParam() + " cannot enforce --max-budget-usd 2.50 and config sets budget = "
                           "\"strict\"");
}

std::vector<std::string> adapter_ids() {
    std::vector<std::string> ids;
    for (const auto& a : all_adapters()) // a family (pi-<label>) by one of its members
        ids.emplace_back(a->id().find('<') == std::string_view::npos ? std::string(a->id())
                                                                     : "pi-review");
    return ids;
}

INSTANTIATE_TEST_SUITE_P(EveryAdapter, BudgetTest, ::testing::ValuesIn(adapter_ids()),
                         [](const auto& param_info) {
                             std::string name = param_info.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

TEST(Budget, OnlyClaudeEnforcesItAmongThePinnedHarnesses) {
    std::vector<std::string> enforcing;
    for (const auto& a : all_adapters())
        if (a->enforces_budget()) enforcing.emplace_back(a->id());
    EXPECT_EQ(enforcing, std::vector<std::string>{"claude"});
}

} // namespace
} // namespace sonata::adapters

namespace sonata::dispatch {
namespace {

TEST(Budget, ARankedRoleDoesNotMoveOnPastARunStoppedAtItsBudget) {
    Receipt silent;
    silent.state = RunState::failed;
    silent.report_source = ReportOrigin::none;
    EXPECT_TRUE(falls_through(silent));
    Receipt spent = silent;
    spent.max_budget_usd = 0.5;
    spent.budget_enforced = true;
    spent.cost = RunCost{0.61, CostSource::native, 10, 2};
    EXPECT_FALSE(falls_through(spent)) << "the next harness would spend more than was allowed";
    spent.cost.usd = 0.2; // under its budget: it failed for another reason
    EXPECT_TRUE(falls_through(spent));
    Receipt cancelled = silent;
    cancelled.state = RunState::cancelled;
    EXPECT_FALSE(falls_through(cancelled));
}

} // namespace
} // namespace sonata::dispatch
