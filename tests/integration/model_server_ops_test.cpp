// The scripted model server as a server: routes besides the model endpoints, big bodies, injected
// faults, concurrent clients, latency, prompt stop, and `sonata model-server` as a real process.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "probes/model_server.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/model_server_fixture.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::probes {
namespace {

using nlohmann::json;
using testing::HttpClient;
using testing::HttpResponse;
using Clock = std::chrono::steady_clock;

adapters::ToolVocabulary claude_vocabulary() {
    return {{"Write"}, "file_path", "content",        true, {"Bash"}, "command",
            {"Task"},  "prompt",    {"ExitPlanMode"}, {}};
}

Script two_steps() {
    auto script = parse_script(R"({"steps":[{"intent":"shell","command":"rm victim"},
                                           {"intent":"write_file","path":"a.txt","content":"A"}]})");
    if (!script) throw std::runtime_error(script.error().message);
    return *script;
}

json claude_turn(bool stream, std::string system = "You are Claude Code.") {
    return {{"model", "claude-x"},
            {"max_tokens", 1000},
            {"stream", stream},
            {"system", std::move(system)},
            {"messages", {{{"role", "user"}, {"content", "go"}}}},
            {"tools", {{{"name", "Bash"}, {"input_schema", {{"type", "object"}}}}}}};
}

json chat_turn(bool stream) {
    return {{"model", "m"},
            {"stream", stream},
            {"messages", {{{"role", "user"}, {"content", "go"}}}},
            {"tools",
             {{{"type", "function"},
               {"function", {{"name", "bash"}, {"parameters", {{"type", "object"}}}}}}}}};
}

struct Running {
    explicit Running(ModelServerOptions options = {})
        : server(two_steps(), claude_vocabulary(), "/ws", options) {
        const auto bound = server.start();
        if (!bound) throw std::runtime_error(bound.error().message);
        port = *bound;
    }
    ModelServer server;
    unsigned short port = 0;
};

double percentile(std::vector<double> values, double p) {
    std::sort(values.begin(), values.end());
    return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

TEST(ModelServerRoutes, ProbesModelListsCountsAndErrors) {
    Running r;
    HttpClient client(r.port);
    const auto head = client.send("HEAD", "/");
    EXPECT_EQ(head.status, 200U);
    EXPECT_TRUE(head.complete);
    EXPECT_EQ(client.send("HEAD", "/elsewhere").status, 404U);
    EXPECT_EQ(json::parse(client.send("GET", "/v1/models").body)["data"],
              json::array({{{"id", "sonata-probe-model"},
                            {"object", "model"},
                            {"type", "model"},
                            {"display_name", "sonata-probe-model"},
                            {"created", 0},
                            {"created_at", "1970-01-01T00:00:00Z"},
                            {"owned_by", "sonata"}}}));
    EXPECT_EQ(json::parse(client.send("GET", "/v1beta/models").body)["models"][0]["name"],
              "models/sonata-probe-model");
    EXPECT_EQ(json::parse(client.send("GET", "/v1/models/other").body)["id"], "other");
    const auto missing = client.send("POST", "/v2/complete", "{}");
    EXPECT_EQ(missing.status, 404U);
    EXPECT_EQ(json::parse(missing.body),
              json({{"type", "error"},
                    {"error",
                     {{"type", "not_found_error"},
                      {"code", 404},
                      {"message", "sonata model-server: no route for POST /v2/complete"}}}}));
    const auto garbage = client.send("POST", "/v1/messages", "{not json");
    EXPECT_EQ(garbage.status, 400U);
    EXPECT_EQ(json::parse(garbage.body)["error"]["type"], "invalid_request_error");
    const auto count = client.send("POST", "/v1/messages/count_tokens", std::string(400, ' '));
    EXPECT_EQ(json::parse(count.body), json({{"input_tokens", 100}}));
    const auto gemini_count =
        client.send("POST", "/v1beta/models/g:countTokens", std::string(40, ' '));
    EXPECT_EQ(json::parse(gemini_count.body), json({{"totalTokens", 10}}));
    std::vector<std::string> kinds;
    for (const auto& record : r.server.recording())
        kinds.push_back(record.kind);
    EXPECT_EQ(kinds,
              (std::vector<std::string>{"probe", "probe", "models", "models", "models", "not-found",
                                        "bad-request", "count-tokens", "count-tokens"}));
}

TEST(ModelServerLimits, TakesMebibytesOfPromptAndRefusesBeyondTheLimit) {
    ModelServerOptions options;
    options.body_limit = 16U << 20U;
    Running r(options);
    HttpClient client(r.port);
    const auto big = claude_turn(false, std::string(6U << 20U, 'p')).dump();
    const auto started = Clock::now();
    const auto response = client.send("POST", "/v1/messages", big);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    EXPECT_EQ(response.status, 200U);
    EXPECT_EQ(json::parse(response.body)["content"][0]["name"], "Bash");
    std::cout << "[ measure ] 6 MiB request answered in " << ms << " ms\n";
    ::testing::Test::RecordProperty("six_mib_request_ms", std::to_string(ms));

    HttpClient over(r.port);
    const auto refused =
        over.send("POST", "/v1/messages", claude_turn(false, std::string(17U << 20U, 'p')).dump());
    EXPECT_EQ(refused.status, 0U);
    EXPECT_FALSE(refused.complete);
}

TEST(ModelServerFaults, ErrorStatusAndTruncatedStreams) {
    Running r;
    r.server.inject_fault({1, FaultKind::http_status, 529});
    r.server.inject_fault({2, FaultKind::truncated_stream});
    r.server.inject_fault({4, FaultKind::truncated_stream});
    HttpClient client(r.port);
    EXPECT_EQ(client.send("HEAD", "/").status, 200U); // Not a model request: not counted.

    const auto overloaded = client.send("POST", "/v1/messages", claude_turn(true).dump());
    EXPECT_EQ(overloaded.status, 529U);
    EXPECT_TRUE(overloaded.complete);
    EXPECT_EQ(json::parse(overloaded.body),
              json({{"type", "error"},
                    {"error",
                     {{"type", "overloaded_error"},
                      {"message", "sonata model-server: injected fault"}}}}));

    const auto cut = client.send("POST", "/v1/messages", claude_turn(true).dump());
    EXPECT_EQ(cut.status, 200U);
    EXPECT_FALSE(cut.complete);
    EXPECT_NE(cut.body.find("event: message_start"), std::string::npos);
    EXPECT_EQ(cut.body.find("event: message_stop"), std::string::npos);
    EXPECT_FALSE(client.connected());

    HttpClient again(r.port);
    const auto whole = again.send("POST", "/v1/messages", claude_turn(true).dump());
    EXPECT_TRUE(whole.complete);
    EXPECT_EQ(testing::parse_sse(whole.body).size(), 6U);
    const auto cut_plain = again.send("POST", "/v1/chat/completions", chat_turn(false).dump());
    EXPECT_EQ(cut_plain.status, 200U);
    EXPECT_FALSE(cut_plain.complete);
    EXPECT_TRUE(json::parse(cut_plain.body, nullptr, false).is_discarded());

    std::vector<std::string> faults;
    for (const auto& record : r.server.recording())
        faults.push_back(record.fault);
    EXPECT_EQ(faults, (std::vector<std::string>{"", "http-status", "truncated-stream", "",
                                                "truncated-stream"}));
}

TEST(ModelServerConcurrency, ManyClientsAtOnceEachGetTheirOwnAnswer) {
    Running r;
    constexpr int k_clients = 8;
    constexpr int k_requests = 25;
    std::vector<std::thread> threads;
    std::vector<int> good(k_clients, 0);
    for (int c = 0; c < k_clients; ++c) {
        threads.emplace_back([&, c] {
            HttpClient client(r.port);
            for (int i = 0; i < k_requests; ++i) {
                // Odd clients are one step further on: their history holds a past Bash call.
                json body = c % 2 ? chat_turn(false) : claude_turn(false);
                std::string expected = c % 2 ? "write" : "Bash";
                if (c % 2) {
                    body["messages"].push_back(
                        {{"role", "assistant"},
                         {"tool_calls",
                          {{{"id", "call_1"},
                            {"type", "function"},
                            {"function", {{"name", "bash"}, {"arguments", "{}"}}}}}}});
                    body["messages"].push_back(
                        {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "no"}});
                    const auto response = client.send("POST", "/v1/chat/completions", body.dump());
                    const auto call =
                        json::parse(response.body)["choices"][0]["message"]["tool_calls"][0];
                    if (call["function"]["name"] == "Write" && call["id"] == "call_sonata_main_1")
                        ++good[c];
                } else {
                    const auto response = client.send("POST", "/v1/messages", body.dump());
                    const auto call = json::parse(response.body)["content"][0];
                    if (call["name"] == expected && call["id"] == "toolu_sonata_main_0") ++good[c];
                }
            }
        });
    }
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(good, std::vector<int>(k_clients, k_requests));
    const auto records = r.server.recording();
    ASSERT_EQ(records.size(), static_cast<std::size_t>(k_clients * k_requests));
    for (std::size_t i = 0; i < records.size(); ++i)
        EXPECT_EQ(records[i].index, i + 1);
    EXPECT_EQ(r.server.tool_results(),
              (std::vector<ToolResultRecord>{{"call_1", "", "no", std::nullopt, ""}}));
}

TEST(ModelServerLatency, PerRequestOverKeepAliveAndFreshConnections) {
    Running r;
    const auto body = claude_turn(true).dump();
    std::vector<double> kept;
    HttpClient client(r.port);
    for (int i = 0; i < 300; ++i) {
        const auto started = Clock::now();
        const auto response = client.send("POST", "/v1/messages", body);
        kept.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
        ASSERT_TRUE(response.complete);
    }
    std::vector<double> fresh;
    for (int i = 0; i < 100; ++i) {
        const auto started = Clock::now();
        HttpClient once(r.port);
        ASSERT_TRUE(once.send("POST", "/v1/messages", body).complete);
        fresh.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
    }
    std::vector<double> handling;
    for (const auto& record : r.server.recording())
        handling.push_back(record.handling_ms);
    std::cout << "[ measure ] streaming turn, keep-alive: median " << percentile(kept, 0.5)
              << " ms, p95 " << percentile(kept, 0.95) << " ms; new connection: median "
              << percentile(fresh, 0.5) << " ms, p95 " << percentile(fresh, 0.95)
              << " ms; in-server handling median " << percentile(handling, 0.5) << " ms\n";
    ::testing::Test::RecordProperty("keep_alive_median_ms", std::to_string(percentile(kept, 0.5)));
    ::testing::Test::RecordProperty("new_connection_median_ms",
                                    std::to_string(percentile(fresh, 0.5)));
    EXPECT_LT(percentile(kept, 0.5), 20.0); // No Nagle stalls: those cost 40 ms per request.
    EXPECT_LT(percentile(fresh, 0.5), 20.0);
}

TEST(ModelServerLifecycle, StopIsPromptWithConnectionsOpenAndFreesThePort) {
    auto r = std::make_unique<Running>();
    HttpClient idle(r->port);
    ASSERT_TRUE(idle.send("GET", "/v1/models").complete);
    HttpClient half(r->port);
    half.send_header_only("/v1/messages", 1000);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));

    ModelServer clash(two_steps(), claude_vocabulary(), "/ws", ModelServerOptions{r->port});
    const auto refused = clash.start();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message.rfind(
                  "model server: cannot listen on 127.0.0.1:" + std::to_string(r->port), 0),
              0U);

    const auto started = Clock::now();
    r->server.stop();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    std::cout << "[ measure ] stop() with two open connections: " << ms << " ms\n";
    EXPECT_LT(ms, 500.0);
    EXPECT_FALSE(
        HttpClient(r->port, std::chrono::milliseconds(500)).send("GET", "/v1/models").complete);
    r->server.stop(); // Idempotent.
}

// --- `sonata model-server` ---------------------------------------------------------------------

TEST(ModelServerCommand, RejectsABadScriptWithItsPlace) {
    testing::ScratchDir dir;
    testing::write_text(dir.path() + "/bad.json", R"({"steps":[{"intent":"shell"}]})");
    const auto run = testing::run_sonata({"model-server", "--script", dir.path() + "/bad.json"},
                                         testing::hermetic_env(dir), dir.path());
    EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data));
    EXPECT_EQ(run.err, "sonata: error: " + dir.path() +
                           "/bad.json: script: steps[0]: missing \"command\"\n");
    EXPECT_EQ(run.out, "");
    testing::write_text(dir.path() + "/good.json", R"({"steps":[]})");
    const auto unknown =
        testing::run_sonata({"model-server", "--script", "good.json", "--harness", "claud"},
                            testing::hermetic_env(dir), dir.path());
    EXPECT_EQ(unknown.exit_code, to_int(ExitCode::usage));
    EXPECT_NE(unknown.err.find("unknown harness 'claud' (did you mean 'claude'?)"),
              std::string::npos)
        << unknown.err;
}

// A FIFO at the --record path would block the exit forever if it were opened in place.
TEST(ModelServerCommand, ARecordPathThatIsAFifoIsReplacedNotWaitedOn) {
    testing::ScratchDir dir;
    testing::write_text(dir.path() + "/script.json", R"({"steps":[],"final":"ok"})");
    const std::string fifo = dir.path() + "/record.json";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    ProcessRequest request;
    request.argv = {SONATA_BIN, "model-server",
                    "--script", "script.json",
                    "--port",   std::to_string(testing::free_port()),
                    "--record", fifo};
    request.env = testing::hermetic_env(dir);
    request.cwd = dir.path();
    request.timeout = std::chrono::milliseconds(1500); // then SIGTERM, and it must exit at once
    request.kill_grace = std::chrono::milliseconds(3000);
    const auto result = make_system_runner()->run(request);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->exit_code, 0) << result->err;
    EXPECT_TRUE(std::filesystem::is_regular_file(fifo));
    EXPECT_EQ(json::parse(testing::read_text(fifo))["requests"], json::array());
}

TEST(ModelServerCommand, ServesUntilTerminatedThenWritesTheRecording) {
    testing::ScratchDir dir;
    testing::write_text(
        dir.path() + "/script.json",
        R"({"steps":[{"intent":"write_file","path":"a.txt","content":"A"}],"final":"ok"})");
    const auto port = testing::free_port();
    ProcessRequest request;
    request.argv = {SONATA_BIN,  "model-server",
                    "--script",  "script.json",
                    "--port",    std::to_string(port),
                    "--harness", "claude",
                    "--record",  dir.path() + "/record.json"};
    request.env = testing::hermetic_env(dir);
    request.cwd = dir.path();
    request.timeout = std::chrono::milliseconds(4000); // Then SIGTERM: the way to stop it.
    Result<ProcessResult> result = fail(ExitCode::failure, "not run");
    std::thread runner([&] { result = make_system_runner()->run(request); });

    HttpResponse response;
    for (int i = 0; i < 150 && !response.complete; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        response = HttpClient(port, std::chrono::milliseconds(500))
                       .send("POST", "/v1/messages", claude_turn(false).dump());
    }
    runner.join();
    ASSERT_TRUE(response.complete);
    EXPECT_EQ(json::parse(response.body)["content"][0]["input"],
              json({{"file_path", dir.path() + "/a.txt"}, {"content", "A"}}));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(result->timed_out);
    EXPECT_EQ(result->exit_code, 0) << result->err;
    EXPECT_EQ(result->out,
              "sonata model-server listening on http://127.0.0.1:" + std::to_string(port) + "\n");
    const auto recording = json::parse(testing::read_text(dir.path() + "/record.json"));
    ASSERT_EQ(recording["requests"].size(), 1U);
    EXPECT_EQ(recording["requests"][0]["tool_calls"],
              json::array({{{"call_id", "toolu_sonata_main_0"},
                            {"tool", "Write"},
                            {"arguments",
                             json({{"content", "A"}, {"file_path", dir.path() + "/a.txt"}}).dump()},
                            {"offered", false}}}));
    EXPECT_EQ(recording["tool_results"], json::array());
}

} // namespace
} // namespace sonata::probes
