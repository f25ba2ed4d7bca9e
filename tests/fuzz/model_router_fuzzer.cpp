// Fuzzes the scripted model server's routing and protocols without HTTP: the input's first line
// is "METHOD TARGET" (or just a target, for POST), the rest is the body.
#include "tests/fuzz/router_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = sonata::fuzz::as_text(data, size);
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    const std::string_view body =
        newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    const auto space = line.find(' ');
    const std::string_view method =
        space == std::string_view::npos ? "POST" : line.substr(0, space);
    const std::string_view target = space == std::string_view::npos ? line : line.substr(space + 1);
    const auto router = sonata::fuzz::make_router();
    sonata::fuzz::check_outcome(router->handle(method, target, body));
    return 0;
}
