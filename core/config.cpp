// Config parsing with toml++: every key is known, every value is checked, every error names the
// file, the line and the key, with a "did you mean" for misspelt keys.
#include "core/config.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <toml++/toml.h>

#include "core/fs.hpp"
#include "core/text.hpp"

namespace sonata {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t k_max_config_bytes = 1U << 20U;

struct Parser {
    std::string source;
    ConfigScope scope = ConfigScope::machine;
    Config config;

    std::string at(const toml::node& node) const {
        return source + ":" + std::to_string(node.source().begin.line) + ": ";
    }

    Result<void> unknown_keys(const toml::table& table, const std::vector<std::string>& known,
                              const std::string& prefix) {
        for (const auto& [key, node] : table) {
            const std::string name(key.str());
            if (std::find(known.begin(), known.end(), name) == known.end()) {
                return fail(ExitCode::config, at(node) + "unknown key '" + prefix + name + "'" +
                                                  did_you_mean(name, known) +
                                                  "; known keys: " + join(known, ", "));
            }
        }
        return {};
    }

    Result<std::string> string_at(const toml::node& node, const std::string& key) {
        if (auto v = node.value<std::string>()) return *v;
        return fail(ExitCode::config, at(node) + "'" + key + "' must be a string");
    }

    Result<std::chrono::seconds> seconds_at(const toml::node& node, const std::string& key) {
        // is_integer first: toml++'s value<int64_t>() also converts booleans (`= true` is 1).
        const auto v = node.is_integer() ? node.value<int64_t>() : std::nullopt;
        if (!v || *v <= 0 || *v > 7 * 24 * 3600) {
            return fail(ExitCode::config,
                        at(node) + "'" + key +
                            "' must be a whole number of seconds between 1 and 604800");
        }
        return std::chrono::seconds(*v);
    }

    Result<void> top(const toml::table& root) {
        if (auto r = unknown_keys(root,
                                  {"gate", "budget", "session_max_age_seconds", "timeouts",
                                   "dispatch", "roles", "harnesses"},
                                  "");
            !r)
            return r;
        if (const auto* gate = root.get("gate")) {
            auto value = string_at(*gate, "gate");
            SONATA_TRY(value);
            if (*value != "warn" && *value != "strict") {
                return fail(ExitCode::config,
                            at(*gate) + "'gate' must be \"warn\" or \"strict\", not \"" + *value +
                                "\"" + did_you_mean(*value, {"warn", "strict"}));
            }
            config.gate = *value == "strict" ? GateStrictness::strict : GateStrictness::warn;
        }
        if (const auto* budget = root.get("budget")) {
            auto value = string_at(*budget, "budget");
            SONATA_TRY(value);
            if (*value != "warn" && *value != "strict") {
                return fail(ExitCode::config,
                            at(*budget) + "'budget' must be \"warn\" or \"strict\", not \"" +
                                *value + "\"" + did_you_mean(*value, {"warn", "strict"}));
            }
            config.budget = *value == "strict" ? BudgetPolicy::strict : BudgetPolicy::warn;
        }
        if (const auto* age = root.get("session_max_age_seconds")) {
            auto value = seconds_at(*age, "session_max_age_seconds");
            SONATA_TRY(value);
            config.session_max_age = *value;
        }
        if (auto r = timeouts(root.get("timeouts")); !r) return r;
        if (auto r = dispatch(root.get("dispatch")); !r) return r;
        if (auto r = roles(root.get("roles")); !r) return r;
        return harnesses(root.get("harnesses"));
    }

    Result<void> timeouts(const toml::node* node) {
        if (node == nullptr) return {};
        const auto* table = node->as_table();
        if (table == nullptr)
            return fail(ExitCode::config, at(*node) + "'timeouts' must be a table");
        if (auto r = unknown_keys(*table, {"version_seconds", "probe_seconds"}, "timeouts."); !r)
            return r;
        for (const auto& [key, value] : *table) {
            auto secs = seconds_at(value, "timeouts." + std::string(key.str()));
            SONATA_TRY(secs);
            (key.str() == "version_seconds" ? config.version_timeout : config.probe_timeout) =
                *secs;
        }
        return {};
    }

    Result<void> dispatch(const toml::node* node) {
        if (node == nullptr) return {};
        const auto* table = node->as_table();
        if (table == nullptr)
            return fail(ExitCode::config, at(*node) + "'dispatch' must be a table");
        if (auto r = unknown_keys(
                *table, {"timeout_seconds", "stall_seconds", "window_seconds", "log_cap_bytes"},
                "dispatch.");
            !r) {
            return r;
        }
        for (const auto& [key, value] : *table) {
            const std::string name(key.str());
            if (name == "log_cap_bytes") {
                const auto v = value.is_integer() ? value.value<int64_t>() : std::nullopt;
                if (!v || *v < 4096 || *v > (int64_t{1} << 34)) {
                    return fail(ExitCode::config,
                                at(value) +
                                    "'dispatch.log_cap_bytes' must be a whole number of bytes "
                                    "between 4096 and 17179869184");
                }
                config.dispatch_log_cap = static_cast<std::size_t>(*v);
                continue;
            }
            auto secs = seconds_at(value, "dispatch." + name);
            SONATA_TRY(secs);
            (name == "timeout_seconds" ? config.dispatch_timeout
             : name == "stall_seconds" ? config.dispatch_stall
                                       : config.dispatch_window) = *secs;
        }
        return {};
    }

    Result<void> roles(const toml::node* node) {
        if (node == nullptr) return {};
        const auto* table = node->as_table();
        if (table == nullptr)
            return fail(ExitCode::config, at(*node) + "'roles' must be a table of roles");
        for (const auto& [key, value] : *table) {
            if (auto r = role(std::string(key.str()), value); !r) return r;
        }
        return {};
    }

    Result<void> role(const std::string& name, const toml::node& value) {
        const std::string path = "roles." + name;
        if (!is_kebab_name(name))
            return fail(ExitCode::config,
                        at(value) + "role name '" + name + "' must be kebab-case ([a-z0-9-])");
        const auto* role = value.as_table();
        if (role == nullptr)
            return fail(ExitCode::config, at(value) + "'" + path + "' must be a table");
        if (auto r = unknown_keys(
                *role, {"kind", "harness", "harnesses", "model", "worktree", "fanout"}, path + ".");
            !r)
            return r;
        Role parsed{name, RoleKind::read_only, {}, {}};
        if (auto r = role_kind(parsed, *role, value, path); !r) return r;
        for (const auto* field : {"harness", "model"}) {
            if (const auto* f = role->get(field)) {
                auto text = string_at(*f, path + "." + field);
                SONATA_TRY(text);
                (std::string(field) == "harness" ? parsed.harness : parsed.model) = *text;
                config.lines[path + "." + field] = static_cast<int>(f->source().begin.line);
            }
        }
        if (const auto* ranked = role->get("harnesses")) {
            if (auto r = ranked_harnesses(parsed, *role, *ranked, path); !r) return r;
        }
        if (const auto* fanout = role->get("fanout")) {
            if (auto r = fanout_harnesses(parsed, *fanout, path); !r) return r;
        }
        if (const auto* worktree = role->get("worktree")) {
            const auto flag = worktree->value<bool>();
            if (!worktree->is_boolean() || !flag)
                return fail(ExitCode::config,
                            at(*worktree) + "'" + path + ".worktree' must be true or false");
            parsed.worktree = *flag;
        }
        config.lines[path] = static_cast<int>(value.source().begin.line);
        config.roles[name] = parsed;
        return {};
    }

    /// A role's `kind`: required, and never wider than a built-in role of the same name.
    Result<void> role_kind(Role& parsed, const toml::table& role, const toml::node& value,
                           const std::string& path) {
        const auto* kind = role.get("kind");
        if (kind == nullptr)
            return fail(ExitCode::config,
                        at(value) + "'" + path +
                            ".kind' is missing; set it to \"read-only\" or \"write\"");
        auto kind_text = string_at(*kind, path + ".kind");
        SONATA_TRY(kind_text);
        auto parsed_kind = parse_role_kind(*kind_text);
        if (!parsed_kind) return fail(ExitCode::config, at(*kind) + parsed_kind.error().message);
        parsed.kind = *parsed_kind;
        return no_wider_than_builtin(parsed, *kind);
    }

    /// A role's ranked `harnesses`, best first: distinct ids, instead of one `harness`.
    Result<void> ranked_harnesses(Role& parsed, const toml::table& role, const toml::node& ranked,
                                  const std::string& path) {
        const auto* list = ranked.as_array();
        if (role.get("harness") != nullptr)
            return fail(ExitCode::config,
                        at(ranked) + "'" + path + "' sets both harness and harnesses; keep one");
        if (list == nullptr || list->empty())
            return fail(ExitCode::config, at(ranked) + "'" + path +
                                              ".harnesses' must be a non-empty array of "
                                              "harness ids, best first");
        for (const auto& item : *list) {
            auto id = string_at(item, path + ".harnesses");
            SONATA_TRY(id);
            if (std::find(parsed.ranked.begin(), parsed.ranked.end(), *id) != parsed.ranked.end())
                return fail(ExitCode::config,
                            at(item) + "'" + path + ".harnesses' lists " + *id + " twice");
            parsed.ranked.push_back(*id);
        }
        parsed.harness = parsed.ranked.front();
        config.lines[path + ".harness"] = static_cast<int>(ranked.source().begin.line);
        return {};
    }

    /// A role's `fanout`: two distinct harness ids or more, or ["all"].
    Result<void> fanout_harnesses(Role& parsed, const toml::node& fanout, const std::string& path) {
        const auto* list = fanout.as_array();
        const auto bad = [&] {
            return fail(ExitCode::config, at(fanout) + "'" + path +
                                              ".fanout' must name two harnesses or more, "
                                              "each once, or be [\"all\"]");
        };
        if (list == nullptr) return bad();
        for (const auto& item : *list) {
            auto id = string_at(item, path + ".fanout");
            SONATA_TRY(id);
            if (std::find(parsed.fanout.begin(), parsed.fanout.end(), *id) != parsed.fanout.end())
                return bad();
            parsed.fanout.push_back(*id);
        }
        const bool all = parsed.fanout == std::vector<std::string>{"all"};
        if (!all && parsed.fanout.size() < 2) return bad();
        config.lines[path + ".fanout"] = static_cast<int>(fanout.source().begin.line);
        return {};
    }

    /// A project's config comes with the repository, so it may add roles and set a built-in
    /// role's harness or model, but never make a built-in read-only role a write role.
    Result<void> no_wider_than_builtin(const Role& role, const toml::node& kind) {
        for (const auto& builtin : builtin_roles()) {
            if (builtin.name == role.name && builtin.kind == RoleKind::read_only &&
                role.kind != RoleKind::read_only) {
                return fail(ExitCode::config,
                            at(kind) + "'roles." + role.name + ".kind': '" + role.name +
                                "' is a built-in read-only role and cannot be redefined as a "
                                "write role; name a new role instead (e.g. [roles." +
                                role.name + "-writer])");
            }
        }
        return {};
    }

    /// A harness's `path` and `args` choose what runs (`args` can load a repository's extension or
    /// MCP server), so they come only from the user's own config, never with a repository.
    Result<void> only_the_user_names_programs(const toml::table& harness, const std::string& path) {
        if (scope != ConfigScope::project) return {};
        for (const char* key : {"path", "args"}) {
            if (const auto* node = harness.get(key)) {
                return fail(ExitCode::config,
                            at(*node) + "'" + path + "." + key +
                                "': a project's config comes with its repository, which sonata "
                                "does not trust to choose a program or a harness's arguments; "
                                "set it in your machine config ($XDG_CONFIG_HOME/sonata/"
                                "config.toml, by default ~/.config/sonata/config.toml)");
            }
        }
        return {};
    }

    Result<void> harnesses(const toml::node* node) {
        if (node == nullptr) return {};
        const auto* table = node->as_table();
        if (table == nullptr)
            return fail(ExitCode::config, at(*node) + "'harnesses' must be a table");
        for (const auto& [key, value] : *table) {
            const std::string id(key.str());
            const std::string path = "harnesses." + id;
            const auto* harness = value.as_table();
            if (harness == nullptr)
                return fail(ExitCode::config, at(value) + "'" + path + "' must be a table");
            if (auto r = unknown_keys(*harness, {"path", "args", "max_concurrent"}, path + "."); !r)
                return r;
            if (auto ok = only_the_user_names_programs(*harness, path); !ok) return ok;
            HarnessConfig parsed;
            if (const auto* p = harness->get("path")) {
                auto text = string_at(*p, path + ".path");
                SONATA_TRY(text);
                if (text->empty() || text->front() != '/')
                    return fail(ExitCode::config,
                                at(*p) + "'" + path +
                                    ".path' must be an absolute path: a relative one would name "
                                    "a program in whatever directory sonata runs in");
                parsed.path = *text;
            }
            if (const auto* a = harness->get("args")) {
                const auto* array = a->as_array();
                if (array == nullptr)
                    return fail(ExitCode::config,
                                at(*a) + "'" + path + ".args' must be an array of strings");
                for (const auto& element : *array) {
                    auto text = string_at(element, path + ".args");
                    SONATA_TRY(text);
                    parsed.args.push_back(*text);
                }
                config.lines[path + ".args"] = static_cast<int>(a->source().begin.line);
            }
            if (const auto* m = harness->get("max_concurrent")) {
                const auto v = m->is_integer() ? m->value<int64_t>() : std::nullopt;
                if (!v || *v < 0 || *v > 64) {
                    return fail(ExitCode::config,
                                at(*m) + "'" + path +
                                    ".max_concurrent' must be a whole number from 0 (no limit) "
                                    "to 64");
                }
                parsed.max_concurrent = static_cast<int>(*v);
            }
            config.lines[path] = static_cast<int>(value.source().begin.line);
            config.harnesses[id] = parsed;
        }
        return {};
    }
};

} // namespace

Result<Role> Config::find_role(const std::string& name) const {
    if (const auto it = roles.find(name); it != roles.end()) return it->second;
    std::vector<std::string> names;
    for (const auto& role : builtin_roles()) {
        if (role.name == name) return role;
        names.push_back(role.name);
    }
    for (const auto& [configured, role] : roles)
        names.push_back(configured);
    return fail(ExitCode::usage, "unknown role '" + name + "'" + did_you_mean(name, names) +
                                     "; known roles: " + join(names, ", "));
}

const HarnessConfig* Config::harness(const std::string& id) const {
    const auto it = harnesses.find(id);
    return it == harnesses.end() ? nullptr : &it->second;
}

std::string Config::where(const std::string& key_path) const {
    const auto it = lines.find(key_path);
    const auto file = files.find(key_path);
    return (file == files.end() ? source : file->second) + ":" +
           (it == lines.end() ? std::string("?") : std::to_string(it->second)) + ": ";
}

/// The line of the first character toml++ 3.3.0 cannot be trusted with, or 0: a control character
/// but tab and line ends (TOML allows none, in strings and comments too), or a code point in
/// k_untrusted_ranges, for which its whitespace classifier reaches
/// __builtin_unreachable wherever the parser asks whether a character is whitespace (found by
/// tests/fuzz; where that is depends on the parser's state, so no character of those ranges is
/// accepted anywhere). Every key and value sonata knows is ASCII.
/// The code points for which toml++ 3.3.0's is_non_ascii_horizontal_whitespace reaches its
/// TOML_UNREACHABLE (its table's child blocks 0, 11 and 63, but the three real spaces in them),
/// enumerated from its source.
constexpr std::array<std::pair<char32_t, char32_t>, 4> k_untrusted_ranges{
    {{0xa1, 0x499}, {0x2c5e, 0x2fff}, {0x3001, 0x3057}, {0xfb26, 0xfefe}}};

static std::size_t untrusted_character_line(std::string_view text) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto u = static_cast<unsigned char>(text[i]);
        if (u == '\n') ++line;
        if ((u < 0x20 && u != '\t' && u != '\n' && u != '\r') || u == 0x7f) return line;
        if (u < 0xc0 || i + 1 >= text.size()) continue;
        const auto b1 = static_cast<unsigned char>(text[i + 1]) & 0x3fU;
        char32_t cp = 0;
        if (u < 0xe0) {
            cp = static_cast<char32_t>(((u & 0x1fU) << 6U) | b1);
        } else if (u < 0xf0 && i + 2 < text.size()) {
            cp = static_cast<char32_t>(((u & 0x0fU) << 12U) | (b1 << 6U) |
                                       (static_cast<unsigned char>(text[i + 2]) & 0x3fU));
        }
        for (const auto& [low, high] : k_untrusted_ranges) {
            if (cp >= low && cp <= high) return line;
        }
    }
    return 0;
}

Result<Config> parse_config(const std::string& text, const std::string& source, ConfigScope scope) {
    if (const auto line = untrusted_character_line(text); line != 0) {
        return fail(ExitCode::config,
                    source + ":" + std::to_string(line) +
                        ": holds a control character or one of the characters U+00A1-U+0499, "
                        "U+2C5E-U+3057 or U+FB26-U+FEFE, which the TOML parser cannot read safely; "
                        "write it in ASCII");
    }
    Parser parser{source, scope, {}};
    parser.config.source = source;
    try {
        const toml::table root = toml::parse(text, source);
        SONATA_TRY(parser.top(root));
    } catch (const toml::parse_error& e) {
        return fail(ExitCode::config, source + ":" + std::to_string(e.source().begin.line) + ": " +
                                          std::string(e.description()));
    }
    return parser.config;
}

namespace {

Result<Config> read_config(const std::string& file, ConfigScope scope) {
    // Only a regular file, and a bounded one: a FIFO or /dev/zero named sonata.toml never hangs.
    auto text = read_file_bounded(file, k_max_config_bytes);
    if (!text) return fail(ExitCode::config, text.error().message);
    return parse_config(*text, file, scope);
}

/// `project` with what only the machine config decides (see load_config).
Config under_machine(Config project, const Config& machine) {
    for (const auto& [id, harness] : machine.harnesses) {
        HarnessConfig& merged = project.harnesses[id];
        merged.path = harness.path;
        merged.args = harness.args;
        if (!merged.max_concurrent) merged.max_concurrent = harness.max_concurrent;
        for (const std::string& key : {"harnesses." + id, "harnesses." + id + ".args"}) {
            const auto line = machine.lines.find(key);
            if (line == machine.lines.end() || project.lines.contains(key)) continue;
            project.lines[key] = line->second;
            project.files[key] = machine.source;
        }
    }
    if (machine.gate == GateStrictness::strict) project.gate = GateStrictness::strict;
    if (machine.budget == BudgetPolicy::strict) project.budget = BudgetPolicy::strict;
    project.session_max_age = std::min(project.session_max_age, machine.session_max_age);
    return project;
}

} // namespace

Result<Config> load_config(const ConfigLocation& where) {
    if (where.project_file.empty()) {
        if (where.machine_file.empty() && where.problem) return tl::unexpected(*where.problem);
        if (where.machine_file.empty()) return Config{};
        return read_config(where.machine_file, ConfigScope::machine);
    }
    auto project = read_config(where.project_file, ConfigScope::project);
    if (!project || where.machine_file.empty()) return project;
    auto machine = read_config(where.machine_file, ConfigScope::machine);
    if (!machine) return machine;
    return under_machine(std::move(*project), *machine);
}

} // namespace sonata
