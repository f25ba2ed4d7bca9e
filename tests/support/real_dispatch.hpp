// A dispatch of a pinned real harness as `sonata dispatch` plans it on this machine, aimed at the
// scripted model server instead of a provider: how the conformance tier runs real dispatches.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/decision.hpp"
#include "core/mode.hpp"
#include "core/result.hpp"
#include "dispatch/receipt.hpp"

namespace sonata::probes {
class ModelServer;
class Scratch;
} // namespace sonata::probes

namespace sonata::testing {

/// Which mapping to plan, of which installed harness.
struct RealDispatch {
    std::string harness;
    std::string executable;
    std::string version;
    Mode mode = Mode::plan;
    RoleKind kind = RoleKind::read_only;
    /// Where the planner writes its support files (a per-run settings file, say).
    std::string support_dir;
    std::optional<double> budget = {};
    std::string resume = {};
};

/// The decision for the mapping, with the Node.js the harness needs chosen as `sonata dispatch`
/// chooses it and the host detected (as root, claude's bypass is refused).
Result<Decision> decide_real(const RealDispatch& what);

/// `decision` rewritten by its adapter to talk only to `server` (the adapter's endpoint injection),
/// with the files the injection needs written into `scratch`'s HOME; `workspace` is where the
/// harness works.
Result<Decision> aimed_at(const Decision& decision, const probes::ModelServer& server,
                          const probes::Scratch& scratch, const std::string& workspace);

/// The text of the file at `path`; empty when there is none.
std::string text_or_empty(const std::string& path);

/// The harness and supervisor logs of the run in `dir` and its receipt file, to show when a test
/// of the run fails.
std::string run_logs(const std::string& dir);

/// Waits up to `window` for the run in `dir` and returns its receipt; a run that does not end
/// `expected` fails the test, showing its harness and supervisor logs and its receipt.
dispatch::Receipt wait_for_run(const std::string& dir, dispatch::RunState expected,
                               std::chrono::seconds window);

} // namespace sonata::testing
