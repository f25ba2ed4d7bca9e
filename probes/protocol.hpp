// The seam between the model server's HTTP core and one wire protocol (private to probes/): a
// protocol reads a request body into ConversationFacts and renders an Answer as JSON or SSE events.
// No HTTP here; the core routes, writes, records and injects faults.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/model_server.hpp"
#include "probes/script.hpp"

namespace sonata::probes::wire {

/// What kind of request this is, from its body.
enum class RequestKind {
    turn,       ///< A conversation with tools: the script answers it.
    side,       ///< No tools: a title, summary or other helper request; answered with short text.
    classifier, ///< Claude Code's auto-mode classifier (stop sequence "</block>").
    structured, ///< Asks for JSON matching a response schema (Gemini's router).
};

/// One request as its protocol read it.
struct ParsedRequest {
    RequestKind kind = RequestKind::side;
    bool stream = false;
    std::string model;
    ConversationFacts facts;
    std::vector<ToolResultRecord> results; ///< Track left empty; the core fills it.
    nlohmann::json schema;                 ///< For `structured`.
    bool stream_usage = false;             ///< Chat: stream_options.include_usage.
};

/// What to answer: a tool call or text (side answers are text moves).
struct Answer {
    Move move;
    std::string stop_sequence; ///< Non-empty: the text ended at this stop sequence.
};

/// Identity and accounting of one answer.
struct RenderInfo {
    std::string model;
    std::string id; ///< Unique per request: "sonata-17".
    std::uint64_t input_tokens = 0;
    std::uint64_t output_tokens = 0;
    std::int64_t created = 0;  ///< Unix seconds.
    bool stream_usage = false; ///< Chat: end the stream with a usage chunk.
};

/// A complete HTTP answer body: one JSON document, or a list of SSE events.
struct HttpReply {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body; ///< When not streaming.
    std::vector<std::string>
        events; ///< When streaming: each one complete SSE event, blank line included.
    bool stream = false;
};

class Protocol {
public:
    virtual ~Protocol() = default;
    virtual adapters::WireProtocol id() const = 0;
    /// Whether POST `path` (no query string) is a model request of this protocol.
    virtual bool serves(std::string_view path) const = 0;
    /// Prefixed to Move::call_id on the wire ("toolu_" for Anthropic), and in the recording.
    virtual std::string_view call_prefix() const = 0;
    /// Reads a request; throws nlohmann::json::exception on a body of the wrong shape.
    virtual ParsedRequest parse(const nlohmann::json& body, std::string_view path) const = 0;
    virtual HttpReply render(const Answer& answer, const RenderInfo& info, bool stream) const = 0;
    /// An error answer in this protocol's error format.
    virtual HttpReply error(unsigned status, std::string_view message) const = 0;
};

std::unique_ptr<Protocol> make_anthropic_protocol();
std::unique_ptr<Protocol> make_openai_responses_protocol();
std::unique_ptr<Protocol> make_openai_chat_protocol();
std::unique_ptr<Protocol> make_gemini_protocol();

// --- helpers shared by the protocols -----------------------------------------------------------

/// The error reply of both OpenAI APIs (chat completions and responses): {"error": {message, type,
/// param, code}}, typed rate_limit_exceeded (429), invalid_request_error (4xx) or server_error.
HttpReply openai_error(unsigned status, std::string_view message);

/// "event: NAME\ndata: JSON\n\n".
std::string sse_event(std::string_view name, const nlohmann::json& data);
/// "data: PAYLOAD\n\n".
std::string sse_data(std::string_view payload);

/// The text of a content value: a string, or the "text" of each element of an array of parts.
std::string text_of(const nlohmann::json& content);

/// Appends `text` to `out`, separated by a newline.
void append_text(std::string& out, std::string_view text);

/// A tool's parameter schema as JSON text, "" when absent.
std::string schema_text(const nlohmann::json& tool, std::string_view key);

/// The string at `key` of `object`; "" when absent or not a string (a description of the wrong
/// type must not fail the whole request).
std::string string_at(const nlohmann::json& object, std::string_view key);

/// A JSON object from arguments text; an empty object when it is not a JSON object.
nlohmann::json parse_arguments(std::string_view arguments_json);

} // namespace sonata::probes::wire
