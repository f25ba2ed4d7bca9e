// The scripted model server's HTTP core: a Boost.Beast server on 127.0.0.1 whose io_context runs on
// its own threads. Each connection is one coroutine reading requests in a keep-alive loop; answers
// come from the Router, whole or as chunked SSE, with injected truncation. stop() stops the
// io_context, joins the threads and destroys every pending connection with it. Clients may be
// hostile: headers are bounded, every read has a deadline, and the accept loop outlives errors.
#include "probes/model_server.hpp"

#include <algorithm>
#include <array>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "probes/model_router.hpp"

namespace sonata::probes {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// Beast keeps each field's length in 16 bits and throws std::length_error from inside its parser
// for a field of 64 KiB or more, outside every handler's try: one such header aborted sonata. The
// parser only takes fields from within header_limit bytes, so a limit below that keeps every
// field below it, and an oversized header is an ordinary error::header_limit, answered 431.
// Harnesses send a few KiB of headers.
constexpr std::uint32_t k_header_limit = 60U << 10U;
static_assert(k_header_limit < 0xFFFFU - 2U);

constexpr std::chrono::milliseconds k_accept_backoff{50};
constexpr std::chrono::milliseconds k_linger_time{1000};
constexpr std::size_t k_linger_bytes = 4U << 20U;

// Sends `count` events (all when not truncating) as chunks; false when the connection must close.
net::awaitable<bool> write_stream(beast::tcp_stream& stream, const wire::Outcome& outcome,
                                  unsigned version, bool keep_alive) {
    http::response<http::empty_body> head{static_cast<http::status>(outcome.reply.status), version};
    head.set(http::field::content_type, outcome.reply.content_type);
    head.set(http::field::cache_control, "no-cache");
    head.chunked(true);
    head.keep_alive(keep_alive);
    http::response_serializer<http::empty_body> serializer{head};
    co_await http::async_write_header(stream, serializer, net::use_awaitable);
    const auto& events = outcome.reply.events;
    const std::size_t count =
        outcome.truncate ? std::max<std::size_t>(1, events.size() / 2) : events.size();
    for (std::size_t i = 0; i < count; ++i) {
        co_await net::async_write(stream, http::make_chunk(net::buffer(events[i])),
                                  net::use_awaitable);
    }
    if (outcome.truncate) co_return false;
    co_await net::async_write(stream, http::make_chunk_last(), net::use_awaitable);
    co_return keep_alive;
}

// Sends a whole answer; a truncated one announces its full length and stops halfway.
net::awaitable<bool> write_whole(beast::tcp_stream& stream, const wire::Outcome& outcome,
                                 unsigned version, bool keep_alive, bool head_only) {
    http::response<http::string_body> res{static_cast<http::status>(outcome.reply.status), version};
    res.set(http::field::content_type, outcome.reply.content_type);
    res.keep_alive(keep_alive);
    res.body() = head_only ? std::string() : outcome.reply.body;
    res.prepare_payload();
    if (outcome.truncate) res.body().resize(res.body().size() / 2);
    co_await http::async_write(stream, res, net::use_awaitable);
    co_return keep_alive && !outcome.truncate;
}

// Answers a request whose header is over k_header_limit, then the connection closes.
net::awaitable<void> refuse_header(beast::tcp_stream& stream) {
    http::response<http::string_body> res{http::status::request_header_fields_too_large, 11};
    res.set(http::field::content_type, "application/json");
    res.keep_alive(false);
    res.body() = nlohmann::json{{"error",
                                 {{"type", "request_header_fields_too_large"},
                                  {"message", fmt::format("sonata model-server: request header "
                                                          "larger than {} bytes",
                                                          k_header_limit)}}}}
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    res.prepare_payload();
    co_await http::async_write(stream, res, net::use_awaitable);
}

// After a refusal: stop sending, then read and drop what the client is still sending (bounded in
// time and bytes). Closing with unread data resets the connection, and the client would lose the
// refusal before reading it.
net::awaitable<void> linger(beast::tcp_stream& stream) {
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.expires_after(k_linger_time);
    std::array<char, 16384> sink{};
    for (std::size_t dropped = 0; !ec && dropped < k_linger_bytes;) {
        dropped += co_await stream.async_read_some(net::buffer(sink),
                                                   net::redirect_error(net::use_awaitable, ec));
    }
}

// Reads one request and answers it; false when the connection must close. Throws
// system_error when the peer goes away, sends garbage, exceeds a limit or runs out of time.
net::awaitable<bool> serve_request(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                   wire::Router& router, const ModelServerOptions& options) {
    if (buffer.size() == 0) { // Between requests: wait for the next one's first byte.
        stream.expires_after(options.idle_timeout);
        buffer.commit(co_await stream.async_read_some(buffer.prepare(4096), net::use_awaitable));
    }
    stream.expires_after(options.request_timeout); // Header, body and answer, all together.
    http::request_parser<http::string_body> parser;
    parser.body_limit(options.body_limit);
    parser.header_limit(k_header_limit);
    beast::error_code ec;
    co_await http::async_read_header(stream, buffer, parser,
                                     net::redirect_error(net::use_awaitable, ec));
    if (ec == http::error::header_limit) {
        co_await refuse_header(stream);
        co_await linger(stream);
        co_return false;
    }
    if (ec) throw boost::system::system_error(ec);
    if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
        http::response<http::empty_body> go_on{http::status::continue_, parser.get().version()};
        co_await http::async_write(stream, go_on, net::use_awaitable);
    }
    co_await http::async_read(stream, buffer, parser, net::use_awaitable);
    const auto& request = parser.get();
    const auto outcome = router.handle(std::string(request.method_string()),
                                       std::string(request.target()), request.body());
    if (outcome.reply.stream) {
        co_return co_await write_stream(stream, outcome, request.version(), request.keep_alive());
    }
    co_return co_await write_whole(stream, outcome, request.version(), request.keep_alive(),
                                   request.method() == http::verb::head);
}

net::awaitable<void> serve_connection(wire::Router& router, const ModelServerOptions& options,
                                      tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    try {
        for (bool open = true; open;)
            open = co_await serve_request(stream, buffer, router, options);
    } catch (const std::exception&) {
        // The peer went away, sent garbage, exceeded a limit or a timeout, or answering it threw:
        // only this connection ends.
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

// Accept errors do not end the loop: out of descriptors (EMFILE), the connection waits in the
// backlog and every retry would fail at once, so wait a little for connections to close first.
net::awaitable<void> accept_loop(tcp::acceptor& acceptor, wire::Router& router,
                                 const ModelServerOptions& options) {
    net::steady_timer backoff(acceptor.get_executor());
    while (acceptor.is_open()) {
        beast::error_code ec;
        auto socket = co_await acceptor.async_accept(net::redirect_error(net::use_awaitable, ec));
        if (ec == net::error::operation_aborted) co_return;
        if (ec) {
            backoff.expires_after(k_accept_backoff);
            co_await backoff.async_wait(net::redirect_error(net::use_awaitable, ec));
            continue;
        }
        socket.set_option(tcp::no_delay(true), ec); // A peer already gone fails later, alone.
        net::co_spawn(acceptor.get_executor(), serve_connection(router, options, std::move(socket)),
                      net::detached);
    }
}

// Runs the io_context until stop(). Should a handler still throw, only that handler (and the
// connection it served) is lost: the thread goes back to serving the others.
void run_until_stopped(net::io_context& io) {
    for (;;) {
        try {
            io.run();
            return;
        } catch (const std::exception&) {
            // The handler that threw is gone, and whatever it owned with it; serve the rest.
        }
    }
}

nlohmann::ordered_json to_json(const ToolResultRecord& r) {
    return {{"call_id", r.call_id},
            {"tool", r.tool},
            {"text", r.text},
            {"is_error",
             r.is_error ? nlohmann::ordered_json(*r.is_error) : nlohmann::ordered_json(nullptr)},
            {"track", r.track}};
}

nlohmann::ordered_json to_json(const RequestRecord& r) {
    nlohmann::ordered_json calls = nlohmann::ordered_json::array();
    for (const auto& c : r.tool_calls) {
        nlohmann::ordered_json call{{"call_id", c.call_id},
                                    {"tool", c.tool},
                                    {"arguments", c.arguments_json},
                                    {"offered", c.offered}};
        if (!c.unplaced.empty()) call["unplaced"] = c.unplaced;
        calls.push_back(std::move(call));
    }
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (const auto& result : r.tool_results)
        results.push_back(to_json(result));
    return {{"index", r.index},
            {"method", r.method},
            {"target", r.target},
            {"protocol", r.protocol},
            {"kind", r.kind},
            {"model", r.model},
            {"stream", r.stream},
            {"tools_offered", r.tools_offered},
            {"watched", r.watched},
            {"track", r.track},
            {"step", r.step ? nlohmann::ordered_json(*r.step) : nlohmann::ordered_json(nullptr)},
            {"tool_calls", calls},
            {"text", r.text},
            {"tool_results", results},
            {"status", r.status},
            {"fault", r.fault},
            {"handling_ms", r.handling_ms}};
}

} // namespace

struct ModelServer::Impl {
    Impl(Script script, ScriptContext context, ModelServerOptions opts)
        : options(std::move(opts)), router(std::move(script), std::move(context), options.model) {}

    ModelServerOptions options;
    wire::Router router;
    std::unique_ptr<net::io_context> io;
    std::unique_ptr<tcp::acceptor> acceptor;
    std::vector<std::thread> threads;
    unsigned short port = 0;
};

ModelServer::ModelServer(Script script, adapters::ToolVocabulary vocabulary, std::string workspace,
                         ModelServerOptions options)
    : m_impl(std::make_unique<Impl>(
          std::move(script),
          ScriptContext{std::move(vocabulary), std::move(workspace), options.refusals},
          std::move(options))) {}

ModelServer::~ModelServer() { stop(); }

Result<unsigned short> ModelServer::start() {
    auto& impl = *m_impl;
    if (impl.io) return fail(ExitCode::failure, "model server: already started");
    impl.io =
        std::make_unique<net::io_context>(static_cast<int>(std::max(1U, impl.options.threads)));
    impl.acceptor = std::make_unique<tcp::acceptor>(*impl.io);
    const tcp::endpoint endpoint{net::ip::make_address_v4("127.0.0.1"), impl.options.port};
    beast::error_code ec;
    impl.acceptor->open(endpoint.protocol(), ec);
    if (!ec) impl.acceptor->set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) impl.acceptor->bind(endpoint, ec);
    if (!ec) impl.acceptor->listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
        impl.acceptor.reset();
        impl.io.reset();
        return fail(ExitCode::failure,
                    fmt::format("model server: cannot listen on 127.0.0.1:{}: {}",
                                impl.options.port, ec.message()));
    }
    impl.port = impl.acceptor->local_endpoint().port();
    net::co_spawn(*impl.io, accept_loop(*impl.acceptor, impl.router, impl.options), net::detached);
    for (unsigned i = 0; i < std::max(1U, impl.options.threads); ++i) {
        impl.threads.emplace_back([&io = *impl.io] { run_until_stopped(io); });
    }
    return impl.port;
}

void ModelServer::stop() {
    auto& impl = *m_impl;
    if (!impl.io) return;
    impl.router.release();
    impl.io->stop();
    for (auto& thread : impl.threads)
        thread.join();
    impl.threads.clear();
    impl.acceptor.reset();
    impl.io.reset(); // Destroys the suspended connection coroutines and their sockets.
}

unsigned short ModelServer::port() const { return m_impl->port; }

std::string ModelServer::base_url() const {
    return fmt::format("http://127.0.0.1:{}", m_impl->port);
}

void ModelServer::inject_fault(const Fault& fault) { m_impl->router.inject_fault(fault); }

std::vector<RequestRecord> ModelServer::recording() const { return m_impl->router.recording(); }

std::vector<ToolResultRecord> ModelServer::tool_results() const {
    return m_impl->router.tool_results();
}

bool ModelServer::main_finished() const {
    const auto requests = recording();
    return std::any_of(requests.begin(), requests.end(), [](const RequestRecord& r) {
        return r.kind == "turn" && r.track.empty() && !r.step && r.tool_calls.empty();
    });
}

std::string recording_to_json(const std::vector<RequestRecord>& requests,
                              const std::vector<ToolResultRecord>& results) {
    nlohmann::ordered_json out = {{"requests", nlohmann::ordered_json::array()},
                                  {"tool_results", nlohmann::ordered_json::array()}};
    for (const auto& r : requests)
        out["requests"].push_back(to_json(r));
    for (const auto& r : results)
        out["tool_results"].push_back(to_json(r));
    return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace sonata::probes
