// The property sets that mappings commonly rely on, named by probe id.
#pragma once

#include <string>
#include <vector>

#include "core/probe_ids.hpp"

namespace sonata::adapters::relies {

/// A read-only mapping: no write through any door, and no tool offered that sonata does not know.
inline std::vector<std::string> read_only() {
    return {std::string(probe_id::write_withheld),    std::string(probe_id::shell_write_withheld),
            std::string(probe_id::delegation_escape), std::string(probe_id::self_promotion),
            std::string(probe_id::hostile_workspace), std::string(probe_id::mcp_reachability),
            std::string(probe_id::tool_census)};
}

/// A default ("ask me first") mapping: unapproved actions are asked or refused, and the model
/// cannot switch itself into a mode that stops asking.
inline std::vector<std::string> asks_first() {
    return {std::string(probe_id::rm_prompt), std::string(probe_id::delegation_escape),
            std::string(probe_id::self_promotion), std::string(probe_id::hostile_workspace),
            std::string(probe_id::tool_census)};
}

/// An acceptEdits mapping confined to the workspace, offering only tools sonata knows.
inline std::vector<std::string> workspace_edits() {
    return {std::string(probe_id::outside_workspace_write),
            std::string(probe_id::hostile_workspace), std::string(probe_id::tool_census)};
}

/// The same, for a TUI mapping: the trust dialog must be known to answer it.
inline std::vector<std::string> with_trust_dialog(std::vector<std::string> base) {
    base.emplace_back(probe_id::trust_dialog);
    return base;
}

/// Resuming relies on the resumed session keeping its mode.
inline void add_resume(std::vector<std::string>& base) {
    base.emplace_back(probe_id::resume_keeps_mode);
}

} // namespace sonata::adapters::relies
