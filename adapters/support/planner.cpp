// The shared steps around every adapter's mode table: role forcing, option checks, environment
// scrubbing, extra arguments, and the final forbidden-flag guard.
#include "adapters/support/planner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "adapters/registry.hpp"
#include "adapters/support/unpacked_package.hpp"
#include "core/config.hpp"
#include "core/fs.hpp"
#include "core/probe_ids.hpp"
#include "core/process.hpp"
#include "core/text.hpp"

namespace sonata::adapters {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

void add_unset(Invocation& invocation, const std::string& name) {
    if (!contains(invocation.env_unset, name)) invocation.env_unset.push_back(name);
}

/// The spelling a flag is compared under: the long form of a declared alias, with camelCase folded
/// to kebab-case (yargs and commander accept `--approvalMode` for `--approval-mode`).
std::string canonical_flag(const Adapter& adapter, const std::string& name) {
    std::string flag = name;
    for (const auto& [alias, long_form] : adapter.spec().flag_aliases) {
        if (flag == alias) flag = long_form;
    }
    if (flag.rfind("--", 0) != 0) return flag;
    std::string kebab;
    for (const char c : flag) {
        if (c >= 'A' && c <= 'Z') {
            kebab += '-';
            kebab += static_cast<char>(c - 'A' + 'a');
        } else {
            kebab += c;
        }
    }
    return kebab;
}

std::vector<std::string> canonical_flags(const Adapter& adapter,
                                         const std::vector<std::string>& flags) {
    std::vector<std::string> out;
    for (const auto& flag : flags)
        out.push_back(canonical_flag(adapter, flag));
    return out;
}

/// Short options written together or with their value attached (`-sdanger-full-access`, `-dy`,
/// `-dy=true`, `-cKEY=VALUE`): parsers read them as one or more flags, so configured arguments must
/// write them apart. An '=' changes nothing: commander, yargs and clap all take `-cK=V` as `-c
/// K=V`.
bool is_bundled_short(const std::string& arg) {
    return arg.size() > 2 && arg[0] == '-' && arg[1] != '-' &&
           std::isalpha(static_cast<unsigned char>(arg[1]));
}

/// The segments of a dotted config key as the harness reads them (codex trims each segment and
/// accepts TOML's quoted segments): ` sandbox_workspace_write . "writable_roots"` names
/// sandbox_workspace_write.writable_roots.
std::vector<std::string> key_segments(std::string_view key) {
    std::vector<std::string> segments;
    for (std::size_t start = 0;;) {
        const auto dot = key.find('.', start);
        std::string segment =
            trimmed(key.substr(start, dot == std::string_view::npos ? dot : dot - start));
        if (segment.size() >= 2 && (segment.front() == '"' || segment.front() == '\'') &&
            segment.back() == segment.front()) {
            segment = trimmed(std::string_view(segment).substr(1, segment.size() - 2));
        }
        segments.push_back(segment);
        if (dot == std::string_view::npos) return segments;
        start = dot + 1;
    }
}

/// True when a `key=value` given to a repeatable flag names a reserved key or a key under one.
bool names_reserved_key(const std::string& value, const std::vector<std::string>& reserved) {
    const auto segments = key_segments(std::string_view(value).substr(0, value.find('=')));
    std::string path;
    for (const auto& segment : segments) {
        path += (path.empty() ? "" : ".") + segment;
        if (contains(reserved, path)) return true;
    }
    return false;
}

Result<void> check_forbidden(const Adapter& adapter, Mode mode,
                             const std::vector<std::string>& argv, const std::string& where) {
    auto forbidden = adapter.forbidden_flags(mode);
    if (where == "config") {
        const auto& reserved = adapter.spec().reserved_flags[mode];
        forbidden.insert(forbidden.end(), reserved.begin(), reserved.end());
    }
    forbidden = canonical_flags(adapter, forbidden);
    for (const auto& arg : argv) {
        if (where == "config" && is_bundled_short(arg)) {
            return fail(ExitCode::config,
                        "argument '" + arg + "' for " + std::string(adapter.id()) +
                            " bundles short options or attaches a value; write each "
                            "option and its value as separate arguments (config)");
        }
        const std::string flag = arg.substr(0, arg.find('='));
        if (flag.rfind('-', 0) == 0 && contains(forbidden, canonical_flag(adapter, flag))) {
            return fail(where == "config" ? ExitCode::config : ExitCode::failure,
                        "flag '" + flag + "' is forbidden for " + std::string(adapter.id()) +
                            " in " + std::string(to_string(mode)) + " mode (" + where + ")");
        }
    }
    return {};
}

/// The option name of an argument ("--sandbox=x" → "--sandbox"); empty for a value or "--".
std::string flag_name(const std::string& arg) {
    if (arg.size() < 2 || arg.front() != '-' || arg == "--") return {};
    return arg.substr(0, arg.find('='));
}

/// Configured arguments may not repeat a flag the mapping sets (a second `--sandbox` or
/// `--permission-mode` could widen it), except flags the adapter declares repeatable; a value given
/// to a repeatable flag (codex's `-c key=value`) may not name a reserved key.
Result<void> check_repeats(const Adapter& adapter, Mode mode, const Invocation& mapped,
                           const std::vector<std::string>& extra) {
    const auto repeatable = canonical_flags(adapter, adapter.spec().repeatable_flags);
    const auto& reserved = adapter.spec().reserved_flags[mode];
    std::vector<std::string> mapped_flags;
    for (const auto& arg : mapped.argv) {
        if (auto name = flag_name(arg); !name.empty())
            mapped_flags.push_back(canonical_flag(adapter, name));
    }
    const auto refuse = [&](const std::string& what) {
        return fail(ExitCode::config, what + " for " + std::string(adapter.id()) + " in " +
                                          std::string(to_string(mode)) + " mode (config)");
    };
    for (std::size_t i = 0; i < extra.size(); ++i) {
        const std::string name = flag_name(extra[i]);
        if (name.empty()) continue;
        if (contains(repeatable, canonical_flag(adapter, name))) {
            const bool inline_value = extra[i].size() > name.size();
            const std::string value = inline_value
                                          ? extra[i].substr(name.size() + 1)
                                          : (i + 1 < extra.size() ? extra[i + 1] : std::string());
            if (names_reserved_key(value, reserved)) {
                return refuse("'" + name + " " + trimmed(value.substr(0, value.find('='))) +
                              "' sets what sonata's mapping decides");
            }
            continue;
        }
        if (contains(mapped_flags, canonical_flag(adapter, name))) {
            return refuse("flag '" + name + "' is set by sonata's mapping and may not be repeated");
        }
    }
    return {};
}

/// Writes each support file whose content differs from what is on disk (atomically, 0600).
Result<void> write_support_files(const std::vector<FileToWrite>& files) {
    for (const auto& file : files) {
        auto current = read_file_bounded(file.path, 1024U * 1024U);
        if (current && *current == file.content) continue;
        WriteOptions options;
        options.mode = 0600;
        if (auto ok = write_file_atomic(file.path, file.content, options); !ok) return ok;
    }
    return {};
}

/// Values sonata passes as their own argv element (a model name, a session id) may not look like
/// a flag: `--model -yy=true` would hand the harness a second option. Control characters are out
/// too. Budgets must be a finite positive number of dollars.
Result<void> check_values(const PlanRequest& request) {
    const auto check = [](const std::string& value, const std::string& what) -> Result<void> {
        if (!value.empty() && value.front() == '-') {
            return fail(ExitCode::usage, what + " '" + value + "' starts with '-': a " + what +
                                             " may not look like a flag");
        }
        for (const char c : value) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                return fail(ExitCode::usage, what + " holds a control character");
            }
        }
        return {};
    };
    if (auto ok = check(request.model, "model"); !ok) return ok;
    if (auto ok = check(request.resume_session, "session id to resume"); !ok) return ok;
    if (request.max_budget_usd &&
        !(std::isfinite(*request.max_budget_usd) && *request.max_budget_usd > 0)) {
        return fail(ExitCode::usage, "--max-budget-usd must be a finite number of dollars above 0");
    }
    return {};
}

} // namespace

bool looks_like_bypass_flag(const std::string& arg) {
    static const std::vector<std::string> k_fragments{
        "dangerously", "yolo", "bypass", "skip-permissions", "auto-approve", "full-auto"};
    const std::string flag = arg.substr(0, arg.find('='));
    if (flag == "-y" || flag == "--auto" || flag == "--yes") return true;
    return std::any_of(k_fragments.begin(), k_fragments.end(), [&](const std::string& f) {
        return flag.rfind("-", 0) == 0 && flag.find(f) != std::string::npos;
    });
}

HostFacts detect_host() {
    HostFacts host;
    host.is_root = ::geteuid() == 0;
    host.env = current_environment();
    host.exists = [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::exists(path, ec);
    };
    return host;
}

namespace {

/// The mapping's input: the request's harness, executable (else the adapter's first name),
/// version, effective mode, role, model, options, session, budget, host and support dir (else the
/// machine's).
Result<PlanInput> plan_input(const PlanRequest& request, const Adapter& a, Mode effective) {
    std::string support_dir = request.support_dir;
    if (support_dir.empty()) {
        auto dir = machine_dir_checked(current_environment());
        SONATA_TRY(dir);
        support_dir = *dir + "/support";
    }
    return PlanInput{request.harness_id,
                     request.executable.empty() ? a.executable_names().front() : request.executable,
                     request.version,
                     effective,
                     request.role.kind,
                     request.model,
                     request.options,
                     request.resume_session,
                     request.max_budget_usd,
                     request.host,
                     support_dir};
}

/// A version outside the range the mapping was measured on runs with a warning saying so.
void warn_unmeasured_version(Decision& decision, const PlanRequest& request, const Adapter& a) {
    const auto& range = a.spec().measured_versions;
    if (!decision.runs() || request.version.empty() || range.lowest.empty() ||
        version_within(request.version, range))
        return;
    decision.warnings.push_back(
        request.harness_id + " " + request.version + " is outside the versions its mapping " +
        "was measured on (" + range.lowest +
        (range.highest == range.lowest ? "" : " to " + range.highest) +
        "): only this machine's matrix cells for " + request.version +
        " can vouch for it; run `sonata probe --harness " + request.harness_id + "`");
}

/// A budget the harness cannot enforce: refused under budget = "strict", else a warning.
void gate_budget(Decision& decision, const PlanRequest& request, const Adapter& a) {
    if (!decision.runs() || !request.max_budget_usd || a.enforces_budget()) return;
    const std::string budget = fmt::format("--max-budget-usd {:.2f}", *request.max_budget_usd);
    if (request.budget_policy == BudgetPolicy::strict) {
        decision.outcome =
            refuse(request.harness_id + " cannot enforce " + budget +
                       " and config sets budget = \"strict\"",
                   {"dispatch to a harness that enforces a budget itself (claude)",
                    "drop --max-budget-usd", "set budget = \"warn\" to run without the limit"});
        return;
    }
    decision.warnings.push_back(
        request.harness_id + " cannot enforce " + budget +
        ": the run goes ahead without a spending limit (budget = \"strict\" in config "
        "refuses instead)");
}

/// The invocation as it runs: the configured args (before whatever the harness keeps last), the
/// permission variables it inherits unset, the machine's directory for a package the harness
/// unpacks, checked once more against the forbidden flags, and its support files written.
Result<void> finish_invocation(Invocation& invocation, const PlanRequest& request, const Adapter& a,
                               Mode effective, const std::string& support_dir) {
    SONATA_TRY(check_repeats(a, effective, invocation, request.extra_args));
    const bool keep_last = contains(a.spec().last_args, invocation.argv.back());
    invocation.argv.insert(invocation.argv.end() - (keep_last ? 1 : 0), request.extra_args.begin(),
                           request.extra_args.end());
    add_unset(invocation, "IS_SANDBOX");
    invocation.path_first = request.path_first;
    for (const auto& name : a.permission_env()) {
        // A variable the mapping sets itself (opencode's injected agent) replaces the inherited
        // value; unsetting it too would leave the child's environment ambiguous.
        if (invocation.env.count(name) == 0) add_unset(invocation, name);
    }
    share_unpacked_package(a.spec(), current_environment(), invocation.env);
    SONATA_TRY(check_forbidden(a, effective, invocation.argv, "mapping"));
    if (request.write_support_files) SONATA_TRY(write_support_files(a.support_files(support_dir)));
    return {};
}

/// "a", "a or b", "a, b or c".
std::string one_of(std::vector<std::string> names) {
    if (names.size() < 2) return join(names, "");
    const std::string last = names.back();
    names.pop_back();
    return join(names, ", ") + " or " + last;
}

/// The parent's rules, each carried to the harness (its notes say how, and the mapping relies on
/// parent-rule), or the dispatch refused naming every rule the harness cannot hold and the
/// harnesses that hold them all.
void carry_parent_rules(Decision& decision, const PlanRequest& request, const Adapter& a) {
    if (!decision.runs() || request.parent_rules.empty()) return;
    Invocation& inv = std::get<Invocation>(decision.outcome);
    std::vector<std::string> held;
    std::vector<std::string> not_held;
    for (const auto& rule : request.parent_rules.rules) {
        const auto carried = a.carry_rule(rule, request.rule_paths, inv);
        const std::string named = describe(rule);
        if (carried.how == RuleCarriage::How::cannot) {
            not_held.push_back(named + ": " + carried.detail);
        } else {
            held.push_back("parent rule " + named + ": " + carried.detail);
        }
    }
    if (not_held.empty()) {
        inv.notes.insert(inv.notes.end(), held.begin(), held.end());
        // The gate holds the mapping to its parent-rule cell, which measures these translations.
        const std::string measured(probe_id::parent_rule);
        if (!contains(inv.relies_on, measured)) inv.relies_on.push_back(measured);
        return;
    }
    const auto can = harnesses_holding(request.parent_rules, request.rule_paths);
    std::vector<std::string> alternatives;
    if (!can.empty())
        alternatives.push_back(
            "use harness " + one_of(can) +
            (can.size() > 1 ? ", which hold them all" : ", which holds them all"));
    alternatives.push_back("drop the rule from the parent's settings if a child may do it");
    decision.outcome = refuse(request.harness_id + " cannot hold the parent's rule" +
                                  (not_held.size() > 1 ? "s " : " ") + join(not_held, "; "),
                              alternatives);
}

/// What the parent guards beyond its mode, as properties the mapping relies on: in acceptEdits,
/// Claude Code asks before it writes the paths core/protected_paths.hpp lists, so a child in that
/// mode must not write them unasked either.
void add_parent_guards(Invocation& invocation, Mode effective) {
    if (effective != Mode::accept_edits) return;
    const std::string guard(probe_id::protected_path_write);
    if (!contains(invocation.relies_on, guard)) invocation.relies_on.push_back(guard);
}

} // namespace

std::vector<std::string> harnesses_holding(const ParentRules& rules, RulePaths paths) {
    std::vector<std::string> ids;
    for (const auto& adapter : all_adapters()) {
        Invocation scratch;
        const bool holds_all =
            std::all_of(rules.rules.begin(), rules.rules.end(), [&](const PermissionRule& r) {
                return adapter->carry_rule(r, paths, scratch).how != RuleCarriage::How::cannot;
            });
        if (holds_all) ids.emplace_back(adapter->id());
    }
    return ids;
}

Result<Decision> decide(const PlanRequest& request) {
    auto adapter = find_adapter(request.harness_id);
    SONATA_TRY(adapter);
    const Adapter& a = **adapter;
    SONATA_TRY(check_option_keys(request.options, a.accepted_options(), request.harness_id));
    SONATA_TRY(check_values(request));
    Decision decision;
    decision.harness = request.harness_id;
    decision.version = request.version;
    decision.parent_mode = request.parent_mode;
    decision.role = request.role;
    decision.effective_mode = effective_mode(request.parent_mode, request.role.kind);
    SONATA_TRY(check_forbidden(a, decision.effective_mode, request.extra_args, "config"));
    auto input = plan_input(request, a, decision.effective_mode);
    SONATA_TRY(input);
    auto outcome = a.map(*input);
    SONATA_TRY(outcome);
    decision.outcome = std::move(*outcome);
    warn_unmeasured_version(decision, request, a);
    gate_budget(decision, request, a);
    carry_parent_rules(decision, request, a);
    if (decision.runs()) {
        add_parent_guards(std::get<Invocation>(decision.outcome), decision.effective_mode);
        SONATA_TRY(finish_invocation(std::get<Invocation>(decision.outcome), request, a,
                                     decision.effective_mode, input->support_dir));
    } else if (decision.refusal().alternatives.empty() || decision.refusal().reason.empty()) {
        return fail(ExitCode::failure, "internal error: a refusal for '" + request.harness_id +
                                           "' lacks a reason or an alternative");
    }
    return decision;
}

} // namespace sonata::adapters
