// What OpenCode and its fork Kilo share: a JSON config in an environment variable (injected agents,
// the scripted model's provider), `run --format json` events (session id, final text, tokens), and
// `export <session>` as the proof that a run completed. Checked against opencode 1.18.33 and kilo
// 7.7.9.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapters/adapter.hpp"

namespace sonata::adapters::opencode_family {

/// The shape of a `run` the family member's line takes.
enum class RunShape {
    v1, ///< 1.x and kilo: `snapshot: false` in the config, `--` before the message.
    v2, ///< opencode 2.x: neither (after `--` it reads the message twice).
};

/// The names one member of the family reads its settings under.
struct Names {
    std::string config_env;                 ///< "OPENCODE_CONFIG_CONTENT" / "KILO_CONFIG_CONTENT".
    std::string models_fetch_env;           ///< Turns the model catalogue download off.
    std::string autoupdate_env;             ///< Turns the update check off.
    std::string data_dir;                   ///< Under XDG_DATA_HOME: "opencode" / "kilo".
    std::string config_file;                ///< The project config: "opencode.json" / "kilo.json".
    std::string disable_project_config_env; ///< Keeps the repository's config and plugins out.
    /// Background work a `run` does not need, turned off (the file watcher, telemetry).
    std::vector<std::pair<std::string, std::string>> quiet_env;
};

/// The config of a primary agent `name` that denies every tool but `allowed`, and denies `denied`
/// explicitly (rules some tools consult besides their own, such as external_directory).
std::string injected_agent(const std::string& name, const std::vector<std::string>& allowed,
                           const std::vector<std::string>& denied = {});

/// `text` with its quotes, backslashes and whitespace taken out: opencode hands a message with
/// spaces to the model (and stores it) quoted, and comparing a task must not depend on how.
std::string bare(const std::string& text);

/// The first session id ("ses_" and its letters and digits) in `text`; empty when none.
std::string first_session(const std::string& text);

/// The run's own session: the first event of `run --format json`, else the first session the
/// newest log under `<home>/.local/share/<data_dir>/log` names (a probe's own HOME).
std::string session_id(const std::string& out, const std::string& err, const std::string& home,
                       const Names& names);

/// The text of the main session's last step; nullopt when there is none.
std::optional<std::string> final_message(const std::string& out);

/// Tokens from the step_finish events, unknown when a step started and printed no finish; a dollar
/// cost only where the harness priced the model (a 0 beside spent tokens means it had no price,
/// not that the run was free).
RunCost run_cost(const std::string& out);

/// Why `export` output does not show session `session` completing `task`; empty when it does
/// (the task is its newest user turn, and the last assistant message after it completed,
/// finished with "stop", carries no error and has text).
std::string check_export(const std::string& exported, const std::string& session,
                         const std::string& task);

/// `invocation` talking to the scripted model server: its provider merged into the config the
/// mapping set (an injected agent stays), model downloads and updates off, data under HOME.
Result<EndpointInjection> inject(const Invocation& invocation, const EndpointSpec& endpoint,
                                 const Names& names);

} // namespace sonata::adapters::opencode_family

namespace sonata::adapters {

/// The adapter methods OpenCode and Kilo share, read through their Names: probing over OpenAI
/// chat, a project MCP server in their project config, `run --format json` output, completion
/// through `export`, and one run at a time (every run of a user's harness shares one SQLite
/// database, which locks under concurrent runs): the last two facts are set on `spec`.
class OpenCodeFamily : public Adapter {
public:
    OpenCodeFamily(HarnessSpec spec, opencode_family::Names names);

    std::optional<McpSetup> project_mcp(const std::string& workspace,
                                        const std::vector<std::string>& server_argv) const override;
    std::string session_id(const std::string& out, const std::string& err, const std::string& home,
                           const Invocation&) const override;
    std::optional<std::string> final_message(const std::string& out) const override;
    RunCost run_cost(const std::string& out, const std::string& err,
                     const std::string& home) const override;
    /// `export <session>`: exit 0 proves nothing, `run` exits 0 after an interruption or an
    /// auto-rejection.
    std::vector<std::string> completion_export_args(const std::string& session,
                                                    const std::string& version) const override;
    std::string check_completion(const std::string& exported, const std::string& session,
                                 const std::string& task,
                                 const std::string& version) const override;
    Result<EndpointInjection> inject_endpoint(const Invocation& invocation,
                                              const EndpointSpec& endpoint) const override;

protected:
    const opencode_family::Names& names() const { return m_names; }
    /// Project config allowing every tool, for the whole project and for each of `agents`, and
    /// starting an MCP server that runs `touch <canary>`.
    static std::string hostile_config(const std::string& canary,
                                      const std::vector<std::string>& agents);
    /// A project plugin whose code writes `canary` when the harness loads it.
    std::string hostile_plugin(const std::string& canary) const;
    /// What every `run` mapping ends with: project config kept out (hostile-workspace: a
    /// repository's config re-allowed tools and its plugins ran), the model, the resumed session,
    /// JSON events (the session id, the final text, the tokens) and the message as the last
    /// argument; workspace snapshots (where `shape` has the key) and the background work in
    /// Names::quiet_env off.
    void finish_run(Invocation& inv, const PlanInput& in,
                    opencode_family::RunShape shape = opencode_family::RunShape::v1) const;

private:
    opencode_family::Names m_names;
};

} // namespace sonata::adapters
