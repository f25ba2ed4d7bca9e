// What `pi` and its named profiles (`pi-<label>`) share: a tool allowlist per mode, no approval
// system, no sandbox, resume by `--session ID` with the allowlist re-passed, and the same way of
// pointing pi at a local model server.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"

namespace sonata::adapters {

/// The tool allowlist for plan (and every read-only role) in every pi flavour.
inline constexpr const char* k_pi_read_tools = "read,grep,find,ls";

/// The comma-separated tool allowlist a mode gets, and whether it includes the shell.
struct PiToolList {
    std::string tools;
    bool shell = false;
};

/// What one pi flavour chooses: its tool lists and what bypass falls back to.
struct PiTraits {
    /// The tool list of each mode, in Mode order (a default_mode entry is never used by a
    /// mapping, which refuses default).
    std::array<PiToolList, 4> tool_lists;
    /// The tool list a bypass mapping falls back to under `dangerously_skip_permissions=false`,
    /// or nullopt when it is the same list (pi itself has no bypass flag to drop).
    std::optional<Mode> no_bypass_fallback;
};

/// The pi family's adapter: subclasses only name their id and tool lists. Session flags would
/// resume a session behind sonata's back and --approve trusts the workspace's own
/// configuration, so they are forbidden; plan also forbids loading extension code. `--session`
/// and `--session-dir` are reserved: sonata's mapping passes them, configured extra arguments
/// may not.
class PiFamily : public Adapter {
public:
    PiFamily(std::string id, PiTraits traits);

    /// Refuses default (no approval system); otherwise `pi -p --no-extensions --tools
    /// <the mode's tool list>`, `--no-approve` (pi 1.x), `--session-dir <support>/pi-sessions`,
    /// plus `--session ID` when resuming (pi keeps no tool list in a session: it is re-passed).
    Result<Outcome> map(const PlanInput& input) const override;

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

    /// PI_CODING_AGENT_DIR under the run's HOME with a models.json naming the server,
    /// `--provider sonata-probe --model <model>`.
    Result<EndpointInjection> inject_endpoint(const Invocation& invocation,
                                              const EndpointSpec& endpoint) const override;

private:
    PiTraits m_traits;
};

} // namespace sonata::adapters
