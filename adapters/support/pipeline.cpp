// The plan pipeline: a dispatch's inputs resolved, decided and gated.
#include "adapters/support/pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "adapters/support/planner.hpp"
#include "core/gate.hpp"
#include "core/proc_tree.hpp"
#include "core/session.hpp"

namespace sonata::adapters {
namespace {

Result<void> check_config_harnesses(const Config& config) {
    for (const auto& [id, harness] : config.harnesses) {
        if (auto found = find_adapter(id); !found) {
            return fail(ExitCode::config, config.where("harnesses." + id) + found.error().message);
        }
    }
    for (const auto& [name, role] : config.roles) {
        auto ids = role.ranked;
        if (ids.empty() && !role.harness.empty()) ids.push_back(role.harness);
        for (const auto& id : ids) {
            if (auto found = find_adapter(id); !found) {
                return fail(ExitCode::config,
                            config.where("roles." + name + ".harness") + found.error().message);
            }
        }
    }
    return {};
}

/// The session to look up and where its id came from: --session, else $CLAUDE_CODE_SESSION_ID;
/// an empty id when neither is set.
std::pair<std::string, std::string> session_to_look_up(const DispatchRequest& setup) {
    if (!setup.session.empty()) return {setup.session, "--session"};
    const auto env = setup.env.find("CLAUDE_CODE_SESSION_ID");
    if (env == setup.env.end() || env->second.empty()) return {};
    return {env->second, "$CLAUDE_CODE_SESSION_ID"};
}

/// A found session file's mode. A stale file is still evidence of the parent's mode, but one that
/// may no longer hold: the narrower of its mode and default is used, so staleness only narrows.
ParentMode mode_from_file(const SessionLookup& lookup, const Config& config) {
    ParentMode choice{lookup.record.mode, "session-file", lookup.record.session_id,
                      lookup.path,        lookup.stale,   {}};
    if (!lookup.stale) return choice;
    if (!no_wider_than(choice.mode, Mode::default_mode)) choice.mode = Mode::default_mode;
    const auto age = lookup.age.count();
    const std::string when = age >= 0 ? "updated " + std::to_string(age) + "s ago, limit " +
                                            std::to_string(config.session_max_age.count()) + "s"
                                      : "dated " + std::to_string(-age) + "s in the future";
    choice.warnings.push_back("session file " + lookup.path + " is stale (" + when +
                              "): its mode " + std::string(to_string(lookup.record.mode)) +
                              " may no longer hold, so " + std::string(to_string(choice.mode)) +
                              " is used");
    return choice;
}

/// The session's mode: its file (the project's .sonata/ first, then the machine config dir), else
/// default with a warning. A corrupt file is an error and an unsafe id a usage error.
Result<ParentMode> session_mode(const std::string& id, const std::string& from,
                                const DispatchRequest& setup, const Config& config) {
    if (!is_safe_session_id(id)) {
        return fail(ExitCode::usage, from + ": session id is not a safe id: use 1 to 128 of the "
                                            "characters A-Z a-z 0-9 _ -");
    }
    const auto where =
        locate_config(setup.session_cwd.empty() ? setup.cwd : setup.session_cwd, setup.env);
    auto found = find_session(id, where.project_dir, where.machine_dir, config.session_max_age,
                              std::chrono::system_clock::now());
    SONATA_TRY(found);
    if (*found) return mode_from_file(**found, config);
    ParentMode choice;
    choice.session_id = id;
    choice.warnings.push_back("no session file for session " + id + " (from " + from +
                              "): assuming default; `sonata init` installs the hook that "
                              "records it");
    return choice;
}

// The caller of plan and dispatch is the parent session's model, so --mode may only narrow: where
// a session is known (--session or $CLAUDE_CODE_SESSION_ID), the mode is the narrower of --mode and
// what the session file records (default when there is none). With no session at all, --mode is
// taken as given; with neither, default.
Result<ParentMode> choose_mode_unnested(const DispatchRequest& setup, const Config& config);

/// Narrows `choice` to `cap` when it is wider, warning "<why>: <mode> from <source> is capped at
/// <cap_name>"; the mode then comes from `source`.
void cap_mode(ParentMode& choice, Mode cap, const std::string& source, const std::string& why,
              const std::string& cap_name) {
    if (no_wider_than(choice.mode, cap)) return;
    choice.warnings.push_back(why + ": " + std::string(to_string(choice.mode)) + " from " +
                              choice.source + " is capped at " + cap_name);
    choice.mode = cap;
    choice.source = source;
}

// Inside a run sonata dispatched ($SONATA_RUN_MODE set, a harness's own `sonata mcp` or shell),
// the parent is that run: its mode caps whatever the session files say, since they belong to the
// session that started the run, or to none. A resumed run is never wider than the run it
// continues.
Result<ParentMode> choose_mode(const DispatchRequest& setup, const Config& config) {
    auto choice = choose_mode_unnested(setup, config);
    if (!choice) return choice;
    if (const auto nested = setup.env.find("SONATA_RUN_MODE"); nested != setup.env.end()) {
        const auto run = setup.env.find("SONATA_RUN_ID");
        const std::string id = run == setup.env.end() ? std::string("?") : run->second;
        auto cap = parse_mode(nested->second);
        const Mode run_mode = cap ? *cap : Mode::plan; // unreadable: the narrowest
        cap_mode(*choice, run_mode, "run " + id,
                 "inside run " + id + " (" + std::string(to_string(run_mode)) + ")",
                 "the run's mode");
    }
    if (setup.ceiling) {
        cap_mode(*choice, *setup.ceiling, setup.ceiling_source, setup.ceiling_source,
                 std::string(to_string(*setup.ceiling)));
    }
    return choice;
}

Result<ParentMode> choose_mode_unnested(const DispatchRequest& setup, const Config& config) {
    std::optional<Mode> flag;
    if (!setup.mode.empty()) {
        auto mode = parse_mode(setup.mode);
        SONATA_TRY(mode);
        flag = *mode;
    }
    const auto [id, from] = session_to_look_up(setup);
    if (id.empty()) return flag ? ParentMode{*flag, "--mode", {}, {}, false, {}} : ParentMode{};
    auto choice = session_mode(id, from, setup, config);
    if (!choice || !flag) return choice;
    if (no_wider_than(*flag, choice->mode)) {
        choice->mode = *flag;
        choice->source = "--mode";
    } else {
        choice->warnings.push_back(
            "--mode " + std::string(to_string(*flag)) + " is wider than session " + id + "'s " +
            std::string(to_string(choice->mode)) + "; --mode may only narrow, so " +
            std::string(to_string(choice->mode)) + " is used");
    }
    return choice;
}

/// What `cwd` holds of the files `adapter`'s hostile-workspace and mcp-reachability probes plant
/// (relative paths). A
/// file two levels down or deeper (a plugin, an extension, a hook script) stands for its whole
/// directory ".opencode/plugin/", which counts when it holds anything; a path sonata cannot
/// examine counts as there.
WorkspaceFiles workspace_files(const Adapter& adapter, const std::string& cwd) {
    namespace fs = std::filesystem;
    WorkspaceFiles out;
    out.root = fs::path(cwd).lexically_normal().string();
    auto planted = adapter.hostile_files(out.root, out.root + "/.sonata-canary");
    if (auto mcp = adapter.project_mcp(out.root, {"sonata", "mcp-canary"}))
        planted.insert(planted.end(), mcp->files.begin(), mcp->files.end());
    for (const auto& file : planted) {
        const auto relative = fs::path(file.path).lexically_relative(out.root);
        if (relative.empty() || *relative.begin() == "..") continue;
        const bool deep = std::distance(relative.begin(), relative.end()) > 2;
        const std::string entry =
            deep ? relative.begin()->string() + "/" + std::next(relative.begin())->string() + "/"
                 : relative.string();
        if (std::find(out.looked_for.begin(), out.looked_for.end(), entry) !=
            out.looked_for.end()) {
            continue;
        }
        out.looked_for.push_back(entry);
        std::error_code ec;
        const fs::path at = fs::path(out.root) / entry;
        const auto status = fs::symlink_status(at, ec);
        bool present = ec ? ec != std::errc::no_such_file_or_directory
                          : status.type() != fs::file_type::not_found;
        if (present && deep && status.type() == fs::file_type::directory) {
            present = !fs::is_empty(at, ec) || static_cast<bool>(ec);
        }
        if (present) out.found.push_back(entry);
    }
    return out;
}

/// Consults the capability matrix (--matrix, else this machine's). A missing matrix means "not
/// measured"; a corrupt one is an error, never "all good".
Result<std::vector<GateCheck>> gate_decision(Decision& decision, const DispatchRequest& setup,
                                             const Config& config, const Adapter& adapter) {
    std::string path = setup.matrix;
    if (path.empty()) {
        auto dir = machine_dir_checked(setup.env);
        SONATA_TRY(dir);
        path = default_matrix_path(*dir);
    }
    std::optional<Matrix> matrix;
    // Only a matrix that is not there means "not measured"; one sonata may not look at is an error.
    struct stat st {};
    if (setup.matrix.empty() && ::stat(path.c_str(), &st) != 0 && errno != ENOENT) {
        return fail(ExitCode::bad_data,
                    path + ": cannot be examined (" + std::strerror(errno) +
                        "): the gate cannot tell whether this machine was probed");
    }
    if (!setup.matrix.empty() || ::stat(path.c_str(), &st) == 0) {
        auto loaded = load_matrix(path);
        SONATA_TRY(loaded);
        matrix = std::move(*loaded);
    }
    if (setup.cwd.empty()) return apply_gate(decision, matrix ? &*matrix : nullptr, config.gate);
    auto workspace = workspace_files(adapter, setup.cwd);
    workspace.worktree = setup.workspace == Workspace::worktree;
    return apply_gate(decision, matrix ? &*matrix : nullptr, config.gate, this_machine(),
                      &workspace);
}

} // namespace

namespace {

/// What locating the harness found that the plan must say: warnings, and why it cannot run here
/// ("" when it can).
struct Located {
    std::vector<std::string> warnings;
    std::string not_installed;
};

/// Where the harness is and which version it is, into `request`: detected, or, with
/// --harness-version, only located (its version command runs only when a Node.js need is unmet
/// here, to say whether it runs anyway).
Located locate_for_plan(const Adapter& adapter, const std::string& harness,
                        const DispatchRequest& setup, const Config& config, PlanRequest& request) {
    Located out;
    auto runner = make_system_runner();
    if (!setup.version.empty()) {
        auto located = locate_harness(adapter, harness, config, setup.env);
        provide_runtime(located, setup.env, *runner);
        if (!located.cannot_run.empty()) read_version(located, adapter, config, setup.env, *runner);
        request.executable = located.installed ? located.path : std::string{};
        request.path_first = located.path_first;
        request.version = setup.version;
        if (!located.installed) out.not_installed = located.note;
        if (!located.cannot_run.empty()) out.not_installed = located.cannot_run;
        return out;
    }
    const auto status = detect_harness(adapter, harness, config, setup.env, *runner);
    if (status.installed) request.executable = status.path;
    request.path_first = status.path_first;
    request.version = status.version;
    if (!status.installed) {
        out.not_installed = status.note;
        out.warnings.push_back(harness + " is not installed here (" + status.note + ")");
    } else if (!status.cannot_run.empty()) {
        out.not_installed = status.cannot_run;
        out.warnings.push_back(status.cannot_run);
    } else if (status.version.empty()) {
        out.warnings.push_back(harness + ": its version could not be read (" + status.note +
                               "): the matrix has no cell to gate it on");
    }
    return out;
}

/// The planner's request for `harness` in the role: the parent's mode, the task's options and
/// model, the resumed session, the budget, the configured args and the machine's support dir.
/// The parent's rules: its settings files for the session's directory and the user's HOME, and
/// the --disallowedTools and --settings of the processes that started this one, the session among
/// them (sonata mcp's parent; the shell a Bash tool call runs in, and its parent): any of them
/// narrows a child.
Result<ParentRules> parent_rules_of(const DispatchRequest& setup) {
    const auto home = setup.env.find("HOME");
    const std::string dir = setup.session_cwd.empty() ? setup.cwd : setup.session_cwd;
    auto rules =
        read_parent_rules(settings_files(home == setup.env.end() ? "" : home->second, dir));
    SONATA_TRY(rules);
    for (const auto& line : ancestor_command_lines(::getpid()))
        SONATA_TRY(add_command_line_rules(line, dir, *rules));
    return rules;
}

/// Whether the run works in the parent's own directory, where its rules' relative paths point.
RulePaths rule_paths_of(const DispatchRequest& setup) {
    namespace fs = std::filesystem;
    if (setup.workspace == Workspace::worktree) return RulePaths::moved;
    if (setup.session_cwd.empty()) return RulePaths::as_in_parent;
    std::error_code cwd_ec;
    std::error_code session_ec;
    const bool same = fs::weakly_canonical(setup.cwd, cwd_ec) ==
                      fs::weakly_canonical(setup.session_cwd, session_ec);
    return same && !cwd_ec && !session_ec ? RulePaths::as_in_parent : RulePaths::moved;
}

Result<PlanRequest> plan_request(const DispatchRequest& setup, const Config& config,
                                 const std::string& harness, const Role& role, Mode parent) {
    auto options = parse_task_options(setup.options);
    SONATA_TRY(options);
    auto dir = machine_dir_checked(setup.env);
    SONATA_TRY(dir);
    PlanRequest request;
    request.harness_id = harness;
    request.parent_mode = parent;
    request.role = role;
    request.model = !setup.model.empty() ? setup.model : role.model;
    request.options = *options;
    request.resume_session = setup.resume;
    request.max_budget_usd = setup.budget;
    request.budget_policy = config.budget;
    request.host = detect_host();
    auto rules = parent_rules_of(setup);
    SONATA_TRY(rules);
    request.parent_rules = std::move(*rules);
    request.rule_paths = rule_paths_of(setup);
    request.support_dir = *dir + "/support";
    request.write_support_files = true;
    if (const auto* hc = config.harness(harness)) request.extra_args = hc->args;
    return request;
}

} // namespace

Result<ParentMode> parent_mode(const DispatchRequest& request, const Config& config) {
    return choose_mode(request, config);
}

Result<Planned> plan_dispatch(const DispatchRequest& setup, const Config& config) {
    SONATA_TRY(check_config_harnesses(config));
    auto role = config.find_role(setup.role);
    SONATA_TRY(role);
    const std::string harness = !setup.harness.empty() ? setup.harness : role->harness;
    if (harness.empty()) {
        return fail(ExitCode::usage,
                    "no harness given: pass --harness, or set a harness for role '" + role->name +
                        "' in config");
    }
    auto adapter = find_adapter(harness);
    SONATA_TRY(adapter);
    auto mode = choose_mode(setup, config);
    SONATA_TRY(mode);
    auto request = plan_request(setup, config, harness, *role, mode->mode);
    SONATA_TRY(request);
    const Located located = locate_for_plan(**adapter, harness, setup, config, *request);
    auto decision = decide(*request);
    if (!decision && decision.error().code == ExitCode::config) {
        // The configured args are the only config decide() reads: name their file, line and key.
        return fail(ExitCode::config, config.where("harnesses." + harness + ".args") +
                                          "'harnesses." + harness +
                                          ".args': " + decision.error().message);
    }
    SONATA_TRY(decision);
    auto& warnings = decision->warnings;
    warnings.insert(warnings.begin(), located.warnings.begin(), located.warnings.end());
    warnings.insert(warnings.begin(), mode->warnings.begin(), mode->warnings.end());
    auto gate = gate_decision(*decision, setup, config, **adapter);
    SONATA_TRY(gate);
    return Planned{*decision, *mode, *gate, located.not_installed};
}

} // namespace sonata::adapters
