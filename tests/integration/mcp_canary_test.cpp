// `sonata mcp-canary`: the project MCP server of the mcp-reachability probe, spoken to over stdio
// with newline-delimited JSON-RPC exactly as a harness would.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata {
namespace {

using nlohmann::json;

std::vector<json> lines_of(const std::string& text) {
    std::vector<json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(json::parse(line));
    return out;
}

TEST(McpCanaryTest, AnswersTheHandshakeListsTouchAndAppendsOnEachCall) {
    testing::ScratchDir dir;
    const std::string touched = dir.path() + "/touched";
    ProcessRequest request;
    request.argv = {SONATA_BIN, "mcp-canary", "--touch", touched};
    request.env = testing::hermetic_env(dir);
    request.stdin_data =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})"
        "\n"
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
        "\n"
        R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})"
        "\n"
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"touch","arguments":{"note":"one"}}})"
        "\n"
        R"({"jsonrpc":"2.0","id":"four","method":"tools/call","params":{"name":"touch"}})"
        "\n"
        "not json\n"
        R"({"jsonrpc":"2.0","id":5,"method":"resources/list"})"
        "\n";
    const auto result = make_system_runner()->run(request);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->exit_code, 0) << result->err;
    const auto text = [&](const std::string& t) {
        return json{{"content", {{{"type", "text"}, {"text", t}}}}, {"isError", false}};
    };
    const std::vector<json> expected{
        {{"jsonrpc", "2.0"},
         {"id", 1},
         {"result",
          {{"protocolVersion", "2025-03-26"},
           {"capabilities", {{"tools", json::object()}}},
           {"serverInfo", {{"name", "sonata-mcp-canary"}, {"version", SONATA_VERSION}}}}}},
        {{"jsonrpc", "2.0"},
         {"id", 2},
         {"result",
          {{"tools",
            {{{"name", "touch"},
              {"description", "Records that it was called (appends a line to a file)."},
              {"annotations", {{"readOnlyHint", true}}},
              {"inputSchema",
               {{"type", "object"}, {"properties", {{"note", {{"type", "string"}}}}}}}}}}}}},
        {{"jsonrpc", "2.0"}, {"id", 3}, {"result", text("touched " + touched)}},
        {{"jsonrpc", "2.0"}, {"id", "four"}, {"result", text("touched " + touched)}},
        {{"jsonrpc", "2.0"},
         {"id", nullptr},
         {"error", {{"code", -32700}, {"message", "parse error"}}}},
        {{"jsonrpc", "2.0"},
         {"id", 5},
         {"error", {{"code", -32601}, {"message", "method not found: resources/list"}}}},
    };
    EXPECT_EQ(lines_of(result->out), expected);
    std::ifstream in(touched);
    std::ostringstream content;
    content << in.rdbuf();
    EXPECT_EQ(content.str(), "mcp-canary touch: one\nmcp-canary touch: called\n");
}

} // namespace
} // namespace sonata
