// `sonata mcp`'s protocol handling: the handshake Claude Code 2.1.332 sends, the tool list it
// needs, and bad input, which always gets a JSON-RPC error while the server keeps serving.
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/mcp_tools.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata::cli {
namespace {

using nlohmann::json;

class McpServerTest : public ::testing::Test {
protected:
    McpServerTest()
        : m_server(sonata_server_info(),
                   sonata_tools(Context{testing::hermetic_env(m_dir), m_dir.make_dir("work")}),
                   [this](const std::string& message) {
                       std::lock_guard lock(m_mutex);
                       m_sent.push_back(json::parse(message));
                   }) {}

    /// Sends `line`, waits for every tool call it started, and returns what came back since.
    std::vector<json> exchange(const std::string& line) {
        m_server.handle(line);
        return take();
    }
    std::vector<json> take() {
        std::lock_guard lock(m_mutex);
        auto out = std::move(m_sent);
        m_sent.clear();
        return out;
    }
    json call(const json& id, const std::string& name, const json& args) {
        return json{{"jsonrpc", "2.0"},
                    {"id", id},
                    {"method", "tools/call"},
                    {"params", {{"name", name}, {"arguments", args}}}};
    }
    void initialize() {
        const auto out = exchange(
            R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.332"}}})");
        ASSERT_EQ(out.size(), 1U);
    }
    /// The one answer to request `id` once the workers are done.
    json answer_to(const json& id) {
        m_server.drain();
        for (const auto& m : take())
            if (m.contains("id") && m["id"] == id) return m;
        return nullptr;
    }

    testing::ScratchDir m_dir;
    std::mutex m_mutex;
    std::vector<json> m_sent;
    mcp::Connection m_server;
};

TEST_F(McpServerTest, AnswersDiscoverWithMethodNotFoundThenInitializesWithTheOfferedVersion) {
    auto out = exchange(R"({"jsonrpc":"2.0","id":"d","method":"server/discover","params":{}})");
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0]["id"], "d");
    EXPECT_EQ(out[0]["error"]["code"], -32601);

    out = exchange(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0]["error"]["code"], -32002) << "a request before initialize";

    out = exchange(
        R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0]["result"]["protocolVersion"], "2025-11-25");
    EXPECT_EQ(out[0]["result"]["serverInfo"]["name"], "sonata");
    EXPECT_TRUE(out[0]["result"]["capabilities"].contains("tools"));

    out = exchange(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    EXPECT_TRUE(out.empty()) << "a notification gets no answer";

    out = exchange(
        R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
    EXPECT_EQ(out.at(0)["result"]["protocolVersion"], "2025-11-25") << "an unknown version";
}

TEST_F(McpServerTest, ListsEveryToolLoadedUpFrontWithAStrictSchema) {
    initialize();
    const auto out = exchange(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
    ASSERT_EQ(out.size(), 1U);
    std::vector<std::string> names;
    for (const auto& tool : out[0]["result"]["tools"]) {
        names.push_back(tool["name"]);
        EXPECT_EQ(tool["_meta"]["anthropic/alwaysLoad"], true) << tool["name"];
        EXPECT_GE(tool["_meta"]["anthropic/maxResultSizeChars"].get<int>(), 100000);
        EXPECT_EQ(tool["inputSchema"]["additionalProperties"], false) << tool["name"];
    }
    EXPECT_EQ(names, (std::vector<std::string>{"dispatch", "wait", "approve", "status", "cancel",
                                               "runs", "plan", "harnesses"}));
}

TEST_F(McpServerTest, BadInputGetsAnErrorAndTheServerKeepsServing) {
    initialize();
    struct Case {
        std::string line;
        int code;
    };
    const std::vector<Case> cases = {
        {"{not json", -32700},
        {"[1,2]", -32600},
        {"42", -32600},
        {R"({"jsonrpc":"2.0","id":1,"method":7})", -32600},
        {R"({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})", -32600},
        {std::string(5000, '[') + std::string(5000, ']'), -32600},
        {R"({"jsonrpc":"2.0","id":2,"method":"resources/list"})", -32601},
        {call(3, "shell", json::object()).dump(), -32602},
        {call(4, "wait", json::object()).dump(), -32602},
        {call(5, "wait", {{"id", "r1"}, {"extra", 1}}).dump(), -32602},
        {call(6, "wait", {{"id", 7}}).dump(), -32602},
        {call(7, "approve", {{"id", "r1"}, {"answer", "maybe"}}).dump(), -32602},
        {call(8, "dispatch", {{"task", "x"}, {"window_seconds", -1}}).dump(), -32602},
        {call(9, "dispatch", {{"task", "x"}, {"options", {{"k", 1}}}}).dump(), -32602},
        {std::string(mcp::k_max_message + 1, ' '), -32600},
    };
    for (const auto& c : cases) {
        const auto out = exchange(c.line);
        ASSERT_EQ(out.size(), 1U) << c.line.substr(0, 80);
        EXPECT_EQ(out[0]["error"]["code"], c.code) << c.line.substr(0, 80);
    }
    const auto out = exchange(R"({"jsonrpc":"2.0","id":99,"method":"ping"})");
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0]["result"], json::object()) << "still serving";
}

TEST_F(McpServerTest, AToolThatCannotDoItsJobAnswersWithAToolError) {
    initialize();
    m_server.handle(call(1, "status", {{"id", "../../etc"}}).dump());
    const auto hostile = answer_to(1);
    ASSERT_TRUE(hostile.contains("result")) << hostile;
    EXPECT_EQ(hostile["result"]["isError"], true);
    EXPECT_NE(hostile["result"]["content"][0]["text"].get<std::string>().find("sonata: error:"),
              std::string::npos);
}

TEST_F(McpServerTest, DispatchWantsOneTaskAndAHarnessOrARole) {
    initialize();
    m_server.handle(call(1, "dispatch", {{"role", "review"}}).dump());
    m_server.handle(
        call(2, "dispatch", {{"role", "review"}, {"task", "a"}, {"task_file", "b"}}).dump());
    m_server.handle(call(3, "dispatch", {{"task", "look"}}).dump());
    m_server.handle(call(4, "dispatch", {{"task", "go on"}, {"resume", "no-such-run"}}).dump());
    m_server.handle(call(6, "dispatch", {{"task", "x"}, {"role", "code"}, {"cwd", "/etc"}}).dump());
    m_server.handle(
        call(7, "dispatch", {{"task", "x"}, {"role", "code"}, {"cwd", "../.."}}).dump());
    m_server.handle(
        call(5, "dispatch", {{"task", "go on"}, {"resume", "r1"}, {"role", "review"}}).dump());
    m_server.drain();
    const auto out = take();
    ASSERT_EQ(out.size(), 7U);
    for (const auto& m : out) {
        EXPECT_EQ(m["result"]["isError"], true) << m;
        if (m["id"] == 6 || m["id"] == 7) {
            EXPECT_NE(m["result"]["content"][0]["text"].get<std::string>().find(
                          "is outside this session's directory"),
                      std::string::npos)
                << m;
        }
    }
}

} // namespace
} // namespace sonata::cli
