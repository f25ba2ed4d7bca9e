// A dispatch as a front end asks for it, and the one place that decides what it means: whether
// the arguments make sense together, the role, resuming a run, a fan-out (asked for, or the
// role's own), a worktree. `sonata dispatch`/`run` and the MCP dispatch tool each read their own
// syntax into a DispatchAsk and hand it here, so the two cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include "adapters/support/pipeline.hpp"
#include "core/config.hpp"
#include "core/result.hpp"

namespace sonata::dispatch {

/// What a front end read from its caller, before any rule is applied.
struct DispatchAsk {
    /// harness, mode, session, model, options, budget, version, matrix, cwd, session_cwd, env as
    /// given; its role, resume and workspace are decide_dispatch's to set.
    adapters::DispatchRequest request;
    std::string role;   ///< Empty: none given.
    std::string resume; ///< A finished run's id whose harness session to continue; empty: none.
    std::string fanout; ///< Harness ids, comma-separated, or "all"; empty: none asked for.
    adapters::Workspace workspace = adapters::Workspace::in_place;
};

/// What the rules make of an ask: one dispatch of `request`, or a fan-out of it over `fanout`.
struct DispatchOrder {
    adapters::DispatchRequest request;
    std::vector<std::string> fanout; ///< The harnesses to start at once; empty: one dispatch.
    bool only_runnable = false;      ///< "all": leave out the harnesses that cannot run here.

    bool is_fanout() const { return !fanout.empty(); }
};

/// The workspace a front end names: `given` taken from `from` (the caller's directory), absolute
/// and normalised; `from` itself when nothing is given.
std::string workspace_path(const std::string& given, const std::string& from);

/// The order an ask makes, or a usage error naming the rule it breaks: a fan-out names its own
/// harnesses (no harness, no resume) and needs a role; a resumed run keeps its own role; a new
/// dispatch names a harness or a role (the role's harness, and its fan-out when it has one and
/// no harness is named).
Result<DispatchOrder> decide_dispatch(const DispatchAsk& ask, const Config& config);

} // namespace sonata::dispatch
