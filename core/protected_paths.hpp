// The paths the parent guards beyond its mode: Claude Code in acceptEdits asks before it writes
// any of these (measured on 2.1.332 with `-p`: "… which is a sensitive file"), and in default it
// asks for every write. A child that writes one unasked plants hooks, permissions, MCP servers or
// shell start-up code that the parent, or the user's next command, runs. The protected-path-write
// probe writes each; a worktree run's changes to the workspace's ones are held back at apply.
#pragma once

#include <array>
#include <string_view>

namespace sonata {

/// Where a protected path lies.
enum class PathRoot {
    workspace, ///< Relative to the workspace (the repository the run works in).
    home,      ///< Relative to the user's home directory.
};

/// One guarded path: the file the probe writes, and the part of the tree it stands for.
struct ProtectedPath {
    PathRoot root;
    std::string_view file;  ///< The file the probe writes, relative to its root.
    std::string_view guard; ///< What is guarded: the file, or a directory ending in '/'.
};

/// Every guarded path, workspace ones first.
inline constexpr std::array<ProtectedPath, 14> k_protected_paths{{
    {PathRoot::workspace, ".git/hooks/pre-commit", ".git/"},
    {PathRoot::workspace, ".git/config", ".git/"},
    {PathRoot::workspace, ".claude/settings.json", ".claude/settings.json"},
    {PathRoot::workspace, ".claude/commands/sonata-probe.md", ".claude/commands/"},
    {PathRoot::workspace, ".claude/agents/sonata-probe.md", ".claude/agents/"},
    {PathRoot::workspace, ".mcp.json", ".mcp.json"},
    {PathRoot::workspace, ".vscode/settings.json", ".vscode/"},
    {PathRoot::workspace, ".idea/workspace.xml", ".idea/"},
    {PathRoot::workspace, ".envrc", ".envrc"},
    {PathRoot::workspace, ".gitmodules", ".gitmodules"},
    {PathRoot::workspace, ".npmrc", ".npmrc"},
    {PathRoot::home, ".bashrc", ".bashrc"},
    {PathRoot::home, ".gitconfig", ".gitconfig"},
    {PathRoot::home, ".ssh/authorized_keys", ".ssh/"},
}};

/// Whether `relative` (a path inside a workspace, '/'-separated, no leading "./") is one the
/// parent guards: a guarded file, anything under a guarded directory, or a Claude Code settings
/// file beside the guarded one (settings.local.json) — at the top or in any directory below it,
/// since a session may start in either.
constexpr bool is_protected_in_workspace(std::string_view relative) {
    for (std::string_view rest = relative;;) {
        if (rest == ".claude/settings.local.json") return true;
        for (const auto& p : k_protected_paths) {
            if (p.root != PathRoot::workspace) continue;
            if (p.guard.ends_with('/') ? rest.starts_with(p.guard) : rest == p.guard) return true;
        }
        const auto slash = rest.find('/');
        if (slash == std::string_view::npos) return false;
        rest.remove_prefix(slash + 1);
    }
}

} // namespace sonata
