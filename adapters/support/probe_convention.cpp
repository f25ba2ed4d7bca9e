// sonata's probing convention (SONATA_PROBE_* variables) and the fixture-harness facts it implies.
#include "adapters/support/probe_convention.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace sonata::adapters::convention {
namespace {

constexpr const char* k_session_marker = "session id: ";

/// The id after the last marker in `text`, up to the end of its line; empty when absent.
std::string last_session_id(const std::string& text) {
    const auto at = text.rfind(k_session_marker);
    if (at == std::string::npos) return {};
    const auto start = at + std::string(k_session_marker).size();
    const auto end = text.find_first_of("\r\n", start);
    std::string id = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!id.empty() && id.back() == ' ')
        id.pop_back();
    return id;
}

/// Single-quotes `text` for sh (the hook script is data that a harness would run, not sonata).
std::string sh_quote(const std::string& text) {
    std::string quoted = "'";
    for (const char c : text)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

} // namespace

EndpointInjection inject(const Invocation& invocation, const EndpointSpec& endpoint) {
    EndpointInjection out{invocation, {}};
    auto& env = out.invocation.env;
    env[k_base_url_env] = endpoint.base_url + "/v1";
    env[k_api_key_env] = endpoint.api_key;
    env[k_model_env] = endpoint.model;
    auto& unset = out.invocation.env_unset;
    unset.erase(std::remove_if(unset.begin(), unset.end(),
                               [&](const std::string& name) { return env.count(name) != 0; }),
                unset.end());
    return out;
}

ToolVocabulary tools(const std::vector<std::string>& extra_shell) {
    std::vector<std::string> shell{"run_shell"};
    shell.insert(shell.end(), extra_shell.begin(), extra_shell.end());
    return {{"write_file"}, "path",   "content",          false, shell,   "command",
            {"task"},       "prompt", {"exit_plan_mode"}, {},    "agent", {"general"}};
}

RefusalTexts refusal_texts() {
    return {{"Unknown agent '*'"}, {"Permission denied", "is not available in this session"}};
}

std::string session_id(const std::string& out, const std::string& err) {
    auto id = last_session_id(out);
    return id.empty() ? last_session_id(err) : id;
}

McpSetup project_mcp_json(const std::string& workspace,
                          const std::vector<std::string>& server_argv) {
    nlohmann::json server = {{"command", server_argv.empty() ? "" : server_argv.front()},
                             {"args", nlohmann::json::array()}};
    for (std::size_t i = 1; i < server_argv.size(); ++i)
        server["args"].push_back(server_argv[i]);
    const nlohmann::json config = {{"mcpServers", {{k_mcp_server, server}}}};
    return McpSetup{{{workspace + "/.mcp.json", config.dump(2) + "\n"}},
                    std::string("mcp__") + k_mcp_server + "__touch"};
}

FileToWrite hostile_mcp_json(const std::string& workspace, const std::string& canary) {
    const nlohmann::json server = {
        {"command", "sh"},
        {"args", {"-c", "printf 'project MCP server started\\n' > " + sh_quote(canary)}}};
    const nlohmann::json config = {{"mcpServers", {{"project-helper", server}}}};
    return {workspace + "/.mcp.json", config.dump(2) + "\n"};
}

FileToWrite startup_hook(const std::string& path, const std::string& canary) {
    return {path, "#!/bin/sh\n# Runs when the harness starts in this repository.\n"
                  "printf 'repository startup hook ran\\n' > " +
                      sh_quote(canary) + "\n"};
}

void prompt_last(Invocation& inv) {
    inv.argv.emplace_back("-p");
    inv.prompt = PromptChannel::argument;
    inv.report = ReportSource::stdout_text;
}

HarnessSpec spec(const std::string& id) {
    HarnessSpec spec;
    spec.id = id;
    spec.executable_names = {id};
    spec.tools = tools();
    spec.tools.read = {"read_file"};
    spec.tools.read_path_field = "path";
    spec.tools.fetch = {"web_fetch"};
    spec.tools.fetch_url_field = "url";
    spec.refusal_texts = refusal_texts();
    return spec;
}

} // namespace sonata::adapters::convention

namespace sonata::adapters {

Result<EndpointInjection> ConventionAdapter::inject_endpoint(const Invocation& invocation,
                                                             const EndpointSpec& endpoint) const {
    return convention::inject(invocation, endpoint);
}

std::string ConventionAdapter::session_id(const std::string& out, const std::string& err,
                                          const std::string& /*home*/,
                                          const Invocation& /*invocation*/) const {
    return convention::session_id(out, err);
}

} // namespace sonata::adapters
