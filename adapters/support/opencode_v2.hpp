// OpenCode 2.x's own forms (measured on 2.1.2): the injected agent in its native `agents` /
// `permissions` list, and the `session export` document that proves a run completed.
#pragma once

#include <string>
#include <vector>

#include "adapters/adapter.hpp"

namespace sonata::adapters::opencode_v2 {

/// The config of a primary agent `name` in 2.x's native form: a `permissions` list that denies
/// every action, then allows `allowed`, then denies edits of the paths the parent guards (when
/// `edit` is allowed) and every directory outside the workspace. The last rule that matches wins.
std::string agent_config(const std::string& name, const std::vector<std::string>& allowed);

/// The edit resources the parent guards, as 2.x matches them (paths relative to the workspace,
/// `*` spanning directories, the whole path anchored): each guard at the top and below it.
std::vector<std::string> protected_patterns();

/// Holds `rule`, one of the parent's deny or ask rules, in the injected agent of `config` (the
/// OPENCODE_CONFIG_CONTENT a mapping set), as measured on 2.1.2: a tool the agent does not allow
/// is denied already; an allowed one gets a deny at the end of its list (the last match wins) for
/// the whole tool, or for a path relative to the workspace (`read`, `edit`, which gates writes
/// too). A Read path rule denies `grep` too, which would show the file's lines. Not held: a rule
/// for a mapping without an agent (bypass), a shell command prefix (its resource is the command's
/// text: `FOO=1 curl` and `/usr/bin/curl` pass a `curl *` deny), a path that is not relative to the
/// workspace, or relative to a directory the run does not work in.
RuleCarriage carry_rule(const PermissionRule& rule, RulePaths paths, std::string& config);

/// Why a `session export` document does not show session `session` completing `task`; empty when
/// it does: the session's outcome is "succeeded", the task is its newest user message, and the
/// last assistant message after it completed, finished with "stop", carries no error and has text.
std::string check_export(const std::string& exported, const std::string& session,
                         const std::string& task);

} // namespace sonata::adapters::opencode_v2
