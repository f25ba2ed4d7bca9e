// How a planned invocation becomes a process: its environment, its prompt delivery, and its tmux
// spec. The prober's cells and dispatches build their processes here, so a probe runs exactly the
// argv, environment and prompt channel that a dispatch of the same mapping runs.
#pragma once

#include <string>

#include "core/decision.hpp"
#include "core/process.hpp"
#include "core/tmux.hpp"

namespace sonata::dispatch {

/// `base` with the invocation's variables set and its `env_unset` removed (unset wins: a name the
/// planner removes never reaches the harness).
Environment child_environment(const Environment& base, const Invocation& invocation);

/// The request for a headless invocation: its argv with the prompt appended as the last argument,
/// or the prompt on stdin, as the invocation's prompt channel says; `env` complete, `cwd` the
/// workspace. Timeout, cancel flag and output cap are the caller's.
ProcessRequest headless_request(const Invocation& invocation, const std::string& prompt,
                                Environment env, std::string cwd);

/// The tmux spec for a TUI invocation (the prompt is typed later, by the TUI driver).
TmuxSpec tui_spec(const Invocation& invocation, Environment env, std::string cwd,
                  std::string socket_dir);

} // namespace sonata::dispatch
