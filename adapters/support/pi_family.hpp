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
        // The pin.
        return {"0.73.1", "0.73.1"};
    }

    /// Refuses default (no approval system); otherwise `pi -p --tools <tool_list(mode)>`, plus
    /// `--session ID` when resuming (pi keeps no tool list in a session: it is re-passed).
    Result<Outcome> map(const PlanInput& input) const override;

    /// Session flags would resume a session behind sonata's back and --approve trusts the
    /// workspace's own configuration; plan also forbids loading extension code.
    std::vector<std::string> forbidden_flags(Mode mode) const override;

    /// `--session`: sonata's resume passes it, configured extra arguments may not.
    std::vector<std::string> reserved_flags(Mode mode) const override;

    /// A project extension (code pi runs at start-up) and project settings that load it.
    std::vector<FileToWrite> hostile_files(const std::string& workspace,
                                           const std::string& canary) const override;

    /// The uuid of the newest session file under `<home>/.pi/agent/sessions`.
    std::string session_id(const std::string& out, const std::string& err,
                           const std::string& home) const override;

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
