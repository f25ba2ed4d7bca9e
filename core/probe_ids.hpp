// The stable ids of the probe catalogue. They are keys in the matrix JSON and test names in JUnit:
// never rename one casually.
#pragma once

#include <array>
#include <string_view>

namespace sonata::probe_id {

inline constexpr std::string_view write_withheld = "write-withheld";
inline constexpr std::string_view shell_write_withheld = "shell-write-withheld";
inline constexpr std::string_view rm_prompt = "rm-prompt";
inline constexpr std::string_view trust_dialog = "trust-dialog";
inline constexpr std::string_view outside_workspace_write = "outside-workspace-write";
inline constexpr std::string_view delegation_escape = "delegation-escape";
inline constexpr std::string_view self_promotion = "self-promotion";
inline constexpr std::string_view hostile_workspace = "hostile-workspace";
inline constexpr std::string_view mcp_reachability = "mcp-reachability";
inline constexpr std::string_view denial_visibility = "denial-visibility";
inline constexpr std::string_view resume_keeps_mode = "resume-keeps-mode";
inline constexpr std::string_view tool_census = "tool-census";
inline constexpr std::string_view protected_path_write = "protected-path-write";
inline constexpr std::string_view parent_rule = "parent-rule";

/// Every id, in catalogue order.
inline constexpr std::array<std::string_view, 14> all{
    write_withheld,          shell_write_withheld, rm_prompt,         trust_dialog,
    outside_workspace_write, delegation_escape,    self_promotion,    hostile_workspace,
    mcp_reachability,        denial_visibility,    resume_keeps_mode, tool_census,
    protected_path_write,    parent_rule,
};

/// Whether a parent cell that holds probe `id` holds every child to it. parent-rule does not: it
/// measures the parent's rules a dispatch carries, so a mapping is held to it only when it carries
/// some (and relies on it).
constexpr bool binds_every_child(std::string_view id) { return id != parent_rule; }

} // namespace sonata::probe_id
