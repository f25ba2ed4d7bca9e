// Mode folding and parsing, role forcing, the built-in roles.
#include "core/mode.hpp"

#include <array>
#include <utility>

#include "core/text.hpp"

namespace sonata {
namespace {

constexpr std::array<std::pair<std::string_view, Mode>, 6> k_spellings{{
    {"plan", Mode::plan},
    {"default", Mode::default_mode},
    {"acceptEdits", Mode::accept_edits},
    {"bypassPermissions", Mode::bypass_permissions},
    {"auto", Mode::accept_edits},
    {"dontAsk", Mode::plan},
}};

} // namespace

std::string_view to_string(Mode mode) {
    switch (mode) {
    case Mode::plan: return "plan";
    case Mode::default_mode: return "default";
    case Mode::accept_edits: return "acceptEdits";
    case Mode::bypass_permissions: return "bypassPermissions";
    }
    return "default";
}

Mode fold_mode(std::string_view raw) {
    for (const auto& [spelling, mode] : k_spellings) {
        if (raw == spelling) return mode;
    }
    return Mode::default_mode;
}

Result<Mode> parse_mode(std::string_view raw) {
    for (const auto& [spelling, mode] : k_spellings) {
        if (raw == spelling) return mode;
    }
    return fail(ExitCode::usage, "unknown mode '" + std::string(raw) + "'" +
                                     did_you_mean(raw, mode_spellings()) +
                                     "; known modes: " + join(mode_spellings(), ", "));
}

std::vector<std::string> mode_spellings() {
    std::vector<std::string> out;
    for (const auto& entry : k_spellings)
        out.emplace_back(entry.first);
    return out;
}

std::string_view to_string(RoleKind kind) {
    return kind == RoleKind::write ? "write" : "read-only";
}

Result<RoleKind> parse_role_kind(std::string_view raw) {
    if (raw == "read-only") return RoleKind::read_only;
    if (raw == "write") return RoleKind::write;
    return fail(ExitCode::config, "unknown role kind '" + std::string(raw) + "'" +
                                      did_you_mean(raw, {"read-only", "write"}) +
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
