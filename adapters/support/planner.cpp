// The shared steps around every adapter's mode table: role forcing, option checks, environment
// scrubbing, extra arguments, and the final forbidden-flag guard.
#include "adapters/support/planner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "adapters/registry.hpp"
#include "core/config.hpp"
#include "core/fs.hpp"
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
    for (const auto& [alias, long_form] : adapter.flag_aliases()) {
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

std::vector<std::string> canonical_flags(const Adapter& adapter, const std::vector<std::string>& flags) {
    std::vector<std::string> out;
    for (const auto& flag : flags)
        out.push_back(canonical_flag(adapter, flag));
    return out;
}

/// Short options written together or with their value attached (`-sdanger-full-access`, `-dy`):
/// parsers read them as one or more flags, so configured arguments must write them apart.
bool is_bundled_short(const std::string& arg) {
    return arg.size() > 2 && arg[0] == '-' && arg[1] != '-' && std::isalpha(static_cast<unsigned char>(arg[1])) &&
           arg.find('=') == std::string::npos;
}

Result<void> check_forbidden(const Adapter& adapter, Mode mode, const std::vector<std::string>& argv,
                             const std::string& where) {
    auto forbidden = adapter.forbidden_flags(mode);
    if (where == "config") {
        const auto reserved = adapter.reserved_flags(mode);
        forbidden.insert(forbidden.end(), reserved.begin(), reserved.end());
    }
    forbidden = canonical_flags(adapter, forbidden);
    for (const auto& arg : argv) {
        if (where == "config" && is_bundled_short(arg)) {
            return fail(ExitCode::config, "argument '" + arg + "' for " + std::string(adapter.id()) +
                                              " bundles short options or attaches a value; write each "
                                              "option and its value as separate arguments (config)");
        }
        const std::string flag = arg.substr(0, arg.find('='));
        if (flag.rfind('-', 0) == 0 && contains(forbidden, canonical_flag(adapter, flag))) {
            return fail(where == "config" ? ExitCode::config : ExitCode::failure,
                        "flag '" + flag + "' is forbidden for " + std::string(adapter.id()) + " in " +
                            std::string(to_string(mode)) + " mode (" + where + ")");
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
    const auto repeatable = canonical_flags(adapter, adapter.repeatable_flags());
    const auto reserved = adapter.reserved_flags(mode);
    std::vector<std::string> mapped_flags;
    for (const auto& arg : mapped.argv) {
        if (auto name = flag_name(arg); !name.empty()) mapped_flags.push_back(canonical_flag(adapter, name));
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
            const std::string value = inline_value ? extra[i].substr(name.size() + 1)
                                                   : (i + 1 < extra.size() ? extra[i + 1] : std::string());
            const std::string key = value.substr(0, value.find('='));
            const std::string table = key.substr(0, key.find('.'));
            if (contains(reserved, key) || contains(reserved, table)) {
                return refuse("'" + name + " " + key + "' sets what sonata's mapping decides");
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

}  // namespace

bool looks_like_bypass_flag(const std::string& arg) {
    static const std::vector<std::string> k_fragments{"dangerously", "yolo", "bypass", "skip-permissions",
                                                      "auto-approve", "full-auto"};
    const std::string flag = arg.substr(0, arg.find('='));
    if (flag == "-y" || flag == "--auto" || flag == "--yes") return true;
    return std::any_of(k_fragments.begin(), k_fragments.end(),
                       [&](const std::string& f) { return flag.rfind("-", 0) == 0 && flag.find(f) != std::string::npos; });
}

HostFacts detect_host() {
    HostFacts host;
    host.is_root = ::geteuid() == 0;
    std::error_code ec;
    host.managed_mcp_config = std::filesystem::exists("/etc/claude-code/managed-mcp.json", ec);
    return host;
}

Result<Decision> decide(const PlanRequest& request) {
    auto adapter = find_adapter(request.harness_id);
    if (!adapter) return tl::unexpected(adapter.error());
    const Adapter& a = **adapter;
    if (auto keys = check_option_keys(request.options, a.accepted_options(), request.harness_id); !keys) {
        return tl::unexpected(keys.error());
    }
    Decision decision;
    decision.harness = request.harness_id;
    decision.version = request.version;
    decision.parent_mode = request.parent_mode;
    decision.role = request.role;
    decision.effective_mode = effective_mode(request.parent_mode, request.role.kind);
    if (auto extra = check_forbidden(a, decision.effective_mode, request.extra_args, "config"); !extra) {
        return tl::unexpected(extra.error());
    }

    PlanInput input{request.harness_id,
                    request.executable.empty() ? a.executable_names().front() : request.executable,
                    request.version,
                    decision.effective_mode,
                    request.role.kind,
                    request.model,
                    request.options,
                    request.resume_session,
                    request.max_budget_usd,
                    request.host,
                    request.support_dir.empty() ? machine_dir(current_environment()) + "/support"
                                                : request.support_dir};
    auto outcome = a.map(input);
    if (!outcome) return tl::unexpected(outcome.error());
    decision.outcome = std::move(*outcome);

    if (decision.runs()) {
        auto& invocation = std::get<Invocation>(decision.outcome);
        if (auto repeats = check_repeats(a, decision.effective_mode, invocation, request.extra_args); !repeats) {
            return tl::unexpected(repeats.error());
        }
        // Configured arguments go before whatever must stay last: a "--" that ends the options,
        // or a flag whose value is the prompt sonata appends (grok's and agy's `-p`).
        const bool keep_last = invocation.argv.back() == "--" ||
                               (invocation.prompt == PromptChannel::argument && invocation.argv.back() == "-p");
        invocation.argv.insert(invocation.argv.end() - (keep_last ? 1 : 0), request.extra_args.begin(),
                               request.extra_args.end());
        add_unset(invocation, "IS_SANDBOX");
        for (const auto& name : a.permission_env()) {
            // A variable the mapping sets itself (opencode's injected agent) replaces the inherited
            // value; unsetting it too would leave the child's environment ambiguous.
            if (invocation.env.count(name) == 0) add_unset(invocation, name);
        }
        if (auto guard = check_forbidden(a, decision.effective_mode, invocation.argv, "mapping"); !guard) {
            return tl::unexpected(guard.error());
        }
        if (request.write_support_files) {
            if (auto ok = write_support_files(a.support_files(input.support_dir)); !ok) {
                return tl::unexpected(ok.error());
            }
        }
    } else if (decision.refusal().alternatives.empty() || decision.refusal().reason.empty()) {
        return fail(ExitCode::failure, "internal error: a refusal for '" + request.harness_id +
                                           "' lacks a reason or an alternative");
    }
    return decision;
}

}  // namespace sonata::adapters
