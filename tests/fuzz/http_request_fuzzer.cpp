// Fuzzes the scripted model server's request path on raw bytes: Beast's request parser with the
// server's limits, the Router on whatever request it completes, and Beast's serializer on the
// answer, as probes/model_server.cpp chains them (minus the socket).
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "tests/fuzz/router_support.hpp"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(1U << 20U); // probes/model_server.cpp: k_header_limit
    parser.body_limit(64U << 20U);  // ModelServerOptions::body_limit
    parser.eager(true);
    boost::beast::error_code ec;
    std::size_t used = 0;
    while (used < size && !parser.is_done() && !ec) {
        const auto n = parser.put(boost::asio::buffer(data + used, size - used), ec);
        if (n == 0 && !ec) break;
        used += n;
    }
    if (parser.got_some() && !parser.is_done() && (!ec || ec == http::error::need_more)) {
        ec = {};
        parser.put_eof(ec);
    }
    if (ec || !parser.is_done()) return 0;
    const auto& request = parser.get();
    const auto router = sonata::fuzz::make_router();
    const auto outcome = router->handle(std::string(request.method_string()),
                                        std::string(request.target()), request.body());
    sonata::fuzz::check_outcome(outcome);
    if (outcome.reply.stream) return 0;
    http::response<http::string_body> res{static_cast<http::status>(outcome.reply.status),
                                          request.version()};
    res.set(http::field::content_type, outcome.reply.content_type);
    res.keep_alive(request.keep_alive());
    res.body() = outcome.reply.body;
    res.prepare_payload();
    http::response_serializer<http::string_body> serializer{res};
    std::size_t written = 0;
    do {
        serializer.next(ec, [&](boost::beast::error_code&, const auto& buffers) {
            const auto n = boost::asio::buffer_size(buffers);
            written += n;
            serializer.consume(n);
        });
    } while (!ec && !serializer.is_done());
    sonata::fuzz::check(!ec && written > outcome.reply.body.size(),
                        "the answer does not serialize");
    return 0;
}
