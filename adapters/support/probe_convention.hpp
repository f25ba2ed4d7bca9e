// sonata's own probing convention for harnesses whose wire protocol sonata does not know (reasonix,
// grok, muse, agy): the scripted model server's address, key and model travel in SONATA_PROBE_*
// variables, and the fixture harnesses in fixtures/fake_harness speak OpenAI Chat Completions to
// it. A real binary of such a harness ignores the variables and fails to reach its own service
// offline, which the prober reports as inconclusive. Also the tool names, project MCP file and
// session-id line those fixtures use, shared by the four adapters, and the base of the three whose
// probing is nothing but the convention (agy, grok, muse).
#pragma once

#include <string>
#include <vector>

#include "adapters/adapter.hpp"

namespace sonata::adapters::convention {

/// The model server's base URL including "/v1" (".../v1/chat/completions" is appended by clients).
inline constexpr const char* k_base_url_env = "SONATA_PROBE_BASE_URL";
/// A dummy API key.
inline constexpr const char* k_api_key_env = "SONATA_PROBE_API_KEY";
/// The model name to ask for.
inline constexpr const char* k_model_env = "SONATA_PROBE_MODEL";

/// Sets the three SONATA_PROBE_* variables on a copy of `invocation` (and drops them from its
/// env_unset, so they are never both set and removed). Writes no files.
EndpointInjection inject(const Invocation& invocation, const EndpointSpec& endpoint);

/// The tools the fixture harnesses offer: write_file{path,content}, run_shell{command},
/// task{prompt,agent} (a sub-agent; sonata names "general" first, and the fixtures' refusal names
/// the one they have) and exit_plan_mode{}. `extra_shell` names a harness's own shell tool
/// to prefer when a real binary offers it.
ToolVocabulary tools(const std::vector<std::string>& extra_shell = {});

/// How the fixture harnesses word a refusal: "Unknown agent 'X'" for a sub-agent name they do not
/// have; "Permission denied", "not allowed" and the sandbox's wording for permissions.
RefusalTexts refusal_texts();

/// The session id from a "session id: <ID>" line on stdout or stderr (the last one wins); empty
/// when there is none.
std::string session_id(const std::string& out, const std::string& err);

/// The name of the project MCP server that project_mcp_json() defines.
inline constexpr const char* k_mcp_server = "sonata-canary";

/// `<workspace>/.mcp.json` in Claude Code's format ({"mcpServers":{NAME:{"command","args"}}}) with
/// one server running `server_argv`; its tool `touch` is offered as "mcp__sonata-canary__touch".
McpSetup project_mcp_json(const std::string& workspace,
                          const std::vector<std::string>& server_argv);

/// A `.mcp.json` whose one server, when started, writes `canary`: hostile repository content.
FileToWrite hostile_mcp_json(const std::string& workspace, const std::string& canary);

/// A POSIX sh script at `path` that writes `canary` when run: a repository's startup hook.
FileToWrite startup_hook(const std::string& path, const std::string& canary);

/// The facts of a harness named `id` (its id and its one executable) whose probing follows the
/// convention: the fixture harnesses' tools and refusal texts, and no known wire protocol.
HarnessSpec spec(const std::string& id);

/// Ends a headless mapping: `-p` last, so the runner appends the message after it, and the
/// report read from stdout.
void prompt_last(Invocation& inv);

} // namespace sonata::adapters::convention

namespace sonata::adapters {

/// An adapter probed through the convention alone, because its harness's wire protocol is not
/// known here: the endpoint in the SONATA_PROBE_* variables, which only the fixture harness reads,
/// and the session id from a "session id: <ID>" line. Every probing fact of such an adapter (its
/// hostile files, its MCP setup) is an assumption from documentation, checked only against that
/// fixture.
class ConventionAdapter : public Adapter {
public:
    using Adapter::Adapter;

    Result<EndpointInjection> inject_endpoint(const Invocation& invocation,
                                              const EndpointSpec& endpoint) const override;
    std::string session_id(const std::string& out, const std::string& err, const std::string& home,
                           const Invocation& invocation) const override;
};

} // namespace sonata::adapters
