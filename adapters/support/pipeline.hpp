// The one plan pipeline: resolve the role and harness, take the parent's mode (the session file,
// narrowed by --mode), detect the harness version, decide (role forcing, configured args, the
// adapter's mapping) and gate against the capability matrix. `sonata plan`, `sonata dispatch` and
// the MCP server call it; the prober's cells go through decide() with the same configured args.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/decision.hpp"
#include "core/gate.hpp"

namespace sonata::adapters {

/// What a caller asks for, as the command line (or an MCP call) gives it.
/// Where a run works.
enum class Workspace {
    in_place, ///< The workspace itself.
    worktree, ///< A git worktree of its own, from the workspace as it is (`--worktree`).
};

struct DispatchRequest {
    std::string harness; ///< Empty: the role's configured harness.
    std::string mode;    ///< Empty: from the session file, else default; else it may only narrow.
    std::string session; ///< Empty: $CLAUDE_CODE_SESSION_ID.
    std::string role = "write";
    std::string model;
    std::vector<std::string> options;
    std::string resume;
    /// A mode the parent's may not exceed, and where it comes from (a resumed run's own mode).
    std::optional<Mode> ceiling = {};
    std::string ceiling_source = {};
    std::string resumed_run = {}; ///< The sonata run whose harness session `resume` continues.
    std::optional<double> budget;
    std::string version; ///< Empty: detect.
    std::string matrix;  ///< Empty: this machine's matrix.
    std::string cwd;     ///< The workspace: where the project is looked for.
    /// The parent session's own directory, where the hook wrote its session files; empty: `cwd`.
    /// A workspace the caller names may hold session files the hook never wrote.
    std::string session_cwd = {};
    std::map<std::string, std::string> env; ///< sonata's environment.
    /// Where the run works: in the workspace itself, or in a git worktree of its own.
    Workspace workspace = Workspace::in_place;
};

/// The parent's mode and where it came from.
struct ParentMode {
    Mode mode = Mode::default_mode;
    std::string source = "default"; ///< "--mode", "session-file" or "default".
    std::string session_id;         ///< The session looked up; empty when none was.
    std::string session_file;       ///< The file the mode came from; empty when none.
    bool stale = false;
    std::vector<std::string> warnings;
};

/// The pipeline's result: the gated decision, the parent's mode, the gate's lookups.
struct Planned {
    Decision decision;
    ParentMode parent;
    std::vector<GateCheck> gate;
    /// Why the harness's executable cannot be found here; empty when it can. `plan` only warns;
    /// a dispatch refuses before it starts anything.
    std::string not_installed = {};
};

Result<Planned> plan_dispatch(const DispatchRequest& request, const Config& config);

/// The parent's mode for `request`, as plan_dispatch finds it (the session file, --mode that may
/// only narrow, the run a nested sonata runs in).
Result<ParentMode> parent_mode(const DispatchRequest& request, const Config& config);

} // namespace sonata::adapters
