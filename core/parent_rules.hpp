// The parent's own permission rules, read as Claude Code reads them: the deny and ask rules of its
// settings files (managed, user, project, local) and of the session's command line. A child must
// honour every one of them, or not run: a mode alone does not say what the parent forbids.
// Project and local files may only narrow: their deny and ask rules count, their allow rules never
// widen a child (sonata carries no allow rule at all).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace sonata {

/// What a rule does to a matching call. In a headless child nobody can answer an ask: an ask is a
/// deny there.
enum class RuleEffect { deny, ask };

/// Where a rule was found, from the widest scope to the session's own.
enum class RuleScope { managed, user, project, local, command_line };

std::string_view to_string(RuleEffect effect);
std::string_view to_string(RuleScope scope);

/// One rule as Claude Code writes it: `Tool` or `Tool(specifier)`.
struct PermissionRule {
    RuleEffect effect = RuleEffect::deny;
    std::string text;      ///< As written: "Bash(curl:*)", "Read(./.env)", "WebFetch".
    std::string tool;      ///< "Bash", "Read", "WebFetch", "mcp__server__tool".
    std::string specifier; ///< What the parentheses hold; empty: every call of the tool.
    RuleScope scope = RuleScope::user;
    std::string source; ///< The file, or the command-line option, it came from.

    bool operator==(const PermissionRule&) const = default;
};

/// Where a rule's path is anchored, as Claude Code reads a `Read`/`Edit` specifier.
enum class RuleAnchor {
    none,          ///< No path: the rule is not a Read/Edit path rule.
    cwd,           ///< `./x` or `x`: the session's directory.
    settings_file, ///< `/x`: the directory of the settings file that holds the rule.
    absolute,      ///< `//x`: the file system's root.
    home,          ///< `~/x`: the user's home.
};

/// The anchor of `rule`'s path; `none` unless it is a Read or Edit rule with a specifier.
RuleAnchor anchor_of(const PermissionRule& rule);

/// For a `Bash` command-prefix rule (`Bash(curl:*)`, `Bash(curl *)`), the glob rule that also
/// denies the program named by path (`Bash(*/curl*)`: `/usr/bin/curl …`, which Claude Code
/// refuses and a prefix match passes; it may refuse more, never less). Empty for any other rule,
/// or a prefix with a wildcard or a path in it.
std::string program_path_rule(const PermissionRule& rule);

/// "deny Bash(curl:*) (user)": the rule as plan, doctor and a refusal name it.
std::string describe(const PermissionRule& rule);

/// A rule's text split into tool and specifier; an error for text Claude Code would not read as
/// a rule (no tool name, unbalanced parentheses).
Result<PermissionRule> parse_rule(std::string_view text);

/// The parent's rules in force.
struct ParentRules {
    std::vector<PermissionRule> rules; ///< Deny and ask rules, in scope order.
    /// Allow rules the project's own files hold: shown, never carried (they would widen a child).
    std::vector<std::string> ignored_allows;

    bool empty() const { return rules.empty(); }
};

/// Where the parent's settings files are.
struct SettingsFiles {
    std::string managed = "/etc/claude-code/managed-settings.json";
    /// Drop-ins beside it: each `*.json` file in it, in name order, is managed settings too.
    std::string managed_dropins = "/etc/claude-code/managed-settings.d";
    std::string user;    ///< HOME/.claude/settings.json; empty when HOME is unknown.
    std::string project; ///< PROJECT/.claude/settings.json.
    std::string local;   ///< PROJECT/.claude/settings.local.json.
};

/// The files Claude Code reads for a session in `project_dir` under `home`.
SettingsFiles settings_files(const std::string& home, const std::string& project_dir);

/// The deny and ask rules of `files`; a file that is missing holds none. A file that exists but
/// cannot be read, is not JSON (comments allowed, as Claude Code allows them) or holds a rule list
/// of the wrong shape or a rule that does not parse is an error naming the file: rules sonata
/// cannot read might forbid anything.
Result<ParentRules> read_parent_rules(const SettingsFiles& files);

/// The rules a session's own command line adds, appended to `rules`: --disallowedTools (each
/// value may hold several rules separated by commas or spaces outside parentheses) and the deny
/// and ask rules of --settings (a JSON object, or a file, relative to `dir`: the session's
/// directory). A --settings file or text sonata cannot read is an error naming it.
Result<void> add_command_line_rules(const std::vector<std::string>& argv, const std::string& dir,
                                    ParentRules& rules);

} // namespace sonata
