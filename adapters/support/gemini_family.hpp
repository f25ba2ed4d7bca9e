// What Gemini CLI and its fork Qwen Code share: four `--approval-mode` tiers that line up with
// Claude Code's four modes, a per-task `approval_mode` option that may only narrow, the prompt on
// stdin (headless because stdin is not a terminal) and `--resume ID`.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"

namespace sonata::adapters {

/// The per-task option naming an approval mode; its values are the harness's own spellings.
inline constexpr const char* k_option_approval_mode = "approval_mode";

/// What each fork spells or needs its own way.
struct GeminiTraits {
    /// The harness's spelling of each tier in Mode order: plan, default, edits, yolo.
    std::array<std::string, 4> approval_modes;
    /// Flags every invocation carries after the approval mode (gemini: --skip-trust).
    std::vector<std::string> startup_flags = {};
    /// What the startup flags cost, said in every invocation's notes.
    std::vector<std::string> startup_notes = {};
    /// A policy (TOML) that denies the harness's own mode-switching tools, passed with `--policy`
    /// on every tier below yolo; empty when the harness needs none.
    std::string mode_switch_policy = {};
    /// The project config folder: ".gemini" or ".qwen".
    std::string config_dir = {};
    /// What separates "mcp", the server and the tool in the name under which the harness offers
    /// a project MCP server's tool ("_": mcp_server_tool).
    std::string mcp_separator = {};
    /// The variable that names the harness's trusted-folders file (gemini:
    /// GEMINI_CLI_TRUSTED_FOLDERS_PATH); empty when the mapping needs none. Every invocation
    /// points it at an empty file of sonata's, so that no folder the user trusted is trusted.
    std::string trusted_folders_variable = {};
};

/// The adapter both forks share; subclasses give their spec and traits.
class GeminiFamily : public Adapter {
public:
    /// `spec` holds the flags that would let a mode do more than its tier as its forbidden flags;
    /// the family adds -y/--yolo to them in every mode (the yolo tier is spelled through
    /// --approval-mode, and the two cannot be combined), reserves `--policy` below yolo when the
    /// harness has a mode-switch policy (the mapping passes its own deny rules, and a policy file
    /// from config could allow instead), and fills in the option and flag aliases both share.
    GeminiFamily(HarnessSpec spec, GeminiTraits traits);

    /// `<exe> --approval-mode <tier> <startup_flags> [-m MODEL] [--resume ID]`, the prompt on
    /// stdin. The tier is the mode's, narrowed by `approval_mode` (a wider or unknown value is an
    /// error); `dangerously_skip_permissions=false` turns the yolo tier into the edit tier.
    Result<Outcome> map(const PlanInput& input) const override;

    /// The mode-switch policy file, when the harness has one.
    std::vector<FileToWrite> support_files(const std::string& support_dir) const override;

    /// The sessionId recorded in the newest chat file under `<home>/<config_dir>`, which
    /// `--resume` accepts.
    /// The token counts the newest chat file records (gemini: its "gemini" records' tokens, the
    /// last line per id; qwen: its assistant lines' usageMetadata); neither prices anything.
    RunCost run_cost(const std::string& out, const std::string& err,
                     const std::string& home) const override;
    std::string session_id(const std::string& out, const std::string& err, const std::string& home,
                           const Invocation&) const override;

    /// Project MCP servers under "mcpServers" in `<workspace>/<config_dir>/settings.json`.
    std::optional<McpSetup> project_mcp(const std::string& workspace,
                                        const std::vector<std::string>& server_argv) const override;

private:
    std::string policy_path(const std::string& support_dir) const;
    std::string trusted_folders_path(const std::string& support_dir) const;

    GeminiTraits m_traits;
};

} // namespace sonata::adapters
