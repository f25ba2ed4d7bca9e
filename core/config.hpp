// sonata's configuration: sonata.toml in the project (or .sonata/config.toml) over the machine
// config under $XDG_CONFIG_HOME/sonata/config.toml. Unknown keys and bad values are errors. A
// project's config comes with an untrusted repository: it may not name a program to run.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/mode.hpp"
#include "core/result.hpp"

namespace sonata {

/// What the gate does when a relied-on property has not been measured.
enum class GateStrictness {
    warn,   ///< Run, with a warning naming `sonata probe`.
    strict, ///< Refuse.
};

/// What dispatch does with a `--max-budget-usd` the harness cannot enforce.
enum class BudgetPolicy {
    warn,   ///< Run, with a warning that the budget cannot be enforced.
    strict, ///< Refuse.
};

/// Whose file a config is, which decides what it may set.
enum class ConfigScope {
    machine, ///< The user's own ($XDG_CONFIG_HOME/sonata/config.toml): may set every key.
    /// A project's (sonata.toml, .sonata/config.toml), which comes with the repository: a harness's
    /// `path` or `args` in it is an error, since they choose what runs.
    project,
};

/// Per-harness settings.
struct HarnessConfig {
    std::string path;              ///< Executable override; empty: discover.
    std::vector<std::string> args; ///< Extra arguments; never a forbidden flag.
    /// Runs of this harness that may work at once on this machine; further runs wait `queued`.
    /// Absent: the adapter's default (opencode: 1); 0: no limit.
    std::optional<int> max_concurrent;
};

struct Config {
    std::string source; ///< The file it came from; empty when built-in defaults.
    GateStrictness gate = GateStrictness::warn;
    BudgetPolicy budget = BudgetPolicy::warn;
    std::chrono::seconds version_timeout{15};
    std::chrono::seconds probe_timeout{120};
    std::chrono::seconds session_max_age{12 * 3600};
    std::chrono::seconds dispatch_timeout{3600}; ///< [dispatch] timeout_seconds
    std::chrono::seconds dispatch_stall{300};    ///< [dispatch] stall_seconds
    std::chrono::seconds dispatch_window{1500};  ///< [dispatch] window_seconds
    std::size_t dispatch_log_cap = 16U << 20U;   ///< [dispatch] log_cap_bytes
    std::map<std::string, Role> roles; ///< Configured roles (built-ins are added by find_role).
    std::map<std::string, HarnessConfig> harnesses;
    std::map<std::string, int> lines; ///< "harnesses.codex", "roles.x.harness" → line, for errors.
    /// Key paths that came from another file than `source`: the machine config's harnesses under
    /// a project config.
    std::map<std::string, std::string> files;

    /// "file:line: " for a key path, for errors found after parsing.
    std::string where(const std::string& key_path) const;

    /// A configured or built-in role; usage error with "did you mean" when unknown.
    Result<Role> find_role(const std::string& name) const;
    const HarnessConfig* harness(const std::string& id) const;
};

/// Parses TOML text; `source` names the file in errors ("file:line: …").
Result<Config> parse_config(const std::string& text, const std::string& source,
                            ConfigScope scope = ConfigScope::machine);

/// The directories config lives in, resolved from a working directory and an environment.
struct ConfigLocation {
    std::string
        project_dir; ///< Nearest ancestor of cwd with sonata.toml or .sonata/; may be empty.
    std::string project_file; ///< That project's config file, when it exists.
    std::string machine_dir;  ///< $XDG_CONFIG_HOME/sonata or ~/.config/sonata.
    std::string machine_file; ///< machine_dir/config.toml, when it exists.
    /// Why the machine config could not be looked at: no usable HOME or a relative
    /// XDG_CONFIG_HOME (ExitCode::config), a directory sonata may not read (ExitCode::bad_data).
    /// load_config returns it when no project config comes first.
    std::optional<Error> problem;
};

ConfigLocation locate_config(const std::string& cwd, const std::map<std::string, std::string>& env);

/// Loads the project config over the machine config, else the machine config, else defaults.
/// Under a project config the machine config still decides what only the user may: the harnesses'
/// `path` and `args` come from it alone, and its `gate = "strict"`, `budget = "strict"` and a
/// shorter `session_max_age_seconds` stand, so a project's config can only make them stricter.
Result<Config> load_config(const ConfigLocation& where);

/// The machine's data dir for matrices and session files: $XDG_CONFIG_HOME/sonata, else
/// $HOME/.config/sonata. Empty when neither is an absolute path.
std::string machine_dir(const std::map<std::string, std::string>& env);

/// machine_dir, or an ExitCode::config error saying why there is none (no HOME, a relative one,
/// a relative XDG_CONFIG_HOME).
Result<std::string> machine_dir_checked(const std::map<std::string, std::string>& env);

} // namespace sonata
