// Deciding one dispatch in a test: the fields tests vary, everything else at its default, so a test
// can compare the whole Decision (whole argv, env and env_unset) with what it expects.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"
#include "core/decision.hpp"
#include "core/mode.hpp"

namespace sonata::testing {

/// One dispatch as a test states it.
struct PlanCase {
    std::string harness;
    Mode parent_mode = Mode::default_mode;
    RoleKind role = RoleKind::write; ///< Named "code" (write) or "review" (read-only).
    std::string version;
    std::string model;
    std::map<std::string, std::string> options;
    std::string resume;
    std::vector<std::string> extra_args; ///< As a config's `args` would add them.
    /// Not root, no managed MCP config, Continue's directory in /home/user: tests never read the
    /// machine.
    adapters::HostFacts host;
    ParentRules parent_rules; ///< The parent's deny and ask rules; none by default.
    adapters::RulePaths rule_paths = adapters::RulePaths::as_in_parent;
    std::string support_dir; ///< Non-empty: support files are written there (else nowhere).
};

/// `harness` dispatched from a `parent` session with `role` and per-task `options`.
PlanCase plan_case(std::string harness, Mode parent, RoleKind role = RoleKind::write,
                   std::map<std::string, std::string> options = {});

/// `plan` with the per-task option dangerously_skip_permissions=false.
PlanCase no_bypass(PlanCase plan);

/// A headless invocation as the planner returns it: `argv`, the relied-on probes, the notes, and
/// the variables every plan removes (`env_unset`).
Invocation headless_invocation(std::vector<std::string> argv, std::vector<std::string> relies,
                               std::vector<std::string> notes,
                               std::vector<std::string> env_unset = {"IS_SANDBOX"});

/// Runs adapters::decide on `plan_case`, with the adapter's bare executable name as argv[0].
Result<Decision> decide_case(const PlanCase& plan_case);

/// Every field, one per line, for failure messages (`EXPECT_EQ(a, b) << show(a)`).
std::string show(const Invocation& invocation);
std::string show(const Refusal& refusal);

} // namespace sonata::testing
