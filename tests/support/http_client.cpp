// The test HTTP client: asynchronous Beast operations run on a private io_context with run_for, so
// a server that never answers fails the test instead of hanging it.
#include "tests/support/http_client.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace sonata::testing {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

struct HttpClient::Impl {
    explicit Impl(std::chrono::milliseconds limit) : timeout(limit), stream(io) {}

    // Starts an operation with a completion handler and runs it to completion or timeout.
    template <class Start> beast::error_code run(Start start) {
        std::optional<beast::error_code> result;
        start([&result](beast::error_code ec, std::size_t = 0) { result = ec; });
        io.restart();
        io.run_for(timeout);
        if (!result) {
            beast::error_code ignored;
            stream.socket().close(ignored);
            io.restart();
            io.run();
            return net::error::timed_out;
        }
        return *result;
    }

    // Reads one response; the connection stays up only when it is whole and kept alive.
    HttpResponse read_response(bool head) {
        HttpResponse out;
        http::response_parser<http::string_body> parser;
        parser.body_limit(boost::none);
        if (head) parser.skip(true);
        const auto ec =
            run([&](auto handler) { http::async_read(stream, buffer, parser, handler); });
        if (parser.is_header_done()) {
            out.status = parser.get().result_int();
            out.content_type = std::string(parser.get()[http::field::content_type]);
            out.keep_alive = parser.get().keep_alive();
        }
        out.body = parser.get().body();
        out.complete = !ec;
        if (ec || !out.keep_alive) up = false;
        return out;
    }

    std::chrono::milliseconds timeout;
    net::io_context io;
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    bool up = false;
};

HttpClient::HttpClient(unsigned short port, std::chrono::milliseconds timeout)
    : m_impl(std::make_unique<Impl>(timeout)) {
    const tcp::endpoint endpoint{net::ip::make_address_v4("127.0.0.1"), port};
    const auto ec = m_impl->run([&](auto handler) {
        m_impl->stream.async_connect(endpoint,
                                     [handler](beast::error_code e) mutable { handler(e); });
    });
    m_impl->up = !ec;
    if (m_impl->up) m_impl->stream.socket().set_option(tcp::no_delay(true));
}

HttpClient::~HttpClient() = default;

bool HttpClient::connected() const { return m_impl->up; }

HttpResponse HttpClient::send(std::string_view method, const std::string& target,
                              const std::string& body) {
    if (!m_impl->up) return {};
    http::request<http::string_body> request{http::string_to_verb(method), target, 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::content_type, "application/json");
    request.keep_alive(true);
    request.body() = body;
    request.prepare_payload();
    if (m_impl->run([&](auto handler) { http::async_write(m_impl->stream, request, handler); })) {
        m_impl->up = false;
        return {};
    }
    return m_impl->read_response(method == "HEAD");
}

void HttpClient::send_header_only(const std::string& target, std::size_t announced_length) {
    write_raw("POST " + target +
              " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
              "Content-Length: " + std::to_string(announced_length) + "\r\n\r\n");
}

bool HttpClient::write_raw(const std::string& bytes) {
    if (!m_impl->up) return false;
    const auto ec = m_impl->run(
        [&](auto handler) { net::async_write(m_impl->stream, net::buffer(bytes), handler); });
    if (ec) m_impl->up = false;
    return !ec;
}

HttpResponse HttpClient::send_raw(const std::string& bytes) {
    if (!write_raw(bytes)) return {};
    return m_impl->read_response(false);
}

bool HttpClient::closed_by_server() {
    if (!m_impl->up) return false;
    char byte = 0;
    const auto ec = m_impl->run(
        [&](auto handler) { m_impl->stream.async_read_some(net::buffer(&byte, 1), handler); });
    m_impl->up = false;
    return ec == net::error::eof || ec == net::error::connection_reset;
}

std::vector<SseEvent> parse_sse(std::string_view body) {
    std::vector<SseEvent> events;
    if (body.empty()) return events;
    if (body.size() < 2 || body.substr(body.size() - 2) != "\n\n") {
        throw std::runtime_error("event stream does not end with a blank line");
    }
    std::size_t at = 0;
    while (at < body.size()) {
        const auto end = body.find("\n\n", at);
        const auto block = body.substr(at, end - at);
        at = end + 2;
        SseEvent event;
        std::size_t line_at = 0;
        while (line_at <= block.size()) {
            const auto line_end = std::min(block.find('\n', line_at), block.size());
            const auto line = block.substr(line_at, line_end - line_at);
            line_at = line_end + 1;
            if (line.substr(0, 7) == "event: ")
                event.event = std::string(line.substr(7));
            else if (line.substr(0, 6) == "data: ")
                event.data = std::string(line.substr(6));
            else
                throw std::runtime_error("unexpected line in event stream: " + std::string(line));
        }
        events.push_back(std::move(event));
    }
    return events;
}

} // namespace sonata::testing
