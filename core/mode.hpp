// Claude Code's permission modes, their folding, and the role that forces a mode.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace sonata {

/// Claude Code's permission modes after folding; ordered from narrowest to widest.
enum class Mode {
    plan,         ///< Read-only: look, do not touch. `dontAsk` folds here.
    default_mode, ///< "Ask me first": unapproved actions are asked about or refused, never run.
    accept_edits, ///< Edits run unasked; other actions are asked about. `auto` folds here.
    bypass_permissions, ///< Everything runs unasked.
};

/// Claude Code's spelling: "plan", "default", "acceptEdits", "bypassPermissions".
std::string_view to_string(Mode mode);

/// The hook's rule: `auto` → acceptEdits, `dontAsk` → plan, anything unknown → default. Never
/// fails.
Mode fold_mode(std::string_view raw);

/// The command line's rule: the four modes plus `auto` and `dontAsk`; anything else is a usage
/// error.
Result<Mode> parse_mode(std::string_view raw);

/// Every spelling parse_mode accepts, for help text and "did you mean".
std::vector<std::string> mode_spellings();

/// True when `a` permits no more than `b`.
inline bool no_wider_than(Mode a, Mode b) { return static_cast<int>(a) <= static_cast<int>(b); }

/// Whether a role may change files.
enum class RoleKind {
    read_only, ///< review, explore, plan…: always runs as plan.
    write,     ///< code…: runs in the parent's mode, except that a plan parent keeps it in plan.
};

std::string_view to_string(RoleKind kind);
Result<RoleKind> parse_role_kind(std::string_view raw);

/// The mode a dispatched agent actually gets: read-only roles and plan parents give plan.
Mode effective_mode(Mode parent, RoleKind role);

/// A named role: built in (read-only, write, review, explore, plan, code) or from config.
struct Role {
    std::string name;
    RoleKind kind = RoleKind::read_only;
    std::string harness; ///< Default harness for the role; empty when none.
    std::string model;   ///< Default model for the role; empty when none.
    /// `harnesses = [...]`: the ranked list dispatch falls back along (harness is its first).
    std::vector<std::string> ranked = {};
    /// `worktree = true`: each run works in a git worktree of its own (`--worktree`).
    bool worktree = false;
    /// `fanout = [...]`: a dispatch that names no harness hands the task to each (`--fanout`).
    std::vector<std::string> fanout = {};
};

/// The built-in roles, in a stable order.
std::vector<Role> builtin_roles();

} // namespace sonata
