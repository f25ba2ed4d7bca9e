// The scripted model server: an HTTP server on 127.0.0.1, on its own threads inside sonata, that
// answers a harness's model requests from a Script, in whichever wire protocol the request uses,
// and records every request as evidence. One server per probe cell. Beast, Asio and JSON stay in
// the .cpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"
#include "core/result.hpp"
#include "probes/script.hpp"

namespace sonata::probes {

/// A tool call the server emitted in one answer.
struct ToolCallRecord {
    std::string call_id;
    std::string tool;
    std::string arguments_json;
    bool offered = false; ///< The harness offered this tool in that request.
    /// Why the scripted target is in no argument of the offered schema (Move::unplaced); "" when
    /// it is.
    std::string unplaced = {};
    std::string target = {}; ///< A scripted write's path (Move::target); "" for other calls.

    bool operator==(const ToolCallRecord&) const = default;
};

/// A tool result the harness sent back to the model: what the harness told the model happened.
struct ToolResultRecord {
    std::string call_id;          ///< Matches ToolCallRecord::call_id (Gemini: may be empty).
    std::string tool;             ///< Where the protocol names it (Gemini), else "".
    std::string text;             ///< The result's text content.
    std::optional<bool> is_error; ///< Where the protocol carries it (Anthropic, Gemini).
    std::string track;            ///< The conversation: "" main, else the sub-agent marker.

    bool operator==(const ToolResultRecord&) const = default;
};

/// One HTTP request the server received and what it answered.
struct RequestRecord {
    std::size_t index = 0; ///< 1-based arrival order.
    std::string method;
    std::string target;   ///< Path and query, as sent.
    std::string protocol; ///< adapters::to_string(WireProtocol) for model requests, else "".
    /// "turn" (a conversation with tools), "side" (no tools: titles, summaries), "classifier",
    /// "structured" (a JSON-schema answer), "models", "count-tokens", "probe" (HEAD, GET /),
    /// "not-found", "bad-request", "fault" (answered with an injected error status).
    std::string kind;
    std::string model;
    bool stream = false;
    std::vector<std::string> tools_offered;
    std::vector<std::string> watched; ///< The script's watched texts the request held.
    std::string track;                ///< "" main, else the sub-agent marker.
    std::optional<int> step;          ///< The intent step answered (turns that were not final).
    std::vector<ToolCallRecord> tool_calls;     ///< Emitted in the answer.
    std::string text;                           ///< Text answered, if any.
    std::vector<ToolResultRecord> tool_results; ///< Every tool result present in the request.
    unsigned status = 200;
    std::string fault;      ///< "", "http-status" or "truncated-stream".
    double handling_ms = 0; ///< Parse, resolve and render time inside the server.

    bool operator==(const RequestRecord&) const = default;
};

/// Makes the server misbehave on purpose, for tests of the prober's own error handling.
enum class FaultKind {
    http_status,      ///< Answer the request with `status` and a protocol error body.
    truncated_stream, ///< Send part of the answer, then close the connection mid-body.
};

struct Fault {
    std::size_t request = 1; ///< The Nth model request (1-based; HEAD, GET and 404s not counted).
    FaultKind kind = FaultKind::http_status;
    unsigned status = 500;
};

struct ModelServerOptions {
    unsigned short port = 0;                  ///< 0: an ephemeral port.
    std::string model = "sonata-probe-model"; ///< Listed by GET /v1/models.
    unsigned threads = 2;
    std::size_t body_limit = 64U << 20U; ///< Harness requests carry big prompts and tool lists.
    /// A request must arrive whole (header and body) within this long of its first byte, and an
    /// answer be taken within this long: a half-sent request or a reader that stalls cannot hold
    /// a connection (and its file descriptor) forever.
    std::chrono::milliseconds request_timeout{30'000};
    /// A connection with no request under way (a fresh one, or kept alive between requests) is
    /// closed after this long. Harness clients reconnect: Node's own servers close after 5 s.
    std::chrono::milliseconds idle_timeout{30'000};
    /// The harness's refusal texts: a call refused for its arguments is retried once, well-formed.
    adapters::RefusalTexts refusals = {};
};

/// The server. start() binds 127.0.0.1 and returns the port; stop() (or the destructor) closes
/// every connection and joins the threads. Accessors are thread-safe and may be called while
/// serving.
class ModelServer {
public:
    ModelServer(Script script, adapters::ToolVocabulary vocabulary, std::string workspace,
                ModelServerOptions options = {});
    ~ModelServer();
    ModelServer(const ModelServer&) = delete;
    ModelServer& operator=(const ModelServer&) = delete;

    /// Binds and starts serving; an error when the port cannot be bound. Call once.
    Result<unsigned short> start();
    /// Prompt: in-flight connections are dropped. Idempotent.
    void stop();

    unsigned short port() const;
    /// "http://127.0.0.1:PORT", without a path.
    std::string base_url() const;

    /// Applies to requests that arrive after the call.
    void inject_fault(const Fault& fault);

    /// Every request so far, in arrival order.
    std::vector<RequestRecord> recording() const;
    /// Every distinct tool result seen (by track and call id), in first-seen order.
    std::vector<ToolResultRecord> tool_results() const;
    /// Whether the main conversation is over: one of its turns was answered with the script's
    /// final text (no step, no tool call).
    bool main_finished() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// The recording as pretty JSON: {"requests":[…],"tool_results":[…]}.
std::string recording_to_json(const std::vector<RequestRecord>& requests,
                              const std::vector<ToolResultRecord>& results);

} // namespace sonata::probes
