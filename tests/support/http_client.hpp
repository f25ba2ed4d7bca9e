// A small HTTP/1.1 client over loopback for tests of the scripted model server (Boost.Beast, one
// keep-alive connection, every operation bounded by a timeout), and a parser for the server-sent
// events it receives.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sonata::testing {

/// One response, possibly cut short.
struct HttpResponse {
    unsigned status = 0; ///< 0: no header arrived.
    std::string content_type;
    std::string body;      ///< Chunked bodies are decoded; a cut-short body holds what arrived.
    bool complete = false; ///< The whole message arrived.
    bool keep_alive = false;
};

/// One connection to 127.0.0.1:port. Not thread-safe: one client per thread.
class HttpClient {
public:
    explicit HttpClient(unsigned short port,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10));
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    /// Whether the connection is up (connect succeeded and the server has not closed it).
    bool connected() const;

    /// Sends one request ("POST", "GET", "HEAD") with a JSON body and reads the response.
    HttpResponse send(std::string_view method, const std::string& target,
                      const std::string& body = "");

    /// Sends only the header of a POST whose body never follows (for tests of stopping).
    void send_header_only(const std::string& target, std::size_t announced_length);

    /// Writes `bytes` as they are (a hand-made, possibly hostile request) and reads nothing;
    /// false when the write failed or timed out.
    bool write_raw(const std::string& bytes);

    /// Writes `bytes` as they are and reads one response, as send() does.
    HttpResponse send_raw(const std::string& bytes);

    /// Waits, up to the timeout, for the server to end the connection; true when it closed (or
    /// reset) it, false when the timeout came first or the server sent something instead.
    bool closed_by_server();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// One server-sent event: its `event:` name ("" when absent) and its `data:` payload.
struct SseEvent {
    std::string event;
    std::string data;

    bool operator==(const SseEvent&) const = default;
};

/// Splits an event stream into events; throws std::runtime_error on a line that is neither
/// `event:` nor `data:`, or when the stream does not end with a blank line.
std::vector<SseEvent> parse_sse(std::string_view body);

} // namespace sonata::testing
