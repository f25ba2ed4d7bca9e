// Where runs live and how they are named: `.sonata/runs/<id>/` in the project sonata finds (as
// `plan` finds it), else `$XDG_STATE_HOME/sonata/runs/<id>/` (default ~/.local/state/sonata/runs).
// Ids are made of the time and random bytes and created with an exclusive mkdir, so they never
// repeat; an id from outside is checked before it names a path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "core/result.hpp"

namespace sonata::dispatch {

/// The runs directory for work in `cwd`.
Result<std::string> runs_root(const std::string& cwd, const Environment& env);

/// True for 1–64 characters of [a-z0-9-]: an id that can only name a directory inside the root.
bool is_safe_run_id(std::string_view id);

/// Creates a new run directory under `root` (creating root), returns its id.
Result<std::string> create_run_dir(const std::string& root);

/// The directory of run `id` under `root`; usage error for an unsafe id, bad_data when missing.
Result<std::string> run_dir(const std::string& root, const std::string& id);

/// The ids under `root`, newest first (ids sort by their time).
std::vector<std::string> list_runs(const std::string& root);

/// The files of a run directory.
struct RunFiles {
    std::string dir;
    std::string instructions() const { return dir + "/instructions.md"; }
    std::string plan() const { return dir + "/plan.json"; }
    std::string log() const { return dir + "/harness.log"; }
    std::string report() const { return dir + "/report.md"; }
    std::string exit_sentinel() const { return dir + "/exit"; }
    std::string pgid() const { return dir + "/pgid"; }
    std::string answer() const { return dir + "/answer"; } ///< `sonata approve` to the supervisor.
};

} // namespace sonata::dispatch
