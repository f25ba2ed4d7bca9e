// Reading the parent's permission rules from Claude Code's settings files and command line.
#include "core/parent_rules.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"

namespace sonata {
namespace {

constexpr std::size_t k_max_settings_bytes = 1U << 20U;

constexpr EnumNames<RuleEffect, 2> k_effects{
    {{"deny", RuleEffect::deny}, {"ask", RuleEffect::ask}}};

constexpr EnumNames<RuleScope, 5> k_scopes{{
    {"managed", RuleScope::managed},
    {"user", RuleScope::user},
    {"project", RuleScope::project},
    {"local", RuleScope::local},
    {"command line", RuleScope::command_line},
}};

bool is_tool_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '*';
}

/// `settings.permissions[key]` as strings; an error naming the file for any other shape.
Result<std::vector<std::string>> rule_list(const nlohmann::json& settings, const char* key,
                                           const std::string& path) {
    const auto permissions = settings.find("permissions");
    if (permissions == settings.end()) return std::vector<std::string>{};
    if (!permissions->is_object())
        return fail(ExitCode::bad_data, path + ": 'permissions' is not an object");
    const auto list = permissions->find(key);
    if (list == permissions->end()) return std::vector<std::string>{};
    if (!list->is_array())
        return fail(ExitCode::bad_data, path + ": 'permissions." + key + "' is not an array");
    std::vector<std::string> out;
    for (const auto& item : *list) {
        if (!item.is_string())
            return fail(ExitCode::bad_data,
                        path + ": 'permissions." + key + "' holds something other than a rule");
        out.push_back(item.get<std::string>());
    }
    return out;
}

/// Settings text from `source` as a JSON object.
Result<nlohmann::json> settings_of(const std::string& text, const std::string& source) {
    auto doc = parse_json(text, {.comments = JsonComments::ignored});
    if (!doc) return fail(ExitCode::bad_data, source + ": not JSON (" + doc.error().message + ")");
    if (!doc->is_object()) return fail(ExitCode::bad_data, source + ": not a JSON object");
    return std::move(*doc);
}

/// The settings file at `path` as JSON; null when it does not exist.
Result<nlohmann::json> settings_at(const std::string& path) {
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(std::filesystem::symlink_status(path, ec)))
        return nlohmann::json();
    auto text = read_file_bounded(path, k_max_settings_bytes);
    if (!text) return fail(ExitCode::bad_data, path + ": " + text.error().message);
    return settings_of(*text, path);
}

/// The deny and ask rules of `settings` (from `source`), and a project's allow rules, listed.
Result<void> add_settings_rules(const nlohmann::json& settings, RuleScope scope,
                                const std::string& source, ParentRules& out) {
    for (const auto& [key, effect] : k_effects) {
        auto texts = rule_list(settings, std::string(key).c_str(), source);
        SONATA_TRY(texts);
        for (const auto& text : *texts) {
            auto rule = parse_rule(text);
            if (!rule) return fail(ExitCode::bad_data, source + ": " + rule.error().message);
            rule->effect = effect;
            rule->scope = scope;
            rule->source = source;
            out.rules.push_back(std::move(*rule));
        }
    }
    if (scope == RuleScope::project || scope == RuleScope::local) {
        auto allows = rule_list(settings, "allow", source);
        SONATA_TRY(allows);
        out.ignored_allows.insert(out.ignored_allows.end(), allows->begin(), allows->end());
    }
    return {};
}

Result<void> add_file_rules(const std::string& path, RuleScope scope, ParentRules& out) {
    auto settings = settings_at(path);
    SONATA_TRY(settings);
    if (settings->is_null()) return {};
    return add_settings_rules(*settings, scope, path, out);
}

/// The `*.json` files of the managed drop-in directory, in name order; none when it is missing.
Result<std::vector<std::string>> dropin_files(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<std::string> files;
    if (dir.empty() || !fs::exists(fs::symlink_status(dir, ec))) return files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".json") files.push_back(it->path().string());
    }
    if (ec) return fail(ExitCode::bad_data, dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    return files;
}

/// The rules of a session's `--settings VALUE`: a JSON object, or a file relative to `dir`.
Result<void> add_settings_option(const std::string& value, const std::string& dir,
                                 ParentRules& out) {
    const auto start = value.find_first_not_of(" \t\r\n");
    if (start != std::string::npos && value[start] == '{') {
        auto settings = settings_of(value, "--settings");
        SONATA_TRY(settings);
        return add_settings_rules(*settings, RuleScope::command_line, "--settings", out);
    }
    const std::filesystem::path path(value);
    const auto file = path.is_absolute() || dir.empty() ? path : std::filesystem::path(dir) / path;
    auto settings = settings_at(file.string());
    SONATA_TRY(settings);
    if (settings->is_null())
        return fail(ExitCode::bad_data, "--settings " + file.string() + ": no such file");
    return add_settings_rules(*settings, RuleScope::command_line, "--settings " + file.string(),
                              out);
}

/// `value` split at commas and spaces outside parentheses.
std::vector<std::string> split_rules(std::string_view value) {
    std::vector<std::string> out;
    std::string current;
    int depth = 0;
    for (const char c : value) {
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (depth <= 0 && (c == ',' || c == ' ')) {
            if (!current.empty()) out.push_back(std::move(current));
            current.clear();
            continue;
        }
        current += c;
    }
    if (!current.empty()) out.push_back(std::move(current));
    return out;
}

} // namespace

std::string_view to_string(RuleEffect effect) { return name_of(k_effects, effect, "deny"); }
std::string_view to_string(RuleScope scope) { return name_of(k_scopes, scope, "user"); }

std::string describe(const PermissionRule& rule) {
    return std::string(to_string(rule.effect)) + " " + rule.text + " (" +
           std::string(to_string(rule.scope)) + ")";
}

RuleAnchor anchor_of(const PermissionRule& rule) {
    const std::string& path = rule.specifier;
    if ((rule.tool != "Read" && rule.tool != "Edit") || path.empty()) return RuleAnchor::none;
    if (path.starts_with("//")) return RuleAnchor::absolute;
    if (path.starts_with("~/")) return RuleAnchor::home;
    if (path.front() == '/') return RuleAnchor::settings_file;
    return RuleAnchor::cwd;
}

std::string program_path_rule(const PermissionRule& rule) {
    std::string prefix = rule.specifier;
    if (rule.tool != "Bash" || !(prefix.ends_with(":*") || prefix.ends_with(" *"))) return {};
    prefix.resize(prefix.size() - 2);
    if (prefix.empty() || prefix.find_first_of("*?[/") != std::string::npos) return {};
    return "Bash(*/" + prefix + "*)";
}

Result<PermissionRule> parse_rule(std::string_view text) {
    const auto bad = [&](const std::string& why) {
        return fail(ExitCode::bad_data, "rule '" + std::string(text) + "' " + why);
    };
    PermissionRule rule;
    rule.text = std::string(text);
    const auto open = text.find('(');
    rule.tool = std::string(text.substr(0, open));
    if (rule.tool.empty()) return bad("names no tool");
    for (const char c : rule.tool) {
        if (!is_tool_char(c)) return bad("is not Tool or Tool(specifier)");
    }
    if (open == std::string_view::npos) return rule;
    if (text.back() != ')' || text.size() < open + 3)
        return bad("has unbalanced parentheses or an empty specifier");
    rule.specifier = std::string(text.substr(open + 1, text.size() - open - 2));
    return rule;
}

SettingsFiles settings_files(const std::string& home, const std::string& project_dir) {
    SettingsFiles files;
    if (!home.empty()) files.user = home + "/.claude/settings.json";
    if (!project_dir.empty()) {
        files.project = project_dir + "/.claude/settings.json";
        files.local = project_dir + "/.claude/settings.local.json";
    }
    return files;
}

Result<ParentRules> read_parent_rules(const SettingsFiles& files) {
    ParentRules rules;
    SONATA_TRY(add_file_rules(files.managed, RuleScope::managed, rules));
    auto dropins = dropin_files(files.managed_dropins);
    SONATA_TRY(dropins);
    for (const auto& path : *dropins)
        SONATA_TRY(add_file_rules(path, RuleScope::managed, rules));
    for (const auto& [path, scope] :
         {std::pair{files.user, RuleScope::user}, std::pair{files.project, RuleScope::project},
          std::pair{files.local, RuleScope::local}})
        SONATA_TRY(add_file_rules(path, scope, rules));
    return rules;
}

Result<void> add_command_line_rules(const std::vector<std::string>& argv, const std::string& dir,
                                    ParentRules& rules) {
    constexpr std::string_view k_flags[] = {"--disallowedTools", "--disallowed-tools",
                                            "--settings"};
    const auto flag_of = [&](const std::string& arg) -> std::string_view {
        for (const auto flag : k_flags) {
            if (arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0) return flag;
        }
        return {};
    };
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const auto flag = flag_of(argv[i]);
        if (flag.empty()) continue;
        if (flag == "--settings") {
            const bool joined = argv[i].size() > flag.size();
            if (!joined && i + 1 >= argv.size()) continue; // not a session's option
            const auto value = joined ? argv[i].substr(flag.size() + 1) : argv[++i];
            SONATA_TRY(add_settings_option(value, dir, rules));
            continue;
        }
        std::vector<std::string> values;
        if (argv[i].size() > flag.size()) {
            values.push_back(argv[i].substr(flag.size() + 1));
        } else {
            // Variadic, as claude reads it: every argument up to the next option.
            while (i + 1 < argv.size() && argv[i + 1].rfind("-", 0) != 0)
                values.push_back(argv[++i]);
        }
        for (const auto& value : values) {
            for (const auto& text : split_rules(value)) {
                auto rule = parse_rule(text);
                if (!rule)
                    return fail(ExitCode::bad_data,
                                std::string(flag) + ": " + rule.error().message);
                rule->scope = RuleScope::command_line;
                rule->source = std::string(flag);
                rules.rules.push_back(std::move(*rule));
            }
        }
    }
    return {};
}

} // namespace sonata
