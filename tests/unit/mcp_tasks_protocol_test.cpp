// The tasks extension on an MCP connection, against a store the test controls: a call from a
// client that declares the extension is answered at once with a task; tasks/get, tasks/update and
// tasks/cancel reach the store only from a request that declares the extension itself; unknown
// tasks, malformed requests and removed methods get JSON-RPC errors while the server keeps
// serving; a subscription acknowledges its tasks and sends each change of state once.
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/mcp_protocol.hpp"

namespace sonata::mcp {
namespace {

/// Tasks kept in memory, as the test sets them.
class FakeStore : public TaskStore {
public:
    Result<TaskView> get(const std::string& id, const json& client) override {
        std::lock_guard lock(mutex);
        last_client = client;
        const auto it = tasks.find(id);
        if (it == tasks.end()) return fail(ExitCode::usage, "no task " + id);
        return it->second;
    }
    Result<void> update(const std::string& id, const json& responses) override {
        std::lock_guard lock(mutex);
        if (!tasks.contains(id)) return fail(ExitCode::usage, "no task " + id);
        updates.emplace_back(id, responses);
        return {};
    }
    Result<void> cancel(const std::string& id) override {
        std::lock_guard lock(mutex);
        if (!tasks.contains(id)) return fail(ExitCode::usage, "no task " + id);
        cancelled.push_back(id);
        return {};
    }
    void set(TaskView task) {
        std::lock_guard lock(mutex);
        tasks[task.id] = std::move(task);
    }

    std::mutex mutex;
    std::map<std::string, TaskView> tasks;
    std::vector<std::pair<std::string, json>> updates;
    std::vector<std::string> cancelled;
    json last_client;
};

TaskView working(const std::string& id) {
    TaskView task;
    task.id = id;
    task.message = "running: step 1";
    task.created_at = "2026-12-05T07:00:00Z";
    task.updated_at = "2026-12-05T07:00:01Z";
    return task;
}

class McpTasksProtocol : public ::testing::Test {
protected:
    McpTasksProtocol()
        : m_connection(info(), {slow_tool()}, [this](const std::string& m) {
              std::lock_guard lock(m_mutex);
              m_sent.push_back(json::parse(m));
          }) {}

    ServerInfo info() {
        ServerInfo server{"sonata", "9.9", "", json::object()};
        server.tasks = m_store;
        return server;
    }

    /// "work": as a task it starts task "t-1" (or answers at once for {"refuse": "yes"}); waited
    /// for, it answers "waited".
    static Tool slow_tool() {
        Tool tool{"work",
                  "Works.",
                  {{"type", "object"},
                   {"properties", {{"refuse", {{"type", "string"}}}}},
                   {"additionalProperties", false}},
                  Access::acts,
                  [](const json&, const Progress&, const Stop&) { return ToolResult{"waited"}; }};
        tool.start_task = [](const json& args, const Progress&, const Stop&) {
            if (args.contains("refuse")) return TaskStart{"", {"refused", true}};
            return TaskStart{"t-1", {}, {{"com.example/note", "started t-1"}}};
        };
        return tool;
    }

    /// A 2026-07-28 request whose client declares `capabilities`.
    static json request(const json& id, const std::string& method, json params,
                        const json& capabilities) {
        params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                           {"io.modelcontextprotocol/clientCapabilities", capabilities}};
        return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
    }
    static json with_tasks() {
        return {{"elicitation", {{"form", json::object()}}},
                {"extensions", {{"io.modelcontextprotocol/tasks", json::object()}}}};
    }

    /// The answer to `message` once every worker is done.
    json answer(const json& message) {
        m_connection.handle(message.dump());
        m_connection.drain();
        std::lock_guard lock(m_mutex);
        for (const auto& m : m_sent)
            if (m.contains("id") && m["id"] == message["id"]) return m;
        return nullptr;
    }
    std::vector<json> sent(const std::string& method) {
        std::lock_guard lock(m_mutex);
        std::vector<json> out;
        for (const auto& m : m_sent)
            if (m.value("method", "") == method) out.push_back(m);
        return out;
    }

    std::shared_ptr<FakeStore> m_store = std::make_shared<FakeStore>();
    std::mutex m_mutex;
    std::vector<json> m_sent;
    Connection m_connection;
};

TEST_F(McpTasksProtocol, DiscoverOffersTheExtensionOnlyWithAStore) {
    const json discover = request("d", "server/discover", json::object(), json::object());
    EXPECT_EQ(answer(discover)["result"]["capabilities"]["extensions"],
              json({{"io.modelcontextprotocol/tasks", json::object()}}));
    std::vector<std::string> sent;
    Connection without({"sonata", "9.9", "", json::object()}, {slow_tool()},
                       [&](const std::string& m) { sent.push_back(m); });
    without.handle(discover.dump());
    ASSERT_EQ(sent.size(), 1U);
    EXPECT_FALSE(json::parse(sent[0])["result"]["capabilities"].contains("extensions"));
}

TEST_F(McpTasksProtocol, ACallDeclaringTasksIsAnsweredAtOnceWithTheTask) {
    m_store->set(working("t-1"));
    const json r = answer(request(1, "tools/call", {{"name", "work"}}, with_tasks()))["result"];
    EXPECT_EQ(r["resultType"], "task");
    EXPECT_EQ(r["taskId"], "t-1");
    EXPECT_EQ(r["status"], "working");
    EXPECT_EQ(r["statusMessage"], "running: step 1");
    EXPECT_EQ(r["createdAt"], "2026-12-05T07:00:00Z");
    EXPECT_EQ(r["lastUpdatedAt"], "2026-12-05T07:00:01Z");
    EXPECT_TRUE(r.contains("ttlMs") && r["ttlMs"].is_null()) << r.dump();
    EXPECT_EQ(r["pollIntervalMs"], 2000);
    EXPECT_EQ(r["_meta"]["com.example/note"], "started t-1");
    EXPECT_EQ(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "sonata");
    EXPECT_FALSE(r.contains("content"));
}

TEST_F(McpTasksProtocol, WithoutTheExtensionOrWithAnAnswerAtOnceTheCallIsComplete) {
    m_store->set(working("t-1"));
    json caps = with_tasks();
    caps.erase("extensions");
    json r = answer(request(1, "tools/call", {{"name", "work"}}, caps))["result"];
    EXPECT_EQ(r["resultType"], "complete");
    EXPECT_EQ(r["content"][0]["text"], "waited");
    r = answer(request(2, "tools/call", {{"name", "work"}, {"arguments", {{"refuse", "yes"}}}},
                       with_tasks()))["result"];
    EXPECT_EQ(r["resultType"], "complete");
    EXPECT_EQ(r["content"][0]["text"], "refused");
    EXPECT_EQ(r["isError"], true);
    // The handshake era has no tasks, whatever the client declared at initialize.
    m_connection.handle(
        R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}}}})");
    const json legacy = answer(json{
        {"jsonrpc", "2.0"}, {"id", 4}, {"method", "tools/call"}, {"params", {{"name", "work"}}}});
    EXPECT_EQ(legacy["result"]["content"][0]["text"], "waited");
    EXPECT_FALSE(legacy["result"].contains("resultType"));
}

TEST_F(McpTasksProtocol, GetCarriesWhatEachStatusNeeds) {
    TaskView asks = working("t-2");
    asks.status = TaskStatus::input_required;
    asks.input_requests = {{"approval-1", {{"method", "elicitation/create"}}}};
    TaskView done = working("t-3");
    done.status = TaskStatus::completed;
    done.result = {"the report", false, {{"state", "done"}}};
    TaskView gone = working("t-4");
    gone.status = TaskStatus::cancelled;
    gone.ttl_ms = 60000;
    for (const auto& t : {asks, done, gone})
        m_store->set(t);

    json r = answer(request(1, "tasks/get", {{"taskId", "t-2"}}, with_tasks()))["result"];
    EXPECT_EQ(r["resultType"], "complete");
    EXPECT_EQ(r["status"], "input_required");
    EXPECT_EQ(r["inputRequests"], asks.input_requests);
    EXPECT_EQ(m_store->last_client, with_tasks()) << "the store sees what the client takes";
    r = answer(request(2, "tasks/get", {{"taskId", "t-3"}}, with_tasks()))["result"];
    EXPECT_EQ(r["status"], "completed");
    EXPECT_EQ(r["result"]["content"][0]["text"], "the report");
    EXPECT_EQ(r["result"]["isError"], false);
    EXPECT_EQ(r["result"]["structuredContent"]["state"], "done");
    EXPECT_FALSE(r.contains("inputRequests"));
    r = answer(request(3, "tasks/get", {{"taskId", "t-4"}}, with_tasks()))["result"];
    EXPECT_EQ(r["status"], "cancelled");
    EXPECT_EQ(r["ttlMs"], 60000);
    EXPECT_FALSE(r.contains("result"));
}

TEST_F(McpTasksProtocol, UpdateAndCancelReachTheStore) {
    m_store->set(working("t-1"));
    const json answers = {{"approval-1", {{"action", "accept"}, {"content", {{"answer", "yes"}}}}}};
    json r = answer(
        request(1, "tasks/update", {{"taskId", "t-1"}, {"inputResponses", answers}}, with_tasks()));
    EXPECT_EQ(r["result"], json({{"resultType", "complete"},
                                 {"_meta",
                                  {{"io.modelcontextprotocol/serverInfo",
                                    {{"name", "sonata"}, {"version", "9.9"}}}}}}));
    r = answer(request(2, "tasks/cancel", {{"taskId", "t-1"}}, with_tasks()));
    EXPECT_EQ(r["result"]["resultType"], "complete");
    ASSERT_EQ(m_store->updates.size(), 1U);
    EXPECT_EQ(m_store->updates[0].second, answers);
    EXPECT_EQ(m_store->cancelled, std::vector<std::string>{"t-1"});
}

TEST_F(McpTasksProtocol, BadTaskRequestsAreErrorsAndTheServerKeepsServing) {
    m_store->set(working("t-1"));
    json caps = with_tasks();
    caps.erase("extensions");
    const auto code = [&](const json& message) {
        const json a = answer(message);
        return a.contains("error") ? a["error"]["code"].get<int>() : 0;
    };
    EXPECT_EQ(code(request(1, "tasks/get", {{"taskId", "t-1"}}, caps)), -32021)
        << "each request declares the extension itself";
    EXPECT_EQ(answer(request(2, "tasks/cancel", {{"taskId", "t-1"}}, caps))["error"]["data"],
              json({{"requiredCapabilities",
                     {{"extensions", {{"io.modelcontextprotocol/tasks", json::object()}}}}}}));
    EXPECT_EQ(code(request(3, "tasks/get", {{"taskId", "nope"}}, with_tasks())), -32602);
    EXPECT_EQ(code(request(4, "tasks/get", {{"taskId", 7}}, with_tasks())), -32602);
    EXPECT_EQ(code(request(5, "tasks/get", json::object(), with_tasks())), -32602);
    EXPECT_EQ(code(request(6, "tasks/update", {{"taskId", "t-1"}}, with_tasks())), -32602);
    EXPECT_EQ(code(request(7, "tasks/update", {{"taskId", "t-1"}, {"inputResponses", "yes"}},
                           with_tasks())),
              -32602);
    EXPECT_EQ(code(request(8, "tasks/cancel", {{"taskId", "nope"}}, with_tasks())), -32602);
    EXPECT_EQ(code(request(9, "tasks/result", {{"taskId", "t-1"}}, with_tasks())), -32601);
    EXPECT_EQ(code(request(10, "tasks/list", json::object(), with_tasks())), -32601);
    EXPECT_EQ(code(json{{"jsonrpc", "2.0"},
                        {"id", 11},
                        {"method", "tasks/get"},
                        {"params", {{"taskId", "t-1"}}}}),
              -32601)
        << "the handshake era has no tasks/ methods";
    EXPECT_TRUE(m_store->updates.empty());
    EXPECT_TRUE(m_store->cancelled.empty());
    EXPECT_EQ(
        answer(request(12, "tasks/get", {{"taskId", "t-1"}}, with_tasks()))["result"]["status"],
        "working");
}

TEST_F(McpTasksProtocol, ASubscriptionSendsEachChangeOfItsTasksOnce) {
    m_store->set(working("t-1"));
    m_connection.handle(request("sub", "subscriptions/listen",
                                {{"notifications", {{"taskIds", {"t-1", "nope"}}}}}, with_tasks())
                            .dump());
    const auto wait_for = [&](std::size_t count) {
        for (int i = 0; i < 100 && sent("notifications/tasks").size() < count; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return sent("notifications/tasks");
    };
    auto seen = wait_for(1);
    const auto acks = sent("notifications/subscriptions/acknowledged");
    ASSERT_EQ(acks.size(), 1U);
    EXPECT_EQ(acks[0]["params"]["notifications"]["taskIds"], json::array({"t-1"}))
        << "only the tasks the server knows";
    EXPECT_EQ(acks[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub");
    ASSERT_EQ(seen.size(), 1U);
    EXPECT_EQ(seen[0]["params"]["status"], "working");
    EXPECT_EQ(seen[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(sent("notifications/tasks").size(), 1U) << "no change, no notification";
    TaskView done = working("t-1");
    done.status = TaskStatus::completed;
    done.result = {"finished"};
    m_store->set(done);
    seen = wait_for(2);
    ASSERT_EQ(seen.size(), 2U);
    EXPECT_EQ(seen[1]["params"]["status"], "completed");
    EXPECT_EQ(seen[1]["params"]["result"]["content"][0]["text"], "finished");
    // The client ends the stream: no answer to the listen request.
    m_connection.handle(
        R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}})");
    m_connection.drain();
    std::lock_guard lock(m_mutex);
    for (const auto& m : m_sent)
        EXPECT_FALSE(m.contains("id") && m["id"] == "sub") << m.dump();
}

TEST_F(McpTasksProtocol, ASubscriptionToTasksNeedsTheExtension) {
    json caps = with_tasks();
    caps.erase("extensions");
    const json a = answer(
        request("sub", "subscriptions/listen", {{"notifications", {{"taskIds", {"t-1"}}}}}, caps));
    EXPECT_EQ(a["error"]["code"], -32021);
    EXPECT_EQ(answer(request("s2", "subscriptions/listen", json::object(),
                             with_tasks()))["error"]["code"],
              -32602);
    EXPECT_EQ(
        answer(request("s3", "subscriptions/listen", {{"notifications", {{"taskIds", "t-1"}}}},
                       with_tasks()))["error"]["code"],
        -32602);
}

} // namespace
} // namespace sonata::mcp
