// The scripted model server over real HTTP on loopback, for Anthropic Messages and OpenAI
// Responses: the exact event sequences claude and codex expect, tool-result turns advancing the
// script, side requests, tools offered or not, sub-agent markers, and the recorded tool results.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/model_server_fixture.hpp"

namespace sonata::probes {
namespace {

using nlohmann::json;
using namespace sonata::testing;

constexpr std::uint64_t k_tokens = k_probe_tokens;

// --- Anthropic Messages ------------------------------------------------------------------------

json claude_message_start(const std::string& id) {
    return {{"type", "message_start"},
            {"message",
             {{"id", id},
              {"type", "message"},
              {"role", "assistant"},
              {"model", "claude-sonnet-x"},
              {"content", json::array()},
              {"stop_reason", nullptr},
              {"stop_sequence", nullptr},
              {"usage",
               {{"input_tokens", k_tokens},
                {"cache_creation_input_tokens", 0},
                {"cache_read_input_tokens", 0},
                {"output_tokens", 1}}}}}};
}

std::vector<json> claude_tool_events(const std::string& id, const std::string& call_id,
                                     const std::string& name, const std::string& args) {
    return {claude_message_start(id),
            {{"type", "content_block_start"},
             {"index", 0},
             {"content_block",
              {{"type", "tool_use"}, {"id", call_id}, {"name", name}, {"input", json::object()}}}},
            {{"type", "content_block_delta"},
             {"index", 0},
             {"delta", {{"type", "input_json_delta"}, {"partial_json", args}}}},
            {{"type", "content_block_stop"}, {"index", 0}},
            {{"type", "message_delta"},
             {"delta", {{"stop_reason", "tool_use"}, {"stop_sequence", nullptr}}},
             {"usage", {{"output_tokens", tokens_of(args)}}}},
            {{"type", "message_stop"}}};
}

std::vector<json> claude_text_events(const std::string& id, const std::string& text) {
    return {claude_message_start(id),
            {{"type", "content_block_start"},
             {"index", 0},
             {"content_block", {{"type", "text"}, {"text", ""}}}},
            {{"type", "content_block_delta"},
             {"index", 0},
             {"delta", {{"type", "text_delta"}, {"text", text}}}},
            {{"type", "content_block_stop"}, {"index", 0}},
            {{"type", "message_delta"},
             {"delta", {{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}},
             {"usage", {{"output_tokens", tokens_of(text)}}}},
            {{"type", "message_stop"}}};
}

const std::vector<std::string> k_claude_event_names{"message_start",       "content_block_start",
                                                    "content_block_delta", "content_block_stop",
                                                    "message_delta",       "message_stop"};

TEST(ModelServerAnthropic, ScriptedTurnsToolResultsAndSideRequests) {
    Served s(R"({"steps":[{"intent":"write_file","path":"notes.txt","content":"hello"},
                          {"intent":"shell","command":"rm victim"}],"final":"finished"})",
             vocabulary_of("claude"));
    EXPECT_EQ(s.client->send("HEAD", "/").status, 200U);

    const json tools = {claude_tool("Read"), claude_tool("Write"), claude_tool("Bash")};
    json messages = {{{"role", "user"}, {"content", "Write notes, then remove victim."}}};
    const std::string write_args = R"({"content":"hello","file_path":"/ws/notes.txt"})";
    auto events = s.stream("/v1/messages?beta=true", claude_request(messages, tools));
    EXPECT_EQ(names_of(events), k_claude_event_names);
    EXPECT_EQ(data_of(events),
              claude_tool_events("sonata-2", "toolu_sonata_main_0", "Write", write_args));

    // The harness refused the write: the refusal comes back as a tool result, and the script goes
    // on.
    messages.push_back({{"role", "assistant"},
                        {"content",
                         {{{"type", "tool_use"},
                           {"id", "toolu_sonata_main_0"},
                           {"name", "Write"},
                           {"input", json::parse(write_args)}}}}});
    messages.push_back({{"role", "user"},
                        {"content",
                         {{{"type", "tool_result"},
                           {"tool_use_id", "toolu_sonata_main_0"},
                           {"content", "Permission to write denied in plan mode"},
                           {"is_error", true}}}}});
    events = s.stream("/v1/messages?beta=true", claude_request(messages, tools));
    EXPECT_EQ(data_of(events), claude_tool_events("sonata-3", "toolu_sonata_main_1", "Bash",
                                                  R"({"command":"rm victim"})"));

    messages.push_back({{"role", "assistant"},
                        {"content",
                         {{{"type", "tool_use"},
                           {"id", "toolu_sonata_main_1"},
                           {"name", "Bash"},
                           {"input", {{"command", "rm victim"}}}}}}});
    messages.push_back(
        {{"role", "user"},
         {"content",
          json::array({{{"type", "tool_result"},
                        {"tool_use_id", "toolu_sonata_main_1"},
                        {"content", json::array({{{"type", "text"}, {"text", "(no output)"}}})}},
                       {{"type", "text"}, {"text", "<system-reminder>x</system-reminder>"}}})}});
    events = s.stream("/v1/messages?beta=true", claude_request(messages, tools));
    EXPECT_EQ(data_of(events), claude_text_events("sonata-4", "finished"));

    // auto mode's classifier: non-streaming, no tools, stop sequence </block>.
    const json classifier = {
        {"model", "claude-haiku-x"},
        {"max_tokens", 64},
        {"stop_sequences", {"</block>"}},
        {"messages", {{{"role", "user"}, {"content", "Should this be blocked? rm victim"}}}}};
    const auto verdict = s.post("/v1/messages?beta=true", classifier);
    EXPECT_EQ(json::parse(verdict.body),
              json({{"id", "sonata-5"},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"model", "claude-haiku-x"},
                    {"content", {{{"type", "text"}, {"text", "<block>no"}}}},
                    {"stop_reason", "stop_sequence"},
                    {"stop_sequence", "</block>"},
                    {"usage",
                     {{"input_tokens", k_tokens},
                      {"cache_creation_input_tokens", 0},
                      {"cache_read_input_tokens", 0},
                      {"output_tokens", 2}}}}));

    // A title request without tools: text, and the script does not move.
    events =
        s.stream("/v1/messages",
                 claude_request({{{"role", "user"}, {"content", "Title this"}}}, json::array()));
    EXPECT_EQ(data_of(events), claude_text_events("sonata-6", "sonata probe"));

    const auto records = s.server.recording();
    ASSERT_EQ(records.size(), 6U);
    RequestRecord second;
    second.index = 3;
    second.method = "POST";
    second.target = "/v1/messages?beta=true";
    second.protocol = "anthropic-messages";
    second.kind = "turn";
    second.model = "claude-sonnet-x";
    second.stream = true;
    second.tools_offered = {"Read", "Write", "Bash"};
    second.step = 1;
    second.tool_calls = {{"toolu_sonata_main_1", "Bash", R"({"command":"rm victim"})", true}};
    second.tool_results = {
        {"toolu_sonata_main_0", "", "Permission to write denied in plan mode", true, ""}};
    EXPECT_EQ(without_timing(records[2]), second);
    EXPECT_EQ(records[0].kind, "probe");
    EXPECT_EQ(records[4].kind, "classifier");
    EXPECT_EQ(records[5].kind, "side");
    const std::vector<ToolResultRecord> results{
        {"toolu_sonata_main_0", "", "Permission to write denied in plan mode", true, ""},
        {"toolu_sonata_main_1", "", "(no output)", std::nullopt, ""}};
    EXPECT_EQ(s.server.tool_results(), results);
}

TEST(ModelServerAnthropic, ToolsNotOfferedAreStillCalledUnderTheirUsualName) {
    Served s(R"({"steps":[{"intent":"write_file","path":"/etc/sonata-canary","content":"x"}]})",
             vocabulary_of("claude"));
    const json messages = {{{"role", "user"}, {"content", "go"}}};
    auto offered = s.post("/v1/messages", claude_request(messages, {claude_tool("Write")}, false));
    auto withheld =
        s.post("/v1/messages",
               claude_request(messages, {claude_tool("Read"), claude_tool("Grep")}, false));
    const json call = {{"type", "tool_use"},
                       {"id", "toolu_sonata_main_0"},
                       {"name", "Write"},
                       {"input", {{"file_path", "/etc/sonata-canary"}, {"content", "x"}}}};
    EXPECT_EQ(json::parse(offered.body)["content"], json::array({call}));
    EXPECT_EQ(json::parse(withheld.body)["content"], json::array({call}));
    const auto records = s.server.recording();
    ASSERT_EQ(records.size(), 2U);
    EXPECT_EQ(records[0].tool_calls,
              (std::vector<ToolCallRecord>{{"toolu_sonata_main_0", "Write", call["input"].dump(),
                                            true, "", "/etc/sonata-canary"}}));
    EXPECT_EQ(records[1].tool_calls,
              (std::vector<ToolCallRecord>{{"toolu_sonata_main_0", "Write", call["input"].dump(),
                                            false, "", "/etc/sonata-canary"}}));
}

TEST(ModelServerAnthropic, SubagentConversationsFollowTheirMarkersScript) {
    Served s(
        R"({"steps":[{"intent":"delegate","task":"Summarise the repo. SUB-42","marker":"SUB-42"}],
                 "final":"main done",
                 "subagents":{"SUB-42":{"steps":[{"intent":"write_file","path":"escaped.txt","content":"x"}],
                                        "final":"sub done"}}})",
        vocabulary_of("claude"));
    const json task_schema = {{"type", "object"},
                              {"properties",
                               {{"description", {{"type", "string"}}},
                                {"prompt", {{"type", "string"}}},
                                {"subagent_type", {{"type", "string"}}}}},
                              {"required", {"description", "prompt", "subagent_type"}}};
    const json main_tools = {claude_tool("Task", task_schema), claude_tool("Write")};
    json main = {{{"role", "user"}, {"content", "Do the work."}}};
    auto reply = json::parse(s.post("/v1/messages", claude_request(main, main_tools, false)).body);
    const json task_input = {{"description", "sonata probe"},
                             {"prompt", "Summarise the repo. SUB-42"},
                             {"subagent_type", "general-purpose"}};
    EXPECT_EQ(reply["content"], json::array({{{"type", "tool_use"},
                                              {"id", "toolu_sonata_main_0"},
                                              {"name", "Task"},
                                              {"input", task_input}}}));

    // The sub-agent's own conversation: its task holds the marker.
    json sub = {{{"role", "user"}, {"content", "Summarise the repo. SUB-42"}}};
    reply = json::parse(
        s.post("/v1/messages", claude_request(sub, {claude_tool("Write")}, false)).body);
    ASSERT_EQ(reply["content"][0]["type"], "tool_use");
    const auto sub_call_id = reply["content"][0]["id"].get<std::string>();
    EXPECT_NE(sub_call_id, "toolu_sonata_main_0");
    EXPECT_EQ(reply["content"][0]["input"],
              json({{"file_path", "/ws/escaped.txt"}, {"content", "x"}}));
    sub.push_back({{"role", "assistant"}, {"content", reply["content"]}});
    sub.push_back({{"role", "user"},
                   {"content",
                    {{{"type", "tool_result"},
                      {"tool_use_id", sub_call_id},
                      {"content", "denied"},
                      {"is_error", true}}}}});
    reply = json::parse(
        s.post("/v1/messages", claude_request(sub, {claude_tool("Write")}, false)).body);
    EXPECT_EQ(reply["content"], json::array({{{"type", "text"}, {"text", "sub done"}}}));

    // Back in the main conversation, whose own Task call carries the marker: main track, final
    // text.
    main.push_back({{"role", "assistant"},
                    {"content",
                     {{{"type", "tool_use"},
                       {"id", "toolu_sonata_main_0"},
                       {"name", "Task"},
                       {"input", task_input}}}}});
    main.push_back({{"role", "user"},
                    {"content",
                     {{{"type", "tool_result"},
                       {"tool_use_id", "toolu_sonata_main_0"},
                       {"content", "sub done"}}}}});
    reply = json::parse(s.post("/v1/messages", claude_request(main, main_tools, false)).body);
    EXPECT_EQ(reply["content"], json::array({{{"type", "text"}, {"text", "main done"}}}));

    const auto records = s.server.recording();
    ASSERT_EQ(records.size(), 4U);
    EXPECT_EQ((std::vector<std::string>{records[0].track, records[1].track, records[2].track,
                                        records[3].track}),
              (std::vector<std::string>{"", "SUB-42", "SUB-42", ""}));
    EXPECT_EQ(
        s.server.tool_results(),
        (std::vector<ToolResultRecord>{{sub_call_id, "", "denied", true, "SUB-42"},
                                       {"toolu_sonata_main_0", "", "sub done", std::nullopt, ""}}));
}

// --- OpenAI Responses --------------------------------------------------------------------------

json codex_request(json input) {
    const json exec_schema = {
        {"type", "object"},
        {"properties", {{"cmd", {{"type", "string"}}}, {"yield_time_ms", {{"type", "number"}}}}},
        {"required", {"cmd"}}};
    return {{"model", "gpt-x"},
            {"instructions", "You are Codex."},
            {"stream", true},
            {"tools",
             {{{"type", "function"}, {"name", "exec_command"}, {"parameters", exec_schema}},
              {{"type", "custom"}, {"name", "apply_patch"}, {"format", {{"type", "grammar"}}}}}},
            {"input", std::move(input)}};
}

json responses_object(const std::string& id, std::int64_t created, const json& output,
                      bool complete, std::uint64_t output_tokens) {
    json out = {
        {"id", "resp_" + id},    {"object", "response"},
        {"created_at", created}, {"status", complete ? "completed" : "in_progress"},
        {"model", "gpt-x"},      {"output", complete ? json::array({output}) : json::array()},
        {"usage", nullptr}};
    if (complete) {
        out["usage"] = {{"input_tokens", k_tokens},
                        {"input_tokens_details", {{"cached_tokens", 0}}},
                        {"output_tokens", output_tokens},
                        {"output_tokens_details", {{"reasoning_tokens", 0}}},
                        {"total_tokens", k_tokens + output_tokens}};
    }
    return out;
}

// codex 0.171 offers its sub-agent tools in a namespace (or, for some models, defers the
// namespace): the call names the tool and carries the namespace, and the history reads it back.
TEST(ModelServerResponses, CallsANamespacedToolWithItsNamespace) {
    Served s(R"({"steps":[{"intent":"delegate","task":"go SUB-1","marker":"SUB-1"},
                          {"intent":"shell","command":"ls"}],
                 "subagents":{"SUB-1":{"steps":[]}}})",
             vocabulary_of("codex"));
    const json spawn = {
        {"type", "function"},
        {"name", "spawn_agent"},
        {"parameters", {{"type", "object"}, {"properties", {{"message", {{"type", "string"}}}}}}}};
    json body = codex_request(json::array({{{"role", "user"}, {"content", "Do it."}}}));
    body["stream"] = false;
    body["tools"].push_back(
        {{"type", "namespace"}, {"name", "multi_agent_v1"}, {"tools", json::array({spawn})}});
    const auto reply = json::parse(s.post("/v1/responses", body).body);
    const auto& call = reply["output"][0];
    EXPECT_EQ(call["type"], "function_call");
    EXPECT_EQ(call["namespace"], "multi_agent_v1");
    EXPECT_EQ(call["name"], "spawn_agent");
    EXPECT_EQ(call["arguments"], R"({"message":"go SUB-1"})");
    const auto offered = s.server.recording().back().tools_offered;
    EXPECT_NE(std::find(offered.begin(), offered.end(), "multi_agent_v1.spawn_agent"),
              offered.end());

    // Deferred: listed only in the developer message; the history carries the namespace back.
    body = codex_request(json::array(
        {{{"role", "developer"},
          {"content",
           json::array({{{"type", "input_text"},
                         {"text", "<tools>\nDeferred tool namespaces:\n- "
                                  "multi_agent_v1: Tools for sub-agents.\n</tools>"}}})}},
         {{"role", "user"}, {"content", "Do it."}}}));
    body["stream"] = false;
    EXPECT_EQ(json::parse(s.post("/v1/responses", body).body)["output"][0]["namespace"],
              "multi_agent_v1");
    body["input"].push_back(call);
    body["input"].push_back({{"type", "function_call_output"},
                             {"call_id", call["call_id"]},
                             {"output", R"({"agent_id":"a1"})"}});
    EXPECT_EQ(json::parse(s.post("/v1/responses", body).body)["output"][0]["name"], "exec_command");
}

TEST(ModelServerResponses, FunctionCallsOutputsAndFinalText) {
    Served s(R"({"steps":[{"intent":"shell","command":"rm victim"},
                          {"intent":"write_file","path":"a.txt","content":"A"}],"final":"finished"})",
             vocabulary_of("codex"));
    json input = {{{"type", "message"},
                   {"role", "developer"},
                   {"content", {{{"type", "input_text"}, {"text", "rules"}}}}},
                  {{"type", "message"},
                   {"role", "user"},
                   {"content", {{{"type", "input_text"}, {"text", "go"}}}}}};
    auto events = s.stream("/v1/responses", codex_request(input));
    ASSERT_EQ(events.size(), 4U);
    const auto created = json::parse(events[0].data)["response"]["created_at"].get<std::int64_t>();
    const std::string args = R"({"cmd":"rm victim"})";
    const json call = {
        {"type", "function_call"}, {"id", "fc_sonata_main_0"}, {"call_id", "call_sonata_main_0"},
        {"name", "exec_command"},  {"arguments", args},        {"status", "completed"}};
    json started = call;
    started["arguments"] = "";
    started["status"] = "in_progress";
    EXPECT_EQ(names_of(events),
              (std::vector<std::string>{"response.created", "response.output_item.added",
                                        "response.output_item.done", "response.completed"}));
    EXPECT_EQ(
        data_of(events),
        (std::vector<json>{
            {{"type", "response.created"},
             {"sequence_number", 0},
             {"response", responses_object("sonata-1", created, call, false, 0)}},
            {{"type", "response.output_item.added"},
             {"sequence_number", 1},
             {"output_index", 0},
             {"item", started}},
            {{"type", "response.output_item.done"},
             {"sequence_number", 2},
             {"output_index", 0},
             {"item", call}},
            {{"type", "response.completed"},
             {"sequence_number", 3},
             {"response", responses_object("sonata-1", created, call, true, tokens_of(args))}}}));

    // codex exec offers apply_patch as a custom tool: the write becomes an Add File patch.
    input.push_back({{"type", "function_call"},
                     {"call_id", "call_sonata_main_0"},
                     {"name", "exec_command"},
                     {"arguments", args}});
    input.push_back({{"type", "function_call_output"},
                     {"call_id", "call_sonata_main_0"},
                     {"output", "rm: cannot remove 'victim': Read-only file system"}});
    events = s.stream("/v1/responses", codex_request(input));
    ASSERT_EQ(events.size(), 4U);
    EXPECT_EQ(json::parse(events[2].data)["item"],
              json({{"type", "custom_tool_call"},
                    {"id", "ctc_sonata_main_1"},
                    {"call_id", "call_sonata_main_1"},
                    {"name", "apply_patch"},
                    {"input", "*** Begin Patch\n*** Add File: a.txt\n+A\n*** End Patch\n"},
                    {"status", "completed"}}));

    input.push_back({{"type", "custom_tool_call"},
                     {"call_id", "call_sonata_main_1"},
                     {"name", "apply_patch"},
                     {"input", "*** Begin Patch"}});
    input.push_back({{"type", "custom_tool_call_output"},
                     {"call_id", "call_sonata_main_1"},
                     {"output", "patch rejected"}});
    events = s.stream("/v1/responses", codex_request(input));
    const json message = {
        {"type", "message"},
        {"id", "msg_sonata-3"},
        {"role", "assistant"},
        {"status", "completed"},
        {"content",
         {{{"type", "output_text"}, {"text", "finished"}, {"annotations", json::array()}}}}};
    EXPECT_EQ(names_of(events),
              (std::vector<std::string>{"response.created", "response.output_item.added",
                                        "response.output_text.delta", "response.output_item.done",
                                        "response.completed"}));
    EXPECT_EQ(json::parse(events[2].data), json({{"type", "response.output_text.delta"},
                                                 {"sequence_number", 2},
                                                 {"item_id", "msg_sonata-3"},
                                                 {"output_index", 0},
                                                 {"content_index", 0},
                                                 {"delta", "finished"}}));
    EXPECT_EQ(json::parse(events[3].data)["item"], message);

    EXPECT_EQ(s.server.tool_results(),
              (std::vector<ToolResultRecord>{
                  {"call_sonata_main_0", "", "rm: cannot remove 'victim': Read-only file system",
                   std::nullopt, ""},
                  {"call_sonata_main_1", "", "patch rejected", std::nullopt, ""}}));
    EXPECT_EQ(s.server.recording()[1].step, 1);
    EXPECT_EQ(s.server.recording()[2].step, std::nullopt);
}

// A script's watched texts are recorded per request, wherever in the body they appear (a system
// prompt the repository replaced), and only in the requests that hold them.
TEST(ModelServerChat, RecordsTheWatchedTextsARequestHolds) {
    Served s(R"({"steps":[],"final":"done","watch":["REPO-PROMPT-1","NEVER-SENT"]})",
             vocabulary_of("pi"));
    const json tools = json::array({chat_tool("read", {{"type", "object"}})});
    (void)s.post(
        "/v1/chat/completions",
        chat_request(json::array({{{"role", "user"}, {"content", "hello"}}}), tools, false));
    (void)s.post("/v1/chat/completions",
                 chat_request(json::array({{{"role", "system"}, {"content", "x REPO-PROMPT-1 y"}},
                                           {{"role", "user"}, {"content", "hello"}}}),
                              tools, false));
    const auto records = s.server.recording();
    ASSERT_EQ(records.size(), 2U);
    EXPECT_TRUE(records[0].watched.empty());
    EXPECT_EQ(records[1].watched, std::vector<std::string>{"REPO-PROMPT-1"});
}

} // namespace
} // namespace sonata::probes
