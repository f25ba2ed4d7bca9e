// A started scripted model server with a client on it, and helpers to build harness-shaped
// requests and read the answers, shared by the model server's integration tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/model_server.hpp"
#include "tests/support/http_client.hpp"

namespace sonata::testing {

/// Input tokens every fixture script reports, so usage fields compare whole.
inline constexpr std::uint64_t k_probe_tokens = 1234;

/// Parses a script (throws on error) and fixes its input tokens to k_probe_tokens.
probes::Script script_of(const std::string& text);

/// A loopback port that was free a moment ago, for a `sonata model-server --port` child.
unsigned short free_port();

/// The tool vocabulary of a registered adapter (throws when unknown).
adapters::ToolVocabulary vocabulary_of(std::string_view harness);

/// The output tokens the server reports for `text`.
std::uint64_t tokens_of(const std::string& text);

/// A started server (workspace "/ws") and a client on it; requests are numbered from 1.
struct Served {
    Served(const std::string& script, adapters::ToolVocabulary vocabulary);

    HttpResponse post(const std::string& target, const nlohmann::json& body);

    /// The event stream of a streaming POST, checked to be complete and well-formed.
    std::vector<SseEvent> stream(const std::string& target, const nlohmann::json& body);

    probes::ModelServer server;
    std::unique_ptr<HttpClient> client;
};

std::vector<std::string> names_of(const std::vector<SseEvent>& events);
/// Each event's data as JSON ("[DONE]" as the JSON string "[DONE]").
std::vector<nlohmann::json> data_of(const std::vector<SseEvent>& events);
/// A record with its timing zeroed, to compare whole.
probes::RequestRecord without_timing(probes::RequestRecord record);

/// Anthropic: a tool definition and a Claude Code-shaped request.
nlohmann::json claude_tool(const std::string& name, nlohmann::json schema = {{"type", "object"}});
nlohmann::json claude_request(nlohmann::json messages, nlohmann::json tools, bool stream = true);

/// Chat Completions: a tool definition and an opencode-shaped request (usage asked when streaming).
nlohmann::json chat_tool(const std::string& name, nlohmann::json schema);
nlohmann::json chat_request(nlohmann::json messages, nlohmann::json tools, bool stream);

} // namespace sonata::testing
