// The scripted model server against a hostile client: an oversized header, more connections than
// file descriptors, half-sent and trickled requests, a script that is a FIFO, and bodies nested
// deep enough to overflow a recursive parser. Each hostile act may end its own connection or get
// an error status; afterwards the server must still answer a normal turn on a new connection.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/text.hpp"
#include "probes/model_server.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/model_server_fixture.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::probes {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::HttpClient;
using testing::HttpResponse;

constexpr const char* k_script =
    R"({"steps":[{"intent":"write_file","path":"a.txt","content":"A"}],"final":"ok"})";
constexpr std::size_t k_deep = 200'000; // Far past k_max_json_depth, and past any thread stack.

json claude_turn() {
    return {{"model", "claude-x"},
            {"max_tokens", 1000},
            {"stream", false},
            {"messages", {{{"role", "user"}, {"content", "go"}}}},
            {"tools", {{{"name", "Write"}, {"input_schema", {{"type", "object"}}}}}}};
}

// A first turn on a fresh connection.
HttpResponse send_first_turn(unsigned short port) {
    return HttpClient(port).send("POST", "/v1/messages", claude_turn().dump());
}

// The first content block of an answer to a first turn, or null.
json answer_of(const HttpResponse& response) {
    const auto body = json::parse(response.body, nullptr, false);
    if (response.status != 200 || !body.contains("content")) return nullptr;
    return body["content"][0];
}

// The first content block a fresh connection gets for a first turn, or null.
json first_answer(unsigned short port) { return answer_of(send_first_turn(port)); }

// The same from a server whose timeouts are 200 ms. The server's timers run in the test's own
// process: starved of the CPU between connecting and sending (a loaded machine), the test can see
// its connection closed by those timeouts before any answer, so a connection closed unanswered is
// tried again, a few times. A wrong answer is not.
json first_answer_within_short_timeouts(unsigned short port) {
    HttpResponse response;
    for (int attempt = 0; attempt < 5 && response.status == 0; ++attempt)
        response = send_first_turn(port);
    return answer_of(response);
}

json write_call(const std::string& workspace) {
    return {{"type", "tool_use"},
            {"id", "toolu_sonata_main_0"},
            {"name", "Write"},
            {"input", {{"file_path", workspace + "/a.txt"}, {"content", "A"}}}};
}

// `body` as text, with the JSON string "@DEEP@" replaced by arrays nested `depth` deep.
std::string with_deep_value(const json& body, std::size_t depth) {
    return replace_all(body.dump(), "\"@DEEP@\"",
                       std::string(depth, '[') + std::string(depth, ']'));
}

std::vector<std::string> kinds_in(const json& recording) {
    std::vector<std::string> kinds;
    for (const auto& request : recording["requests"])
        kinds.push_back(request["kind"]);
    return kinds;
}

// `sonata model-server` as a child process, under `wrapper` (prlimit) when given, with the
// recording written to record.json; stopped by cancellation (SIGTERM to its group), as a user's
// Ctrl-C would stop it.
class ServerProcess {
public:
    explicit ServerProcess(const testing::ScratchDir& dir, std::vector<std::string> wrapper = {})
        : m_dir(dir.path()), m_port(testing::free_port()) {
        testing::write_text(m_dir + "/script.json", k_script);
        m_request.argv = std::move(wrapper);
        for (const std::string arg : {SONATA_BIN, "model-server", "--script", "script.json",
                                      "--harness", "claude", "--record", "record.json", "--port"})
            m_request.argv.push_back(arg);
        m_request.argv.push_back(std::to_string(m_port));
        m_request.env = testing::hermetic_env(dir);
        m_request.cwd = m_dir;
        m_request.timeout = 120s;
        m_request.cancel = &m_cancel;
        m_runner = std::thread([this] {
            m_result = make_system_runner()->run(m_request);
            m_done = true;
        });
    }
    ~ServerProcess() {
        m_cancel = true;
        if (m_runner.joinable()) m_runner.join();
    }
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;

    unsigned short port() const { return m_port; }

    /// Waits until it answers GET /: false when it exited or 10 s passed first.
    bool ready() {
        for (int i = 0; i < 200 && !m_done; ++i) {
            if (HttpClient(m_port, 500ms).send("GET", "/").status == 200) return true;
            std::this_thread::sleep_for(50ms);
        }
        return false;
    }

    /// Stops it (if it is still running) and says how it ended.
    ProcessResult stop() {
        m_cancel = true;
        if (m_runner.joinable()) m_runner.join();
        if (!m_result) throw std::runtime_error(m_result.error().message);
        return *m_result;
    }

    /// The recording it wrote when it stopped.
    json recording() const { return json::parse(testing::read_text(m_dir + "/record.json")); }

private:
    std::string m_dir;
    unsigned short m_port;
    ProcessRequest m_request;
    std::atomic<bool> m_cancel{false};
    std::atomic<bool> m_done{false};
    Result<ProcessResult> m_result = fail(ExitCode::failure, "not run");
    std::thread m_runner;
};

// Exit code, signal and whether sonata ended it: {0, 0, true} is "alive until stopped, then
// stopped cleanly".
std::tuple<int, int, bool> ending(const ProcessResult& result) {
    return {result.exit_code, result.term_signal, result.cancelled};
}

TEST(ModelServerHostile, OversizedHeaderGets431AndTheServerKeepsServing) {
    testing::ScratchDir dir;
    ServerProcess server(dir);
    ASSERT_TRUE(server.ready());
    std::string many_fields; // 100 fields of 4 KiB: each is small, together they are not.
    for (int i = 0; i < 100; ++i)
        many_fields += "X-Field-" + std::to_string(i) + ": " + std::string(4096, 'f') + "\r\n";
    for (const auto& fields : {"X-Big: " + std::string(70'000, 'a') + "\r\n",
                               "X-Big: " + std::string(1U << 20U, 'a') + "\r\n", many_fields}) {
        const auto head = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields + "\r\n";
        const auto refused = HttpClient(server.port()).send_raw(head);
        EXPECT_EQ(std::tuple(refused.status, refused.keep_alive), std::tuple(431U, false))
            << fields.size() << " bytes of fields";
    }
    EXPECT_EQ(first_answer(server.port()), write_call(dir.path()));
    const auto result = server.stop();
    EXPECT_EQ(ending(result), std::tuple(0, 0, true)) << result.err;
    EXPECT_EQ(kinds_in(server.recording()), (std::vector<std::string>{"probe", "turn"}));
}

TEST(ModelServerHostile, AcceptSurvivesRunningOutOfFileDescriptors) {
    if (!std::filesystem::exists("/usr/bin/prlimit")) GTEST_SKIP() << "no /usr/bin/prlimit";
    testing::ScratchDir dir;
    ServerProcess server(dir, {"/usr/bin/prlimit", "--nofile=64"});
    ASSERT_TRUE(server.ready());
    std::vector<std::unique_ptr<HttpClient>> idle;
    for (int i = 0; i < 100; ++i)
        idle.push_back(std::make_unique<HttpClient>(server.port(), 2s));
    // The first connection the server has no descriptor for goes unanswered: the limit was hit.
    bool ran_out = false;
    for (auto& client : idle) {
        if (client->send("GET", "/").status != 200) {
            ran_out = true;
            break;
        }
    }
    ASSERT_TRUE(ran_out) << "64 descriptors held 100 connections: the test proves nothing";
    idle.clear(); // The descriptors come back once the server sees these close.

    bool answered = false;
    for (int i = 0; i < 20 && !answered; ++i) {
        answered = HttpClient(server.port(), 500ms).send("GET", "/").status == 200;
        if (!answered) std::this_thread::sleep_for(50ms);
    }
    EXPECT_TRUE(answered) << "the server stopped accepting after running out of descriptors";
    EXPECT_EQ(first_answer(server.port()), write_call(dir.path()));
    const auto result = server.stop();
    EXPECT_EQ(ending(result), std::tuple(0, 0, true)) << result.err;
}

struct Timed {
    Timed()
        : server(testing::script_of(k_script), testing::vocabulary_of("claude"), "/ws", [] {
              ModelServerOptions options;
              options.request_timeout = 200ms;
              options.idle_timeout = 200ms;
              return options;
          }()) {
        const auto bound = server.start();
        if (!bound) throw std::runtime_error(bound.error().message);
        port = *bound;
    }
    ModelServer server;
    unsigned short port = 0;
};

TEST(ModelServerHostile, HalfSentRequestsAndIdleConnectionsAreClosed) {
    Timed t;
    // Each client waits up to 10 s, far past the server's 200 ms, for the server to hang up.
    HttpClient silent(t.port, 10s);
    HttpClient half_header(t.port, 10s);
    ASSERT_TRUE(half_header.write_raw("POST /v1/messages HTTP/1.1\r\nHost: 127"));
    HttpClient half_body(t.port, 10s);
    half_body.send_header_only("/v1/messages", 1000);
    HttpClient kept(t.port, 10s);
    ASSERT_EQ(kept.send("GET", "/v1/models").status, 200U);
    EXPECT_TRUE(silent.closed_by_server());
    EXPECT_TRUE(half_header.closed_by_server());
    EXPECT_TRUE(half_body.closed_by_server());
    EXPECT_TRUE(kept.closed_by_server());
    EXPECT_EQ(first_answer_within_short_timeouts(t.port), write_call("/ws"));
}

TEST(ModelServerHostile, ATrickledHeaderIsCutOffThoughEveryByteComesInTime) {
    Timed t;
    HttpClient slow(t.port, 10s);
    ASSERT_TRUE(slow.write_raw("POST /v1/messages HTTP/1.1\r\nX-Slow: "));
    // One byte every 20 ms (well within any per-read timeout) for up to 10 s.
    bool cut_off = false;
    for (int i = 0; i < 500 && !cut_off; ++i) {
        std::this_thread::sleep_for(20ms);
        cut_off = !slow.write_raw("a");
    }
    EXPECT_TRUE(cut_off) << "a request trickled in for 10 s, 50 times its timeout";
    EXPECT_EQ(first_answer_within_short_timeouts(t.port), write_call("/ws"));
}

TEST(ModelServerHostile, DeeplyNestedBodiesGet400AndTheServerKeepsServing) {
    testing::ScratchDir dir;
    ServerProcess server(dir);
    ASSERT_TRUE(server.ready());
    const std::string message = "sonata model-server: request JSON nests deeper than 512 levels";

    auto claude = claude_turn();
    claude["messages"].push_back(
        {{"role", "assistant"},
         {"content",
          {{{"type", "tool_use"}, {"id", "toolu_1"}, {"name", "Write"}, {"input", "@DEEP@"}}}}});
    const auto refused =
        HttpClient(server.port()).send("POST", "/v1/messages", with_deep_value(claude, k_deep));
    EXPECT_EQ(
        std::tuple(refused.status, json::parse(refused.body, nullptr, false)),
        std::tuple(400U,
                   json({{"type", "error"},
                         {"error", {{"type", "invalid_request_error"}, {"message", message}}}})));

    const json chat = {
        {"model", "m"},
        {"messages", {{{"role", "user"}, {"content", "go"}}}},
        {"tools",
         {{{"type", "function"}, {"function", {{"name", "bash"}, {"parameters", "@DEEP@"}}}}}}};
    const auto deep_chat = with_deep_value(chat, k_deep);
    const auto refused_chat =
        HttpClient(server.port()).send("POST", "/v1/chat/completions", deep_chat);
    EXPECT_EQ(std::tuple(refused_chat.status, json::parse(refused_chat.body, nullptr, false)),
              std::tuple(400U, json({{"error",
                                      {{"message", message},
                                       {"type", "invalid_request_error"},
                                       {"param", nullptr},
                                       {"code", nullptr}}}})));

    EXPECT_EQ(first_answer(server.port()), write_call(dir.path()));
    const auto result = server.stop();
    EXPECT_EQ(ending(result), std::tuple(0, 0, true)) << result.err;
    EXPECT_EQ(kinds_in(server.recording()),
              (std::vector<std::string>{"probe", "bad-request", "bad-request", "turn"}));
}

TEST(ModelServerHostile, ScriptsThatAreNotSmallRegularJsonFilesAreRefused) {
    testing::ScratchDir dir;
    ASSERT_EQ(::mkfifo((dir.path() + "/fifo.json").c_str(), 0600), 0);
    testing::write_text(dir.path() + "/huge.json",
                        R"({"steps":[],"final":")" + std::string(5U << 20U, 'x') + "\"}");
    testing::write_text(
        dir.path() + "/deep.json",
        with_deep_value(
            {{"steps",
              {{{"intent", "call_tool"}, {"name", "Read"}, {"args", {{"deep", "@DEEP@"}}}}}}},
            k_deep));
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"fifo.json", "fifo.json: not a regular file"},
        {"huge.json", "huge.json: larger than 4194304 bytes"},
        {"deep.json", "deep.json: script: JSON nests deeper than 512 levels"},
    };
    for (const auto& [file, error] : cases) {
        ProcessRequest request;
        request.argv = {SONATA_BIN, "model-server", "--script", file};
        request.env = testing::hermetic_env(dir);
        request.cwd = dir.path();
        request.timeout = 10s;
        const auto result = make_system_runner()->run(request);
        ASSERT_TRUE(result) << result.error().message;
        EXPECT_EQ(std::tuple(result->exit_code, result->timed_out, result->err, result->out),
                  std::tuple(to_int(ExitCode::bad_data), false, "sonata: error: " + error + "\n",
                             std::string()));
    }
}

} // namespace
} // namespace sonata::probes
