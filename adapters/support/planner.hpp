// The planner: (harness, parent mode, role, options) → Decision, with the checks every adapter
// shares.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"
#include "core/config.hpp"
#include "core/decision.hpp"

namespace sonata::adapters {

/// One dispatch to decide.
struct PlanRequest {
    std::string harness_id;
    Mode parent_mode = Mode::default_mode;
    Role role;
    std::string model;
    TaskOptions options;
    std::string executable; ///< Empty: the adapter's first executable name.
    /// The runtime directory the harness needs first on its PATH (HarnessStatus::path_first).
    std::string path_first;
    std::string version;
    std::string resume_session;
    std::optional<double> max_budget_usd;
    /// A budget the harness cannot enforce: a warning, or (strict) a refusal.
    BudgetPolicy budget_policy = BudgetPolicy::warn;
    std::vector<std::string> extra_args; ///< From config; checked against forbidden flags.
    HostFacts host;
    /// The parent's deny and ask rules: each carried to the harness, or the dispatch refused.
    ParentRules parent_rules;
    RulePaths rule_paths = RulePaths::as_in_parent;
    std::string support_dir; ///< Empty: `<machine dir>/support` of sonata's own environment.
    /// Write the support files a running invocation names into support_dir (what `sonata plan`
    /// and the prober ask for); false (the default): name them, write none.
    bool write_support_files = false;
};

/// Decides one dispatch. Errors: unknown harness, bad option keys or values, forbidden extra args.
/// Guarantees on success: IS_SANDBOX and the harness's permission variables are in env_unset,
/// except a permission variable the mapping sets itself (never both set and unset);
/// no forbidden flag appears in argv; a refusal has a reason and at least one alternative; the
/// support files a running invocation names exist (when write_support_files is set).
Result<Decision> decide(const PlanRequest& request);

/// The harnesses whose adapters hold every one of `rules` where relative paths are `paths`.
std::vector<std::string> harnesses_holding(const ParentRules& rules, RulePaths paths);

/// Flags that look like a bypass, auto-approve or yolo switch in any harness.
bool looks_like_bypass_flag(const std::string& arg);

/// The host as it is: root or not, managed MCP config present or not.
HostFacts detect_host();

} // namespace sonata::adapters
