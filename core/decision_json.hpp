// The Decision as JSON, the shape `sonata plan --json` prints.
#pragma once

#include <string>

#include "core/decision.hpp"

namespace sonata {

/// One JSON object: "decision" ("run" | "refuse"), and for run "argv", "env", "env_unset",
/// "interactive", "relies_on", …; for refuse "reason" and "alternatives". `extra` (a JSON object
/// text, may be empty) is merged in at the top level.
std::string decision_to_json(const Decision& decision, const std::string& extra = {});

/// A readable multi-line rendering for terminals.
std::string decision_to_text(const Decision& decision);

} // namespace sonata
