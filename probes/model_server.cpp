// The scripted model server's HTTP core: a Boost.Beast server on 127.0.0.1 whose io_context runs on
// its own threads. Each connection is one coroutine reading requests in a keep-alive loop; answers
// come from the Router, whole or as chunked SSE, with injected truncation. stop() stops the
// io_context, joins the threads and destroys every pending connection with it.
#include "probes/model_server.hpp"

#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
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

constexpr std::uint32_t k_header_limit = 1U << 20U;

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

net::awaitable<void> serve_connection(wire::Router& router, std::size_t body_limit,
                                      tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    try {
        for (bool open = true; open;) {
            http::request_parser<http::string_body> parser;
            parser.body_limit(body_limit);
            parser.header_limit(k_header_limit);
            co_await http::async_read_header(stream, buffer, parser, net::use_awaitable);
            if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
                http::response<http::empty_body> go_on{http::status::continue_,
                                                       parser.get().version()};
                co_await http::async_write(stream, go_on, net::use_awaitable);
            }
            co_await http::async_read(stream, buffer, parser, net::use_awaitable);
            const auto& request = parser.get();
            const auto outcome = router.handle(std::string(request.method_string()),
                                               std::string(request.target()), request.body());
            if (outcome.reply.stream) {
                open =
                    co_await write_stream(stream, outcome, request.version(), request.keep_alive());
            } else {
                open =
                    co_await write_whole(stream, outcome, request.version(), request.keep_alive(),
                                         request.method() == http::verb::head);
            }
        }
    } catch (const boost::system::system_error&) {
        // The peer went away, sent garbage, or exceeded a limit: the connection ends.
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

net::awaitable<void> accept_loop(tcp::acceptor& acceptor, wire::Router& router,
                                 std::size_t body_limit) {
    for (;;) {
        auto socket = co_await acceptor.async_accept(net::use_awaitable);
        socket.set_option(tcp::no_delay(true));
        net::co_spawn(acceptor.get_executor(),
                      serve_connection(router, body_limit, std::move(socket)), net::detached);
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
        calls.push_back({{"call_id", c.call_id},
                         {"tool", c.tool},
                         {"arguments", c.arguments_json},
                         {"offered", c.offered}});
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
            {"track", r.track},
            {"step", r.step ? nlohmann::ordered_json(*r.step) : nlohmann::ordered_json(nullptr)},
            {"tool_calls", calls},
            {"text", r.text},
            {"tool_results", results},
            {"status", r.status},
            {"fault", r.fault},
            {"handling_ms", r.handling_ms}};
}

}  // namespace

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
    : m_impl(std::make_unique<Impl>(std::move(script),
                                    ScriptContext{std::move(vocabulary), std::move(workspace)},
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
    net::co_spawn(*impl.io, accept_loop(*impl.acceptor, impl.router, impl.options.body_limit),
                  net::detached);
    for (unsigned i = 0; i < std::max(1U, impl.options.threads); ++i) {
        impl.threads.emplace_back([&io = *impl.io] { io.run(); });
    }
    return impl.port;
}

void ModelServer::stop() {
    auto& impl = *m_impl;
    if (!impl.io) return;
    impl.io->stop();
    for (auto& thread : impl.threads)
        thread.join();
    impl.threads.clear();
    impl.acceptor.reset();
    impl.io.reset();  // Destroys the suspended connection coroutines and their sockets.
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

std::string recording_to_json(const std::vector<RequestRecord>& requests,
                              const std::vector<ToolResultRecord>& results) {
    nlohmann::ordered_json out = {{"requests", nlohmann::ordered_json::array()},
                                  {"tool_results", nlohmann::ordered_json::array()}};
    for (const auto& r : requests)
        out["requests"].push_back(to_json(r));
    for (const auto& r : results)
        out["tool_results"].push_back(to_json(r));
    return out.dump(2);
}

}  // namespace sonata::probes
