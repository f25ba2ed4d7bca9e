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
        : m_context{testing::hermetic_env(m_dir), m_dir.make_dir("work")},
          m_server(sonata_server_info(m_context), sonata_tools(m_context),
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
    Context m_context;
    std::mutex m_mutex;
    std::vector<json> m_sent;
    mcp::Connection m_server;
};

/// A stateless (2026-07-28) request: `params` with the _meta every such request carries.
json modern(const json& id, const std::string& method, json params = json::object(),
            const std::string& version = "2026-07-28") {
    params["_meta"] = {
        {"io.modelcontextprotocol/protocolVersion", version},
        {"io.modelcontextprotocol/clientCapabilities",
         {{"roots", json::object()}, {"elicitation", {{"form", json::object()}}}}},
        {"io.modelcontextprotocol/clientInfo", {{"name", "claude-code"}, {"version", "2.1.332"}}}};
    return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

TEST_F(McpServerTest, DiscoverAnswersTheStatelessVersionWithWhatAClientMayCache) {
    auto out = exchange(modern("d", "server/discover").dump());
    ASSERT_EQ(out.size(), 1U);
    const json& result = out[0]["result"];
    EXPECT_EQ(out[0]["id"], "d");
    EXPECT_EQ(result["resultType"], "complete");
    EXPECT_EQ(result["supportedVersions"], json::array({"2026-07-28"}));
    EXPECT_TRUE(result["capabilities"].contains("tools"));
    EXPECT_EQ(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "sonata");
    EXPECT_GT(result["ttlMs"].get<long long>(), 0);
    EXPECT_EQ(result["cacheScope"], "public");
    EXPECT_FALSE(result["instructions"].get<std::string>().empty());
}

TEST_F(McpServerTest, AStatelessRequestStandsAloneAndNeedsItsOwnMeta) {
    auto out = exchange(modern(1, "tools/list").dump());
    ASSERT_EQ(out.size(), 1U) << "no initialize before a stateless request";
    EXPECT_EQ(out[0]["result"]["resultType"], "complete");
    EXPECT_EQ(out[0]["result"]["tools"].size(), 11U);
    EXPECT_EQ(out[0]["result"]["cacheScope"], "public");

    out = exchange(R"({"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}})");
    EXPECT_EQ(out.at(0)["error"]["code"], -32602) << "discover without its _meta";
    json partial = modern(3, "tools/list");
    partial["params"]["_meta"].erase("io.modelcontextprotocol/clientCapabilities");
    out = exchange(partial.dump());
    EXPECT_EQ(out.at(0)["error"]["code"], -32602) << "a version without the client's capabilities";

    out = exchange(modern(4, "server/discover", json::object(), "2099-01-01").dump());
    EXPECT_EQ(out.at(0)["error"]["code"], -32022);
    EXPECT_EQ(out.at(0)["error"]["data"]["supported"], json::array({"2026-07-28"}));
    EXPECT_EQ(out.at(0)["error"]["data"]["requested"], "2099-01-01");

    out = exchange(R"({"jsonrpc":"2.0","id":5,"method":"tools/list"})");
    EXPECT_EQ(out.at(0)["error"]["code"], -32002)
        << "stateless requests initialize nothing: a handshake-era request still needs one";
}

TEST_F(McpServerTest, AStatelessToolCallIsAFinalResultNamingTheServer) {
    m_server.handle(
        modern(7, "tools/call", {{"name", "runs"}, {"arguments", json::object()}}).dump());
    const json answer = answer_to(7);
    ASSERT_TRUE(answer.contains("result")) << answer.dump();
    EXPECT_EQ(answer["result"]["resultType"], "complete");
    EXPECT_EQ(answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "sonata");
    EXPECT_FALSE(answer["result"]["content"].empty());

    m_server.handle(
        modern(8, "tools/call", {{"name", "status"}, {"arguments", {{"id", 3}}}}).dump());
    EXPECT_EQ(answer_to(8)["error"]["code"], -32602) << "arguments are checked as before";
}

TEST_F(McpServerTest, InitializesWithTheOfferedVersion) {
    auto out = exchange(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
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
        // Run tools declare their structured content; so do runs, plan and harnesses.
        const std::string name = tool["name"];
        if (name != "diff" && name != "apply" && name != "discard") {
            EXPECT_EQ(tool["outputSchema"]["properties"]["text"]["type"], "string") << name;
        }
    }
    EXPECT_EQ(names,
              (std::vector<std::string>{"dispatch", "wait", "approve", "status", "cancel", "runs",
                                        "plan", "harnesses", "diff", "apply", "discard"}));
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
