// What `pi` and its named profiles (`pi-<label>`) share: a tool allowlist per mode, no approval
// system, no sandbox, resume by `--session ID` with the allowlist re-passed, and the same way of
// pointing pi at a local model server.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"

namespace sonata::adapters {

/// The tool allowlist for plan (and every read-only role) in every pi flavour.
inline constexpr const char* k_pi_read_tools = "read,grep,find,ls";

/// The pi family's adapter: subclasses only name their tool lists.
class PiFamily : public Adapter {
public:
    std::vector<std::string> executable_names() const override { return {"pi"}; }
    VersionRange measured_versions() const override {
        // The pin (@earendil-works/pi-coding-agent). 0.73.1, the last release of the package pi
        // left (@mariozechner/pi-coding-agent), is outside: probed with this catalogue it sends a
        // repository's .pi/SYSTEM.md, APPEND_SYSTEM.md and skills to the model (no project trust
        // in 0.x), so hostile-workspace reads violated in plan.
        return {"1.6.0", "1.6.0"};
    }

    /// Refuses default (no approval system); otherwise `pi -p --no-extensions --tools
    /// <tool_list(mode)>`, `--no-approve` (pi 1.x), `--session-dir <support>/pi-sessions`, plus
    /// `--session ID` when resuming (pi keeps no tool list in a session: it is re-passed).
    Result<Outcome> map(const PlanInput& input) const override;

    /// Session flags would resume a session behind sonata's back and --approve trusts the
    /// workspace's own configuration; plan also forbids loading extension code.
    std::vector<std::string> forbidden_flags(Mode mode) const override;

    /// `--session` and `--session-dir`: sonata's mapping passes them, configured extra arguments
    /// may not.
    std::vector<std::string> reserved_flags(Mode mode) const override;

    /// A project extension (code pi runs at start-up), project settings that load it, install a
    /// package with the project's npmCommand and move the session dir out, and prompt files.
    std::vector<FileToWrite> hostile_files(const std::string& workspace,
                                           const std::string& canary) const override;

    /// pi 1.x's saved trust: `trust.json` naming the workspace, `defaultProjectTrust: "always"`.
    std::vector<FileToWrite> hostile_user_files(const std::string& workspace) const override;

    /// `.pi/mcp.json` (pi 1.x), in a workspace the user trusts.
    std::optional<McpSetup> project_mcp(const std::string& workspace,
                                        const std::vector<std::string>& server_argv) const override;

    /// The uuid of the newest session file in the `--session-dir` the invocation names whose
    /// header names its directory, else under `<home>/.pi/agent/sessions`.
    std::string session_id(const std::string& out, const std::string& err, const std::string& home,
                           const Invocation& invocation) const override;

    WireProtocol protocol() const override { return WireProtocol::openai_chat; }
    ToolVocabulary tools() const override;
    RefusalTexts refusal_texts() const override;

    /// PI_CODING_AGENT_DIR under the run's HOME with a models.json naming the server,
    /// `--provider sonata-probe --model <model>`.
    Result<EndpointInjection> inject_endpoint(const Invocation& invocation,
                                              const EndpointSpec& endpoint) const override;

protected:
    /// The comma-separated tool allowlist for `mode` (never default_mode), and whether it includes
    /// the shell.
    struct ToolList {
        std::string tools;
        bool shell = false;
    };
    virtual ToolList tool_list(Mode mode) const = 0;

    /// The tool list a bypass mapping falls back to under `dangerously_skip_permissions=false`,
    /// or nullopt when it is the same list (pi itself has no bypass flag to drop).
    virtual std::optional<Mode> no_bypass_fallback() const = 0;
};

} // namespace sonata::adapters
