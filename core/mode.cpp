// Mode folding and parsing, role forcing, the built-in roles.
#include "core/mode.hpp"

#include <array>
#include <utility>

#include "core/enum_names.hpp"
#include "core/text.hpp"

namespace sonata {
namespace {

/// The four names first, then the aliases folded into them.
constexpr EnumNames<Mode, 6> k_spellings{{
    {"plan", Mode::plan},
    {"default", Mode::default_mode},
    {"acceptEdits", Mode::accept_edits},
    {"bypassPermissions", Mode::bypass_permissions},
    {"auto", Mode::accept_edits},
    {"dontAsk", Mode::plan},
}};

} // namespace

constexpr EnumNames<RoleKind, 2> k_role_kinds{{
    {"read-only", RoleKind::read_only},
    {"write", RoleKind::write},
}};

std::string_view to_string(Mode mode) { return name_of(k_spellings, mode, "default"); }

Mode fold_mode(std::string_view raw) {
    return value_of(k_spellings, raw).value_or(Mode::default_mode);
}

Result<Mode> parse_mode(std::string_view raw) {
    return parse_name(k_spellings, raw, "mode", ExitCode::usage,
                      "; known modes: " + join(mode_spellings(), ", "));
}

std::vector<std::string> mode_spellings() { return names_in(k_spellings); }

std::string_view to_string(RoleKind kind) { return name_of(k_role_kinds, kind, "read-only"); }

Result<RoleKind> parse_role_kind(std::string_view raw) {
    return parse_name(k_role_kinds, raw, "role kind", ExitCode::config,
                      "; a role is 'read-only' or 'write'");
}

Mode effective_mode(Mode parent, RoleKind role) {
    if (role == RoleKind::read_only) return Mode::plan;
    return parent; // a write role in plan stays plan: the parent's mode is already plan.
}

std::vector<Role> builtin_roles() {
    return {
        {"read-only", RoleKind::read_only, {}, {}}, {"write", RoleKind::write, {}, {}},
        {"review", RoleKind::read_only, {}, {}},    {"explore", RoleKind::read_only, {}, {}},
        {"plan", RoleKind::read_only, {}, {}},      {"code", RoleKind::write, {}, {}},
    };
}

} // namespace sonata
