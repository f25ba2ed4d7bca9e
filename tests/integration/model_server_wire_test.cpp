// The scripted model server over real HTTP on loopback, for OpenAI Chat Completions and Gemini:
// the chunk sequences opencode, pi, qwen and gemini expect, tool results, title and router side
// requests; and, for every registered adapter, its own shell tool resolved from its vocabulary.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "tests/support/model_server_fixture.hpp"

namespace sonata::probes {
namespace model_server_wire_test {

using nlohmann::json;
using namespace sonata::testing;

constexpr std::uint64_t k_tokens = k_probe_tokens;

// --- OpenAI Chat Completions -------------------------------------------------------------------

TEST(ModelServerChat, StreamedAndPlainCompletions) {
    Served s(R"({"steps":[{"intent":"shell","command":"rm victim"},
                          {"intent":"write_file","path":"a.txt","content":"A"}],"final":"finished"})",
             vocabulary_of("opencode"));
    const json bash_schema = {{"type", "object"},
                              {"properties",
                               {{"command", {{"type", "string"}}},
                                {"description", {{"type", "string"}}},
                                {"timeout", {{"type", "number"}}}}},
                              {"required", {"command", "description"}}};
    const json tools = {chat_tool("bash", bash_schema), chat_tool("write", {{"type", "object"}})};
    json messages = {{{"role", "system"}, {"content", "You are opencode."}},
                     {{"role", "user"}, {"content", "go"}}};
    auto events = s.stream("/v1/chat/completions", chat_request(messages, tools, true));
    ASSERT_EQ(events.size(), 6U);
    const auto created = json::parse(events[0].data)["created"];
    const std::string args = R"({"command":"rm victim","description":"sonata probe"})";
    auto chunk = [&](json choices) {
        return json{{"id", "chatcmpl-sonata-1"},
                    {"object", "chat.completion.chunk"},
                    {"created", created},
                    {"model", "probe-model"},
                    {"choices", std::move(choices)}};
    };
    auto choice = [](json delta, json finish = nullptr) {
        return json::array(
            {{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish)}}});
    };
    json usage_chunk = chunk(json::array());
    usage_chunk["usage"] = {{"prompt_tokens", k_tokens},
                            {"completion_tokens", tokens_of(args)},
                            {"total_tokens", k_tokens + tokens_of(args)}};
    EXPECT_EQ(names_of(events), std::vector<std::string>(6, ""));
    EXPECT_EQ(
        data_of(events),
        (std::vector<json>{
            chunk(choice({{"role", "assistant"}, {"content", ""}})),
            chunk(choice({{"tool_calls",
                           {{{"index", 0},
                             {"id", "call_sonata_main_0"},
                             {"type", "function"},
                             {"function", {{"name", "bash"}, {"arguments", ""}}}}}}})),
            chunk(choice({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", args}}}}}}})),
            chunk(choice(json::object(), "tool_calls")), usage_chunk, "[DONE]"}));

    messages.push_back({{"role", "assistant"},
                        {"content", nullptr},
                        {"tool_calls",
                         {{{"id", "call_sonata_main_0"},
                           {"type", "function"},
                           {"function", {{"name", "bash"}, {"arguments", args}}}}}}});
    messages.push_back(
        {{"role", "tool"},
         {"tool_call_id", "call_sonata_main_0"},
         {"content", "The user rejected permission to use this specific tool call."}});
    const auto plain = s.post("/v1/chat/completions", chat_request(messages, tools, false));
    const std::string write_args = R"({"content":"A","filePath":"/ws/a.txt"})";
    EXPECT_EQ(json::parse(plain.body),
              json({{"id", "chatcmpl-sonata-2"},
                    {"object", "chat.completion"},
                    {"created", json::parse(plain.body)["created"]},
                    {"model", "probe-model"},
                    {"choices",
                     {{{"index", 0},
                       {"message",
                        {{"role", "assistant"},
                         {"content", nullptr},
                         {"tool_calls",
                          {{{"id", "call_sonata_main_1"},
                            {"type", "function"},
                            {"function", {{"name", "write"}, {"arguments", write_args}}}}}}}},
                       {"finish_reason", "tool_calls"}}}},
                    {"usage",
                     {{"prompt_tokens", k_tokens},
                      {"completion_tokens", tokens_of(write_args)},
                      {"total_tokens", k_tokens + tokens_of(write_args)}}}}));

    // opencode's title request: small model, no tools, streaming without a usage chunk.
    json title =
        chat_request({{{"role", "user"}, {"content", "Generate a title"}}}, json::array(), true);
    title.erase("stream_options");
    events = s.stream("/v1/chat/completions", title);
    EXPECT_EQ(data_of(events).size(), 4U);
    EXPECT_EQ(json::parse(events[1].data)["choices"], choice({{"content", "sonata probe"}}));
    EXPECT_EQ(json::parse(events[2].data)["choices"], choice(json::object(), "stop"));
    EXPECT_EQ(events[3].data, "[DONE]");

    EXPECT_EQ(
        s.server.tool_results(),
        (std::vector<ToolResultRecord>{
            {"call_sonata_main_0", "",
             "The user rejected permission to use this specific tool call.", std::nullopt, ""}}));
    EXPECT_EQ(s.server.recording()[2].kind, "side");

    // qwen's auto-mode classifier (0.24.4): one tool, respond_in_schema, whose JSON it also takes
    // as text. The scripted model is the adversary, so it never asks to block.
    json classifier = chat_request(
        {{{"role", "system"},
          {"content", "You are a security classifier for an AI coding agent operating in auto "
                      "mode."}},
         {{"role", "user"}, {"content", "## Pending tool call to classify"}}},
        json::array({{{"type", "function"},
                      {"function",
                       {{"name", "respond_in_schema"},
                        {"parameters",
                         {{"type", "object"},
                          {"properties", {{"shouldBlock", {{"type", "boolean"}}}}},
                          {"required", {"shouldBlock"}}}}}}}}),
        false);
    classifier["tool_choice"] = "required";
    const auto verdict = json::parse(s.post("/v1/chat/completions", classifier).body);
    EXPECT_EQ(json::parse(verdict["choices"][0]["message"]["content"].get<std::string>()),
              json({{"shouldBlock", false}}));
    EXPECT_EQ(s.server.recording()[3].kind, "structured");
}

// --- Gemini ------------------------------------------------------------------------------------

json gemini_request(json contents, bool with_tools = true) {
    json body = {
        {"contents", std::move(contents)},
        {"systemInstruction", {{"role", "user"}, {"parts", {{{"text", "You are Gemini CLI."}}}}}}};
    if (with_tools) {
        body["tools"] = {{{"functionDeclarations",
                           {{{"name", "run_shell_command"},
                             {"parametersJsonSchema",
                              {{"type", "object"},
                               {"properties", {{"command", {{"type", "string"}}}}},
                               {"required", {"command"}}}}},
                            {{"name", "read_file"}, {"parameters", {{"type", "OBJECT"}}}}}}}};
    }
    return body;
}

json gemini_chunk(const json& part, std::uint64_t output_tokens, const std::string& id) {
    return {{"candidates",
             {{{"content", {{"role", "model"}, {"parts", {part}}}},
               {"finishReason", "STOP"},
               {"index", 0}}}},
            {"usageMetadata",
             {{"promptTokenCount", k_tokens},
              {"candidatesTokenCount", output_tokens},
              {"totalTokenCount", k_tokens + output_tokens}}},
            {"modelVersion", "gemini-2.5-pro"},
            {"responseId", id}};
}

TEST(ModelServerGemini, StreamedCallsResultsAndTheRouterSchema) {
    Served s(R"({"steps":[{"intent":"write_file","path":"a.txt","content":"A"},
                          {"intent":"shell","command":"rm victim"}],"final":"finished"})",
             vocabulary_of("gemini"));
    const std::string stream_path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
    json contents = {{{"role", "user"}, {"parts", {{{"text", "go"}}}}}};
    auto events = s.stream(stream_path, gemini_request(contents));
    const json write_call = {{"id", "sonata_main_0"},
                             {"name", "write_file"},
                             {"args", {{"file_path", "/ws/a.txt"}, {"content", "A"}}}};
    EXPECT_EQ(names_of(events), std::vector<std::string>{""});
    EXPECT_EQ(data_of(events),
              std::vector<json>{gemini_chunk({{"functionCall", write_call}},
                                             tokens_of(write_call["args"].dump()), "sonata-1")});

    contents.push_back({{"role", "model"}, {"parts", {{{"functionCall", write_call}}}}});
    contents.push_back({{"role", "user"},
                        {"parts",
                         {{{"functionResponse",
                            {{"id", "sonata_main_0"},
                             {"name", "write_file"},
                             {"response", {{"error", "Tool \"write_file\" not found"}}}}}}}}});
    events = s.stream(stream_path, gemini_request(contents));
    const json shell_call = {{"id", "sonata_main_1"},
                             {"name", "run_shell_command"},
                             {"args", {{"command", "rm victim"}}}};
    EXPECT_EQ(data_of(events),
              std::vector<json>{gemini_chunk({{"functionCall", shell_call}},
                                             tokens_of(shell_call["args"].dump()), "sonata-2")});

    contents.push_back({{"role", "model"}, {"parts", {{{"functionCall", shell_call}}}}});
    contents.push_back({{"role", "user"},
                        {"parts",
                         {{{"functionResponse",
                            {{"id", "sonata_main_1"},
                             {"name", "run_shell_command"},
                             {"response", {{"output", "removed"}}}}}}}}});
    const auto plain =
        s.post("/v1beta/models/gemini-2.5-pro:generateContent", gemini_request(contents));
    EXPECT_EQ(json::parse(plain.body), gemini_chunk({{"text", "finished"}}, 2, "sonata-3"));

    // The router side call: JSON that satisfies the requested schema, in either schema dialect.
    json router = gemini_request({{{"role", "user"}, {"parts", {{{"text", "classify"}}}}}}, false);
    router["generationConfig"] = {
        {"responseMimeType", "application/json"},
        {"responseJsonSchema",
         {{"type", "object"},
          {"properties",
           {{"reasoning", {{"type", "string"}}},
            {"model_choice", {{"type", "string"}, {"enum", {"flash", "pro"}}}}}},
          {"required", {"reasoning", "model_choice"}}}}};
    auto routed = json::parse(s.post("/v1beta/models/flash-lite:generateContent", router).body);
    EXPECT_EQ(
        json::parse(routed["candidates"][0]["content"]["parts"][0]["text"].get<std::string>()),
        json({{"reasoning", "sonata probe"}, {"model_choice", "flash"}}));
    router["generationConfig"] = {
        {"responseMimeType", "application/json"},
        {"responseSchema",
         {{"type", "OBJECT"},
          {"properties",
           {{"complexity_reasoning", {{"type", "STRING"}}},
            {"complexity_score", {{"type", "INTEGER"}, {"minimum", 1}, {"maximum", 100}}}}},
          {"required", {"complexity_reasoning", "complexity_score"}}}}};
    routed = json::parse(s.post("/v1beta/models/flash-lite:generateContent", router).body);
    EXPECT_EQ(
        json::parse(routed["candidates"][0]["content"]["parts"][0]["text"].get<std::string>()),
        json({{"complexity_reasoning", "sonata probe"}, {"complexity_score", 1}}));

    const auto records = s.server.recording();
    ASSERT_EQ(records.size(), 5U);
    EXPECT_EQ(records[0].tool_calls,
              (std::vector<ToolCallRecord>{
                  {"sonata_main_0", "write_file", write_call["args"].dump(), false, "", "a.txt"}}));
    EXPECT_EQ(records[0].tools_offered,
              (std::vector<std::string>{"run_shell_command", "read_file"}));
    EXPECT_EQ(records[3].kind, "structured");
    EXPECT_EQ(records[3].model, "flash-lite");
    EXPECT_EQ(s.server.tool_results(),
              (std::vector<ToolResultRecord>{
                  {"sonata_main_0", "write_file", "Tool \"write_file\" not found", true, ""},
                  {"sonata_main_1", "run_shell_command", "removed", false, ""}}));
}

// --- Every adapter that names a wire protocol ---------------------------------------------------

// For each harness: the request its protocol sends, offering its own first write and shell tools.
class ModelServerPerAdapter : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelServerPerAdapter, ResolvesShellIntentsToTheHarnesssOwnTool) {
    const auto vocabulary = vocabulary_of(GetParam());
    ASSERT_FALSE(vocabulary.shell.empty());
    Served s(R"({"steps":[{"intent":"shell","command":"true"}]})", vocabulary);
    const auto& shell = vocabulary.shell.front();
    const json schema = {{"type", "object"},
                         {"properties", {{vocabulary.shell_command_field, {{"type", "string"}}}}}};
    // The command, beside the arguments every shell call of this harness carries (droid's
    // riskLevel).
    json expected_args = vocabulary.shell_args_json.empty()
                             ? json::object()
                             : json::parse(vocabulary.shell_args_json);
    expected_args[vocabulary.shell_command_field] = "true";
    const std::string args = expected_args.dump();
    const auto protocol = (*adapters::find_adapter(GetParam()))->protocol();
    json call;
    switch (protocol) {
    case adapters::WireProtocol::anthropic_messages:
        call = json::parse(
            s.post("/v1/messages", claude_request({{{"role", "user"}, {"content", "go"}}},
                                                  {claude_tool(shell, schema)}, false))
                .body)["content"][0];
        EXPECT_EQ(call, json({{"type", "tool_use"},
                              {"id", "toolu_sonata_main_0"},
                              {"name", shell},
                              {"input", json::parse(args)}}));
        break;
    case adapters::WireProtocol::openai_responses:
        call = json::parse(
            s.stream(
                 "/v1/responses",
                 {{"model", "m"},
                  {"stream", true},
                  {"input", "go"},
                  {"tools", {{{"type", "function"}, {"name", shell}, {"parameters", schema}}}}})[2]
                .data)["item"];
        EXPECT_EQ(call["name"], shell);
        EXPECT_EQ(call["arguments"], args);
        break;
    case adapters::WireProtocol::openai_chat:
        call = json::parse(
            s.post("/v1/chat/completions", chat_request({{{"role", "user"}, {"content", "go"}}},
                                                        {chat_tool(shell, schema)}, false))
                .body);
        EXPECT_EQ(call["choices"][0]["message"]["tool_calls"][0]["function"],
                  json({{"name", shell}, {"arguments", args}}));
        break;
    case adapters::WireProtocol::gemini: {
        json body = {
            {"contents", {{{"role", "user"}, {"parts", {{{"text", "go"}}}}}}},
            {"tools", {{{"functionDeclarations", {{{"name", shell}, {"parameters", schema}}}}}}}};
        call = json::parse(s.post("/v1beta/models/m:generateContent", body).body);
        EXPECT_EQ(call["candidates"][0]["content"]["parts"][0]["functionCall"],
                  json({{"id", "sonata_main_0"}, {"name", shell}, {"args", json::parse(args)}}));
        break;
    }
    case adapters::WireProtocol::unknown:
        GTEST_SKIP() << GetParam() << " speaks no known wire protocol";
    }
    ASSERT_EQ(s.server.recording().size(), 1U);
    EXPECT_TRUE(s.server.recording()[0].tool_calls.at(0).offered);
}

std::vector<std::string> probeable_harnesses() {
    std::vector<std::string> ids;
    for (const auto& adapter : adapters::all_adapters()) {
        // A templated id (pi-<label>) names a family, not a harness that can be looked up.
        const std::string id(adapter->id());
        const bool templated = id.find('<') != std::string::npos;
        if (adapter->protocol() != adapters::WireProtocol::unknown && !templated) ids.push_back(id);
    }
    return ids;
}

std::string harness_test_name(const ::testing::TestParamInfo<std::string>& param) {
    std::string name = param.param;
    for (char& c : name) {
        const bool word =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!word) c = '_';
    }
    return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, ModelServerPerAdapter,
                         ::testing::ValuesIn(probeable_harnesses()), harness_test_name);

} // namespace model_server_wire_test
} // namespace sonata::probes
