// `--fanout`: one task handed to several harnesses at once, each planned and gated on its own (a
// write role's runs each in a worktree of its own), then waited for together; what each did, or
// why it was refused, is kept for one combined report.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "adapters/support/pipeline.hpp"
#include "core/config.hpp"
#include "dispatch/caller/dispatcher.hpp"

namespace sonata::dispatch {

/// One harness of a fan-out: its run, or why it did not run.
struct FanoutMember {
    std::string harness;
    std::string run_dir; ///< Empty when it did not run.
    std::string id;
    std::string refused; ///< Why the planner or the gate refused it (one line).
    std::string error;   ///< Why it could not start (not installed, a worktree that failed, …).
};

/// The harnesses `--fanout` names: a comma-separated list of ids, or "all" (every harness
/// installed here). An unknown id, a repeated one, or an empty list is a usage error.
Result<std::vector<std::string>> fanout_harnesses(const std::string& list, const Config& config,
                                                  const Environment& env);

/// Starts `task` on each harness of `harnesses` with `request` (its role, mode and options); a
/// write role's runs each get a worktree. `only_runnable` ("all"): harnesses that are not
/// installed or that the planner or the gate refuse here are left out rather than listed. Nothing
/// here waits for the runs.
std::vector<FanoutMember> start_fanout(const adapters::DispatchRequest& request,
                                       const std::vector<std::string>& harnesses,
                                       const std::string& task, const Config& config,
                                       std::optional<std::chrono::seconds> timeout,
                                       bool only_runnable);

/// Whether at least one member's run ended done.
bool any_done(const std::vector<FanoutMember>& members);

} // namespace sonata::dispatch
