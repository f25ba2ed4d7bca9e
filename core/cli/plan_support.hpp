// Shared by `plan` and later `dispatch`: resolve role, harness, mode, executable and version, then
// decide.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cli/app.hpp"
#include "core/decision.hpp"

namespace sonata::cli {

struct PlanSetup {
    std::string harness;
    std::string mode;     ///< Empty: from the session file, else default.
    std::string session;  ///< Empty: $CLAUDE_CODE_SESSION_ID.
    std::string role;
    std::string model;
    std::vector<std::string> options;
    std::string resume;
    std::optional<double> budget;
    std::string version;  ///< Empty: detect.
    std::string matrix;   ///< Empty: this machine's matrix.
};

struct Planned {
    Decision decision;
    std::string extra_json;  ///< Extra top-level JSON fields (mode source, gate…).
};

Result<Planned> plan_dispatch(const PlanSetup& setup, const Config& config, const Context& context);

}  // namespace sonata::cli
