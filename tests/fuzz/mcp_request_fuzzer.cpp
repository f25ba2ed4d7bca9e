// Fuzzes the mcp-canary's JSON-RPC handling: each line of the input is one message, as `sonata
// mcp-canary` reads them from stdin; every reply is one JSON-RPC 2.0 object, and nothing throws.
#include <nlohmann/json.hpp>

#include "cli/mcp_canary.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sonata::fuzz::check;
    static const std::string file = sonata::fuzz::scratch_dir() + "/touched";
    std::string_view rest = sonata::fuzz::as_text(data, size);
    while (!rest.empty()) {
        const auto end = rest.find('\n');
        const std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        const std::string reply = sonata::cli::mcp_canary_reply(line, file);
        if (reply.empty()) continue;
        check(reply.find('\n') == std::string::npos, "a reply spans lines: " + reply);
        const auto json = nlohmann::json::parse(reply, nullptr, false);
        check(json.is_object() && json.value("jsonrpc", "") == "2.0" && json.contains("id") &&
                  (json.contains("result") != json.contains("error")),
              "not a JSON-RPC 2.0 reply: " + reply);
    }
    std::remove(file.c_str());
    return 0;
}
