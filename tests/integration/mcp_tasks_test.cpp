// sonata's runs as MCP tasks, through real `sonata mcp` processes and the stand-in harness: a
// dispatch from a client that takes tasks comes back at once as a task whose id is the run's, and
// another server process serves it to its end; a run paused at an approval card is
// input_required with the card as a yes/no form, and the form's answer approves it; tasks/cancel
// cancels the run and leaves nothing running; a client without tasks waits as before and always
// learns the run's id.
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/dispatch_fixture.hpp"
#include "tests/support/mcp_session.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::McpSession;

json with_tasks() {
    return {{"elicitation", {{"form", json::object()}}},
            {"extensions", {{"io.modelcontextprotocol/tasks", json::object()}}}};
}

/// A 2026-07-28 request whose client declares `capabilities`.
json modern(const json& id, const std::string& method, json params,
            const json& capabilities = with_tasks()) {
    params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                       {"io.modelcontextprotocol/clientCapabilities", capabilities}};
    return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

json dispatch_call(const json& id, const json& args, const json& capabilities = with_tasks()) {
    return modern(id, "tools/call", {{"name", "dispatch"}, {"arguments", args}}, capabilities);
}

class McpTasks : public testing::DispatchFixture {
protected:
    void SetUp() override { use_stand_in({"pi", "reasonix"}, SONATA_DISPATCH_HARNESS); }

    /// tasks/get of `id` from `server` until `done` holds for its result (at most 30 s).
    json poll(McpSession& server, const std::string& id,
              const std::function<bool(const json&)>& done) {
        json task;
        for (int i = 0; i < 150; ++i) {
            const json answer = server.request(modern(++m_next, "tasks/get", {{"taskId", id}}));
            task = answer.value("result", json());
            if (!task.is_object() || done(task)) return task;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        ADD_FAILURE() << "the task never got there: " << task.dump();
        return task;
    }
    static bool status_is(const json& task, const char* status) {
        return task.value("status", "") == status;
    }

    /// Starts `args` as a task in a server of its own, which then goes away; the task's id.
    std::string start_task(const json& args) {
        McpSession server(m_env, m_project);
        const json r = server.request(dispatch_call(1, args)).value("result", json());
        EXPECT_EQ(r.value("resultType", ""), "task") << r.dump();
        return r.value("taskId", "");
    }

    int m_next = 100;
};

TEST_F(McpTasks, ADispatchAsATaskIsPolledToItsReportFromAnotherServer) {
    std::string id;
    {
        McpSession first(m_env, m_project);
        const json r = first.request(dispatch_call(
            1,
            {{"harness", "pi"}, {"role", "review"}, {"task", "scenario: hold TASK-1"}}))["result"];
        ASSERT_EQ(r["resultType"], "task") << r.dump();
        id = r["taskId"];
        EXPECT_TRUE(fs::is_directory(run_dir(id))) << "the task's id is its run's";
        EXPECT_NE(r["status"], "failed");
        EXPECT_FALSE(r["createdAt"].get<std::string>().empty());
        const std::string note = r["_meta"]["com.anthropic/agent-task"]["modelImmediateResponse"];
        EXPECT_NE(note.find("run " + id + ": pi@1.0.0 in plan mode"), std::string::npos) << note;
    }
    McpSession second(m_env, m_project);
    second.send(
        modern("sub", "subscriptions/listen", {{"notifications", {{"taskIds", {id}}}}}).dump());
    const json task = poll(second, id, [](const json& t) { return !status_is(t, "working"); });
    ASSERT_EQ(task["status"], "completed") << task.dump();
    const json& result = task["result"];
    EXPECT_EQ(result["isError"], false);
    const std::string text = result["content"][0]["text"];
    EXPECT_NE(text.find("final answer TASK-1"), std::string::npos) << text;
    EXPECT_NE(text.find("run " + id + ": pi@1.0.0"), std::string::npos) << text;
    EXPECT_EQ(result["structuredContent"]["run_id"], id);
    EXPECT_EQ(result["structuredContent"]["state"], "done");
    EXPECT_EQ(result["structuredContent"]["text"], text);
    EXPECT_EQ(status(id).at("state"), "done");
    // The subscription saw the same end, tagged with its own id.
    bool told = false;
    for (int i = 0; i < 50 && !told; ++i) {
        for (const auto& m : second.received())
            told =
                told || (m.value("method", "") == "notifications/tasks" &&
                         m["params"]["status"] == "completed" &&
                         m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub");
        if (!told) second.answer_line("never", std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(told) << second.raw();
    second.close();
    expect_nothing_left();
}

TEST_F(McpTasks, APausedRunIsInputRequiredAndItsFormApprovesIt) {
    const std::string id = start_task(
        {{"harness", "reasonix"}, {"role", "code"}, {"task", "scenario: tui-approve T-7"}});
    ASSERT_FALSE(id.empty());
    McpSession server(m_env, m_project);
    json task = poll(server, id, [](const json& t) { return !status_is(t, "working"); });
    ASSERT_EQ(task["status"], "input_required") << task.dump();
    ASSERT_TRUE(task["inputRequests"].contains("approval-1")) << task.dump();
    const json& form = task["inputRequests"]["approval-1"];
    EXPECT_EQ(form["method"], "elicitation/create");
    EXPECT_EQ(form["params"]["mode"], "form");
    EXPECT_NE(form["params"]["message"].get<std::string>().find(
                  "Allow command `touch approved.txt`? [y/N]"),
              std::string::npos)
        << form.dump();
    EXPECT_EQ(form["params"]["requestedSchema"]["properties"]["answer"]["enum"],
              json::array({"yes", "no"}));
    // A client that takes no forms sees the card in the status and the approve tool to answer.
    json plain = with_tasks();
    plain.erase("elicitation");
    const json other = server.request(modern(2, "tasks/get", {{"taskId", id}}, plain))["result"];
    EXPECT_EQ(other["status"], "working");
    EXPECT_NE(other["statusMessage"].get<std::string>().find("Answer with the approve tool"),
              std::string::npos)
        << other.dump();
    EXPECT_FALSE(fs::exists(m_project + "/approved.txt")) << "nothing was approved yet";

    const json yes = {{"action", "accept"}, {"content", {{"answer", "yes"}}}};
    const json ack = server.request(
        modern(3, "tasks/update", {{"taskId", id}, {"inputResponses", {{"approval-1", yes}}}}));
    ASSERT_TRUE(ack.contains("result")) << ack.dump();
    task = poll(server, id, [](const json& t) {
        return status_is(t, "completed") || status_is(t, "cancelled");
    });
    ASSERT_EQ(task["status"], "completed") << task.dump();
    EXPECT_EQ(task["result"]["isError"], false);
    EXPECT_TRUE(fs::exists(m_project + "/approved.txt"));
    const json r = status(id);
    ASSERT_EQ(r.at("approvals").size(), 1U) << r.dump();
    EXPECT_EQ(r.at("approvals")[0].at("answer"), "yes");
    server.close();
    expect_nothing_left(r.at("tmux_server_pid").get<int>());
}

TEST_F(McpTasks, ADeclinedFormAnswersNo) {
    const std::string id = start_task(
        {{"harness", "reasonix"}, {"role", "code"}, {"task", "scenario: tui-approve T-8"}});
    McpSession server(m_env, m_project);
    poll(server, id, [](const json& t) { return !status_is(t, "working"); });
    server.request(
        modern(2, "tasks/update",
               {{"taskId", id}, {"inputResponses", {{"approval-1", {{"action", "decline"}}}}}}));
    const json task =
        poll(server, id, [](const json& t) { return !status_is(t, "input_required"); });
    const json r = status(id);
    ASSERT_EQ(r.at("approvals").size(), 1U) << r.dump() << task.dump();
    EXPECT_EQ(r.at("approvals")[0].at("answer"), "no");
    EXPECT_FALSE(fs::exists(m_project + "/approved.txt"));
    sonata({"cancel", id});
    server.close();
    expect_nothing_left(r.at("tmux_server_pid").get<int>());
}

TEST_F(McpTasks, CancellingATaskCancelsItsRunAndLeavesNothing) {
    const std::string id =
        start_task({{"harness", "pi"}, {"role", "review"}, {"task", "scenario: hang"}});
    ASSERT_FALSE(id.empty());
    McpSession server(m_env, m_project);
    const json ack = server.request(modern(2, "tasks/cancel", {{"taskId", id}}));
    EXPECT_EQ(ack["result"]["resultType"], "complete") << ack.dump();
    const json task = poll(server, id, [](const json& t) { return !status_is(t, "working"); });
    EXPECT_EQ(task["status"], "cancelled") << task.dump();
    EXPECT_EQ(status(id).at("state"), "cancelled");
    server.close();
    expect_nothing_left();
}

TEST_F(McpTasks, AFailedRunIsACompletedTaskWhoseResultIsAnError) {
    const std::string id =
        start_task({{"harness", "pi"}, {"role", "review"}, {"task", "scenario: fail"}});
    ASSERT_FALSE(id.empty());
    McpSession server(m_env, m_project);
    const json task = poll(server, id, [](const json& t) { return !status_is(t, "working"); });
    ASSERT_EQ(task["status"], "completed") << "failed is kept for protocol errors: " << task.dump();
    EXPECT_EQ(task["result"]["isError"], true);
    EXPECT_EQ(task["result"]["structuredContent"]["state"], "failed");
    const std::string text = task["result"]["content"][0]["text"];
    EXPECT_NE(text.find("run " + id + ": pi@1.0.0"), std::string::npos) << text;
    EXPECT_NE(text.find("Run " + id + " ended failed: exited 3"), std::string::npos) << text;
    server.close();
    expect_nothing_left();
}

TEST_F(McpTasks, UnknownAndHostileTaskIdsAreInvalidParams) {
    McpSession server(m_env, m_project);
    int id = 1;
    for (const std::string task : {"nope", "../../etc", "20261205-000000000-abcdef", "a/b"}) {
        const json answer = server.request(modern(++id, "tasks/get", {{"taskId", task}}));
        EXPECT_EQ(answer["error"]["code"], -32602) << task << ": " << answer.dump();
    }
    const json cancel = server.request(modern(++id, "tasks/cancel", {{"taskId", "../x"}}));
    EXPECT_EQ(cancel["error"]["code"], -32602) << cancel.dump();
    const json discover = server.request(modern(++id, "server/discover", json::object()));
    EXPECT_EQ(discover["result"]["capabilities"]["extensions"],
              json({{"io.modelcontextprotocol/tasks", json::object()}}));
}

TEST_F(McpTasks, AClientWithoutTasksWaitsAndAlwaysLearnsTheRunsId) {
    McpSession server(m_env, m_project);
    json caps = with_tasks();
    caps.erase("extensions");
    const json r = server.request(dispatch_call(
        1,
        {{"harness", "pi"}, {"role", "review"}, {"task", "scenario: hang"}, {"window_seconds", 1}},
        caps))["result"];
    ASSERT_EQ(r["resultType"], "complete") << r.dump();
    const std::string id = r["structuredContent"]["run_id"];
    const std::string text = r["content"][0]["text"];
    EXPECT_NE(text.find("run " + id + ": pi@1.0.0"), std::string::npos) << text;
    EXPECT_NE(text.find("continue with the wait tool: {\"id\": \"" + id + "\"}"), std::string::npos)
        << text;
    EXPECT_EQ(r["structuredContent"]["next"], "wait");
    const json cancelled = server.request(
        modern(2, "tools/call", {{"name", "cancel"}, {"arguments", {{"id", id}}}}, caps))["result"];
    EXPECT_EQ(cancelled["structuredContent"]["state"], "cancelled") << cancelled.dump();
    server.close();
    expect_nothing_left();
}

TEST_F(McpTasks, ACancelAsSoonAsTheRunStartsEndsItCancelledNeverLost) {
    // The server's cancel signals the run's supervisor while it is still starting: the signal must
    // reach the supervisor itself (not its watchdog) once it handles it, and end the run cancelled
    // (a cancel that came too early once killed it, and the run read `lost`).
    McpSession server(m_env, m_project);
    json caps = with_tasks();
    caps.erase("extensions");
    for (int i = 0; i < 10; ++i) {
        const json r = server.request(dispatch_call(2 * i + 1,
                                                    {{"harness", "pi"},
                                                     {"role", "review"},
                                                     {"task", "scenario: hang"},
                                                     {"window_seconds", 0}},
                                                    caps))["result"];
        const std::string id = r["structuredContent"]["run_id"];
        const json cancelled = server.request(
            modern(2 * i + 2, "tools/call", {{"name", "cancel"}, {"arguments", {{"id", id}}}},
                   caps))["result"];
        ASSERT_EQ(cancelled["structuredContent"]["state"], "cancelled")
            << "attempt " << i << ": " << cancelled.dump();
    }
    server.close();
    expect_nothing_left();
}

TEST_F(McpTasks, DoctorSaysWhichProtocolAndWhetherTasksTheLastClientTook) {
    EXPECT_NE(sonata({"doctor"}).out.find("ok       mcp client: no client has called"),
              std::string::npos);
    {
        McpSession server(m_env, m_project);
        json call = modern(1, "tools/call", {{"name", "runs"}});
        call["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] = {{"name", "claude-code"},
                                                                         {"version", "2.1.332"}};
        ASSERT_TRUE(server.request(call).contains("result"));
    }
    std::string out = sonata({"doctor"}).out;
    EXPECT_NE(out.find("mcp client: claude-code 2.1.332 called `sonata mcp` here at "),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("with MCP 2026-07-28 and tasks: a dispatch runs as a task"),
              std::string::npos)
        << out;
    {
        McpSession server(m_env, m_project);
        server.send(
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"other","version":"1"}}})");
        ASSERT_TRUE(server
                        .request({{"jsonrpc", "2.0"},
                                  {"id", 2},
                                  {"method", "tools/call"},
                                  {"params", {{"name", "runs"}}}})
                        .contains("result"));
    }
    out = sonata({"doctor"}).out;
    EXPECT_NE(out.find("other 1 called `sonata mcp` here at "), std::string::npos) << out;
    EXPECT_NE(out.find("with MCP 2025-06-18 without tasks"), std::string::npos) << out;
    // A record that is not one is said to be so, and doctor goes on.
    testing::write_text(m_project + "/.sonata/mcp-client.json", R"({"protocol": 7})");
    out = sonata({"doctor"}).out;
    EXPECT_NE(out.find("warning  mcp client: " + m_project +
                       "/.sonata/mcp-client.json: not a client record"),
              std::string::npos)
        << out;
}

} // namespace
} // namespace sonata
