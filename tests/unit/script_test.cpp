// The scripted model's script: JSON parsing (whole values, and errors that name their place) and
// resolution of intents against offered tools, step counting and sub-agent tracks.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dispatch/contract.hpp"
#include "probes/script.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::probes {
namespace {

adapters::ToolVocabulary claude_like() {
    return {{"Write"},        "file_path",      "content",         true,
            {"Bash"},         "command",        {"Task", "Agent"}, "prompt",
            {"ExitPlanMode"}, {"EnterPlanMode"}};
}

ScriptContext context(adapters::ToolVocabulary vocabulary = claude_like()) {
    return {std::move(vocabulary), "/ws/project"};
}

ConversationFacts offering(std::vector<std::string> names) {
    ConversationFacts facts;
    for (auto& name : names)
        facts.tools.push_back({std::move(name), "function", ""});
    return facts;
}

Intent make(IntentKind kind) {
    Intent intent;
    intent.kind = kind;
    return intent;
}

Script must_parse(std::string_view text) {
    auto script = parse_script(text);
    EXPECT_TRUE(script) << (script ? "" : script.error().message);
    return script ? *script : Script{};
}

Move tool_move(std::string tool, std::string args, std::string call_id, int step, bool offered,
               std::string target = "") {
    Move move;
    move.kind = MoveKind::tool_call;
    move.step = step;
    move.tool = std::move(tool);
    move.tool_kind = "function";
    move.tool_offered = offered;
    move.arguments_json = std::move(args);
    move.call_id = std::move(call_id);
    move.target = std::move(target);
    return move;
}

TEST(ScriptParse, ReadsEveryIntentAndSubagents) {
    const auto script = must_parse(R"({
      "steps": [
        {"intent": "write_file", "path": "a.txt", "content": "A"},
        {"intent": "shell", "command": "rm victim"},
        {"intent": "delegate", "task": "do it", "marker": "SUB-1"},
        {"intent": "switch_mode"},
        {"intent": "switch_mode", "tool": "ExitPlanMode", "args": {"plan": "p"}},
        {"intent": "call_tool", "name": "Read", "args": {"file_path": "/x"}},
        {"intent": "reply", "text": "turn over"}],
      "final": "all done",
      "subagents": {"SUB-1": {"steps": [{"intent": "shell", "command": "touch s"}]}},
      "input_tokens": 5000000})");
    Script expected;
    Intent write = make(IntentKind::write_file);
    write.path = "a.txt";
    write.content = "A";
    Intent shell = make(IntentKind::shell);
    shell.command = "rm victim";
    Intent delegate = make(IntentKind::delegate);
    delegate.task = "do it";
    delegate.marker = "SUB-1";
    Intent switch_plain = make(IntentKind::switch_mode);
    Intent switch_named = make(IntentKind::switch_mode);
    switch_named.tool = "ExitPlanMode";
    switch_named.args_json = R"({"plan":"p"})";
    Intent call = make(IntentKind::call_tool);
    call.tool = "Read";
    call.args_json = R"({"file_path":"/x"})";
    Intent reply = make(IntentKind::reply);
    reply.text = "turn over";
    expected.main = {{write, shell, delegate, switch_plain, switch_named, call, reply}, "all done"};
    Intent sub_shell = make(IntentKind::shell);
    sub_shell.command = "touch s";
    expected.subagents["SUB-1"] = {{sub_shell}, "done"};
    expected.input_tokens = 5000000;
    EXPECT_EQ(script, expected);
}

struct BadScript {
    const char* text;
    const char* message;
};

class ScriptErrors : public ::testing::TestWithParam<BadScript> {};

TEST_P(ScriptErrors, AreBadDataNamingThePlace) {
    const auto script = parse_script(GetParam().text);
    ASSERT_FALSE(script);
    EXPECT_EQ(script.error().code, ExitCode::bad_data);
    EXPECT_EQ(script.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    All, ScriptErrors,
    ::testing::Values(
        BadScript{"[1]", "script: the top level must be an object"},
        BadScript{R"({"final":"x"})", "script: steps: missing, or not an array"},
        BadScript{R"({"steps":[],"stepz":1})", "script: top level: unknown key 'stepz' (did you "
                                               "mean 'steps'?); allowed: steps, final, "
                                               "subagents, input_tokens, watch"},
        BadScript{
            R"({"steps":[{"intent":"write_fil","path":"a","content":"b"}]})",
            "script: steps[0].intent: unknown intent 'write_fil' (did you mean 'write_file'?)"},
        BadScript{
            R"({"steps":[{"path":"a"}]})",
            "script: steps[0]: needs \"intent\": one of write_file, shell, delegate, switch_mode, "
            "call_tool, reply, write_report, call_unknown, read_file, fetch_url"},
        BadScript{
            R"({"steps":[{"intent":"shell","command":"ls"},{"intent":"write_file","path":"a"}]})",
            "script: steps[1]: missing \"content\""},
        BadScript{R"({"steps":[{"intent":"shell","command":7}]})",
                  "script: steps[0].command: must be a string"},
        BadScript{R"({"steps":[{"intent":"shell","command":"ls","args":[1]}]})",
                  "script: steps[0].args: must be an object"},
        BadScript{R"({"steps":[{"intent":"reply","text":"x","path":"p"}]})",
                  "script: steps[0]: unknown key 'path'; allowed: text, intent, args"},
        BadScript{R"({"steps":[{"intent":"delegate","task":"t","marker":"M"}]})",
                  "script: steps[0].marker: 'M' has no entry in \"subagents\""},
        BadScript{R"({"steps":[],"subagents":{"M":{"steps":[],"subagents":{}}}})",
                  "script: subagents.M: unknown key 'subagents'; allowed: steps, final"},
        BadScript{R"({"steps":[],"input_tokens":-1})",
                  "script: input_tokens: must be a non-negative integer"},
        BadScript{R"({"steps":[],"watch":"x"})", "script: watch: must be an array of texts"},
        BadScript{R"({"steps":[],"watch":["a",""]})",
                  "script: watch[1]: must be a non-empty text"}));

TEST(ScriptParse, RejectsInvalidJsonWithItsPosition) {
    const auto script = parse_script("{\"steps\": [");
    ASSERT_FALSE(script);
    EXPECT_EQ(script.error().code, ExitCode::bad_data);
    EXPECT_EQ(script.error().message.rfind("script: not valid JSON (byte 12)", 0), 0U)
        << script.error().message;
}

TEST(ScriptLoad, MissingFileIsBadDataNamingIt) {
    const auto script = load_script("/nonexistent/sonata/script.json");
    ASSERT_FALSE(script);
    EXPECT_EQ(script.error().code, ExitCode::bad_data);
    EXPECT_EQ(script.error().message, "cannot read script file /nonexistent/sonata/script.json");
}

TEST(ScriptResolve, UsesTheOfferedToolAndAbsolutePaths) {
    const auto script =
        must_parse(R"({"steps":[{"intent":"write_file","path":"sub/../a.txt","content":"A"}]})");
    const auto move = resolve_move(script, context(), offering({"Read", "Write", "Bash"}));
    EXPECT_EQ(move, tool_move("Write", R"({"content":"A","file_path":"/ws/project/a.txt"})",
                              "sonata_main_0", 0, true, "sub/../a.txt"));
}

// call_unknown calls each offered tool the vocabulary cannot classify, once, with what its schema
// requires; with none left the track ends.
TEST(ScriptResolve, CallUnknownCallsEachToolTheVocabularyDoesNotKnowThenEnds) {
    const auto script =
        must_parse(R"({"steps":[{"intent":"call_unknown"},{"intent":"call_unknown"},)"
                   R"({"intent":"call_unknown"}],"final":"census"})");
    auto vocabulary = claude_like();
    vocabulary.known = {{"Read", adapters::ToolClass::read_only}};
    const ScriptContext known = context(vocabulary);
    ConversationFacts facts = offering({"Read", "Write", "Bash"});
    facts.tools.push_back({"notes_append", "function",
                           R"({"type":"object","properties":{"path":{"type":"string"},)"
                           R"("text":{"type":"string"}},"required":["path","text"]})"});
    facts.tools.push_back({"mcp__srv__touch", "function", ""}); // an MCP tool is a known class
    facts.tools.push_back({"gadget", "function", ""});
    EXPECT_EQ(resolve_move(script, known, facts),
              tool_move("notes_append", R"({"path":"sonata probe","text":"sonata probe"})",
                        "sonata_main_0", 0, true));
    facts.tool_calls = {{"notes_append", "{}", "sonata_main_0"}};
    EXPECT_EQ(resolve_move(script, known, facts),
              tool_move("gadget", "{}", "sonata_main_1", 1, true));
    facts.tool_calls.push_back({"gadget", "{}", "sonata_main_1"});
    const auto done = resolve_move(script, known, facts);
    EXPECT_EQ(done.kind, MoveKind::final_text);
    EXPECT_EQ(done.text, "census");
    // A harness that offers only tools sonata knows is never called beyond its script.
    EXPECT_EQ(resolve_move(script, known, offering({"Read", "Write"})).kind, MoveKind::final_text);
}

TEST(ScriptResolve, AnArgumentCanTakeWhatAToolAnsweredEarlier) {
    // A parent's model answers an approval with the run id its dispatch call returned.
    const auto script = must_parse(
        R"({"steps":[{"intent":"call_tool","name":"dispatch"},
                     {"intent":"call_tool","name":"approve",
                      "args":{"id":"{{result:run ([a-z0-9-]+): }}","answer":"yes"}}]})");
    auto facts = offering({"dispatch", "approve"});
    facts.tool_calls = {{"dispatch", "{}", "sonata_main_0"}};
    facts.tool_results = {{"sonata_main_0", "run 20261202-ab12: reasonix@1.38.11 paused", false}};
    EXPECT_EQ(resolve_move(script, context(), facts).arguments_json,
              R"({"answer":"yes","id":"20261202-ab12"})");
    // Nothing matches: the argument stays as written, and the harness answers the bad call.
    facts.tool_results = {{"sonata_main_0", "refused", false}};
    EXPECT_EQ(resolve_move(script, context(), facts).arguments_json,
              R"({"answer":"yes","id":"{{result:run ([a-z0-9-]+): }}"})");
}

TEST(ScriptResolve, WriteReportWritesWhereTheDispatchedTaskSaysTheReportGoes) {
    const auto script = must_parse(R"({"steps":[{"intent":"write_report","content":"TOKEN"}]})");
    auto facts = offering({"Write"});
    facts.user_text = "# Task\n\nWhen you are done, write your report (what you did, what you left "
                      "undone, how you checked it) to /runs/r1/report.md. If you cannot write "
                      "there, end with the report as your final answer.\n";
    EXPECT_EQ(resolve_move(script, context(), facts),
              tool_move("Write", R"({"content":"TOKEN","file_path":"/runs/r1/report.md"})",
                        "sonata_main_0", 0, true));
    // A TUI run is typed one line naming the instructions; the report goes beside them.
    facts.user_text = "Read the file /runs/r2/instructions.md and do the task it describes.";
    EXPECT_EQ(resolve_move(script, context(), facts).arguments_json,
              R"({"content":"TOKEN","file_path":"/runs/r2/report.md"})");
    // The only file tool is a patch tool that is not offered (codex exec): the shell writes it.
    adapters::ToolVocabulary codex{{"apply_patch"}, "", "input", false, {"exec_command"},
                                   "cmd",           {}, "",      {},    {}};
    facts.tools.clear();
    facts.tools.push_back({"exec_command", "function", ""});
    const auto it = must_parse(R"({"steps":[{"intent":"write_report","content":"it's done"}]})");
    const auto move = resolve_move(it, context(codex), facts);
    EXPECT_EQ(move.tool, "exec_command");
    EXPECT_EQ(move.arguments_json,
              R"({"cmd":"printf '%s\\n' 'it'\\''s done' > '/runs/r2/report.md'"})");
}

TEST(ScriptResolve, NotOfferedStillCallsTheUsualName) {
    const auto script = must_parse(R"({"steps":[{"intent":"delegate","task":"go","marker":"M-1"}],
                                       "subagents":{"M-1":{"steps":[]}}})");
    const auto move = resolve_move(script, context(), offering({"Read"}));
    EXPECT_EQ(move, tool_move("Task", R"({"prompt":"go\n\nM-1"})", "sonata_main_0", 0, false));
}

TEST(ScriptResolve, PrefersTheFirstOfferedNameInVocabularyOrder) {
    const auto script =
        must_parse(R"({"steps":[{"intent":"delegate","task":"go M-1","marker":"M-1"}],
                                       "subagents":{"M-1":{"steps":[]}}})");
    EXPECT_EQ(resolve_move(script, context(), offering({"Agent"})).tool, "Agent");
    EXPECT_EQ(resolve_move(script, context(), offering({"Agent", "Task"})).tool, "Task");
}

TEST(ScriptResolve, RelativePathsStayRelativeWhenTheHarnessAllows) {
    adapters::ToolVocabulary pi{{"write"}, "path", "content", false, {"bash"},
                                "command", {},     "",        {},    {}};
    const auto script =
        must_parse(R"({"steps":[{"intent":"write_file","path":"a.txt","content":"A"}]})");
    const auto move = resolve_move(script, context(pi), offering({"write"}));
    EXPECT_EQ(move, tool_move("write", R"({"content":"A","path":"a.txt"})", "sonata_main_0", 0,
                              true, "a.txt"));
}

TEST(ScriptResolve, FillsRequiredArgumentsFromTheOfferedSchemaButNoOptionalOnes) {
    adapters::ToolVocabulary opencode{{"write"}, "filePath", "content", true, {"bash"},
                                      "command", {},         "",        {},   {}};
    auto facts = offering({});
    facts.tools.push_back({"bash", "function",
                           R"({"type":"object","properties":{"command":{"type":"string"},)"
                           R"("description":{"type":"string"},"timeout":{"type":"number"},)"
                           R"("mode":{"type":"string","enum":["fg","bg"]}},)"
                           R"("required":["command","description","mode"]})"});
    const auto script = must_parse(R"({"steps":[{"intent":"shell","command":"rm victim"}]})");
    const auto move = resolve_move(script, context(opencode), facts);
    EXPECT_EQ(move, tool_move("bash",
                              R"({"command":"rm victim","description":"sonata probe","mode":"fg"})",
                              "sonata_main_0", 0, true));
}

TEST(ScriptResolve, ExplicitArgsWinAndNamedToolsNeedNotBeOffered) {
    const auto script = must_parse(R"({"steps":[
        {"intent":"call_tool","name":"mcp__canary__touch","args":{"path":"x"}},
        {"intent":"switch_mode","args":{"plan":"write everything"}},
        {"intent":"shell","command":"ls","args":{"command":"ls -la","run_in_background":false}}]})");
    auto facts = offering({"Bash", "EnterPlanMode", "ExitPlanMode"});
    EXPECT_EQ(resolve_move(script, context(), facts),
              tool_move("mcp__canary__touch", R"({"path":"x"})", "sonata_main_0", 0, false));
    facts.tool_calls.push_back({"mcp__canary__touch", R"({"path":"x"})"});
    EXPECT_EQ(
        resolve_move(script, context(), facts),
        tool_move("ExitPlanMode", R"({"plan":"write everything"})", "sonata_main_1", 1, true));
    facts.tool_calls.push_back({"ExitPlanMode", "{}"});
    EXPECT_EQ(resolve_move(script, context(), facts),
              tool_move("Bash", R"({"command":"ls -la","run_in_background":false})",
                        "sonata_main_2", 2, true));
}

TEST(ScriptResolve, ANamedMcpToolIsCalledUnderTheSpellingTheHarnessOffered) {
    const auto script = must_parse(
        R"({"steps":[{"intent":"call_tool","name":"mcp__sonata-canary__touch","args":{"n":1}}]})");
    for (const std::string offered :
         {"mcp_sonata-canary_touch", "sonata-canary_touch", "touch", "mcp__sonata-canary__touch"}) {
        const auto move = resolve_move(script, context(), offering({"read", offered, "bash"}));
        EXPECT_EQ(move, tool_move(offered, R"({"n":1})", "sonata_main_0", 0, true)) << offered;
    }
    // Nothing like it offered, a name too short to match safely, or two candidates: the name the
    // script gave, not offered.
    for (const std::vector<std::string>& offered :
         {std::vector<std::string>{"read", "bash"}, std::vector<std::string>{"ch"},
          std::vector<std::string>{"touch", "canary_touch"}}) {
        const auto move = resolve_move(script, context(), offering(offered));
        EXPECT_EQ(move,
                  tool_move("mcp__sonata-canary__touch", R"({"n":1})", "sonata_main_0", 0, false));
    }
}

// Each intent's target goes into the offered tool's own field for it, read from the schema: a
// write tool that takes `path` where the vocabulary says `filePath` (opencode 2.x beside 1.x), a
// shell that takes `cmd`, a task tool that takes `instructions`.
TEST(ScriptResolve, EveryTargetGoesWhereTheOfferedSchemaTakesIt) {
    adapters::ToolVocabulary v{{"write"}, "filePath", "content", true, {"bash"},
                               "command", {"task"},   "prompt",  {},   {}};
    const auto schema = [](const char* fields) {
        return std::string(R"({"type":"object","properties":{)") + fields + "}}";
    };
    ConversationFacts facts;
    facts.tools.push_back(
        {"write", "function", schema(R"("path":{"type":"string"},"content":{"type":"string"})")});
    facts.tools.push_back({"bash", "function", schema(R"("cmd":{"type":"string"})")});
    facts.tools.push_back({"task", "function", schema(R"("instructions":{"type":"string"})")});
    const auto script = must_parse(R"({"steps":[
        {"intent":"write_file","path":"a.txt","content":"A"},
        {"intent":"shell","command":"true"},
        {"intent":"delegate","task":"go","marker":"M-1"}],
        "subagents":{"M-1":{"steps":[]}}})");
    EXPECT_EQ(resolve_move(script, context(v), facts),
              tool_move("write", R"({"content":"A","path":"/ws/project/a.txt"})", "sonata_main_0",
                        0, true, "a.txt"));
    facts.tool_calls.push_back({"write", "{}", "sonata_main_0"});
    EXPECT_EQ(resolve_move(script, context(v), facts),
              tool_move("bash", R"({"cmd":"true"})", "sonata_main_1", 1, true));
    facts.tool_calls.push_back({"bash", "{}", "sonata_main_1"});
    EXPECT_EQ(resolve_move(script, context(v), facts),
              tool_move("task", R"({"instructions":"go\n\nM-1"})", "sonata_main_2", 2, true));
}

// read_file and fetch_url call the vocabulary's read and fetch tools with the path (absolute where
// the harness wants it) and the URL in the fields the offered schemas name; a schema without one
// says so, and a harness whose tools are not offered is called by the vocabulary's names.
TEST(ScriptResolve, AReadAndAFetchGoWhereTheOfferedSchemasTakeThem) {
    auto v = claude_like();
    v.read = {"Read"};
    v.read_path_field = "file_path";
    v.fetch = {"WebFetch"};
    v.fetch_url_field = "url";
    const auto script = must_parse(R"({"steps":[
        {"intent":"read_file","path":".env"},
        {"intent":"fetch_url","url":"http://127.0.0.1:9/x"}]})");
    ConversationFacts facts;
    facts.tools.push_back(
        {"Read", "function", R"({"type":"object","properties":{"filePath":{"type":"string"}}})"});
    facts.tools.push_back(
        {"WebFetch", "function", R"({"type":"object","properties":{"href":{"type":"string"}}})"});
    EXPECT_EQ(resolve_move(script, context(v), facts),
              tool_move("Read", R"({"filePath":"/ws/project/.env"})", "sonata_main_0", 0, true));
    facts.tool_calls.push_back({"Read", "{}", "sonata_main_0"});
    const auto fetch = resolve_move(script, context(v), facts);
    EXPECT_EQ(fetch.tool, "WebFetch");
    EXPECT_EQ(fetch.unplaced,
              "the offered WebFetch's schema has no argument for the URL (it takes: href)");
    const auto unoffered = resolve_move(script, context(v), offering({}));
    EXPECT_EQ(unoffered,
              tool_move("Read", R"({"file_path":"/ws/project/.env"})", "sonata_main_0", 0, false));
}

// A schema with no argument for the target: the call says so (the runner turns an enforced cell
// inconclusive with it), and names what the tool takes.
TEST(ScriptResolve, ATargetTheOfferedSchemaCannotTakeIsSaid) {
    ConversationFacts facts;
    facts.tools.push_back({"Bash", "function",
                           R"({"type":"object","properties":{"script_path":{"type":"string"}}})"});
    facts.tools.push_back(
        {"Write", "function", R"({"type":"object","properties":{"body":{"type":"string"}}})"});
    const auto shell = resolve_move(must_parse(R"({"steps":[{"intent":"shell","command":"x"}]})"),
                                    context(), facts);
    EXPECT_EQ(shell.unplaced,
              "the offered Bash's schema has no argument for the command (it takes: script_path)");
    const auto write =
        resolve_move(must_parse(R"({"steps":[{"intent":"write_file","path":"a","content":"A"}]})"),
                     context(), facts);
    EXPECT_EQ(write.unplaced,
              "the offered Write's schema has no argument for the file's path (it takes: body)");
    // Not offered: its schema is unknown, and the call is made as the vocabulary says.
    const auto unknown = resolve_move(must_parse(R"({"steps":[{"intent":"shell","command":"x"}]})"),
                                      context(), ConversationFacts{});
    EXPECT_EQ(unknown.unplaced, "");
    EXPECT_EQ(unknown.arguments_json, R"({"command":"x"})");
}

TEST(ScriptResolve, AWriteToolWithoutPathFieldGetsAnAddFilePatch) {
    adapters::ToolVocabulary codex{{"apply_patch"}, "", "input", false, {"exec_command"},
                                   "cmd",           {}, "",      {},    {}};
    auto facts = offering({"exec_command"});
    facts.tools.push_back({"apply_patch", "custom", ""});
    const auto script =
        must_parse(R"({"steps":[{"intent":"write_file","path":"a.txt","content":"A\nB"}]})");
    auto expected =
        tool_move("apply_patch",
                  R"({"input":"*** Begin Patch\n*** Add File: a.txt\n+A\n+B\n*** End Patch\n"})",
                  "sonata_main_0", 0, true, "a.txt");
    expected.tool_kind = "custom";
    EXPECT_EQ(resolve_move(script, context(codex), facts), expected);
}

TEST(ScriptResolve, EmptyVocabularyFallsBackToNeutralNames) {
    const auto script =
        must_parse(R"({"steps":[{"intent":"write_file","path":"/abs/a","content":"A"}]})");
    const auto move =
        resolve_move(script, context(adapters::ToolVocabulary{}), offering({"exec_command"}));
    EXPECT_EQ(move, tool_move("write_file", R"({"content":"A","path":"/abs/a"})", "sonata_main_0",
                              0, false, "/abs/a"));
}

TEST(ScriptResolve, StepsFollowPastCallsAndScriptedRepliesThenTheFinalText) {
    const auto script = must_parse(R"({"steps":[{"intent":"reply","text":"first turn over"},
                                                {"intent":"shell","command":"rm victim"}],"final":"end"})");
    auto facts = offering({"Bash"});
    Move reply;
    reply.kind = MoveKind::text;
    reply.step = 0;
    reply.text = "first turn over";
    EXPECT_EQ(resolve_move(script, context(), facts), reply);
    facts.assistant_texts = {"Thanks for the context!",
                             "  first turn over\n"}; // The harness's own, then ours.
    EXPECT_EQ(current_step(script.main, facts), 1);
    EXPECT_EQ(resolve_move(script, context(), facts),
              tool_move("Bash", R"({"command":"rm victim"})", "sonata_main_1", 1, true));
    facts.tool_calls.push_back({"Bash", R"({"command":"rm victim"})"});
    Move final_move;
    final_move.text = "end";
    EXPECT_EQ(resolve_move(script, context(), facts), final_move);
}

// A write through a named file tool puts the target where the offered tool's own schema takes it
// (an edit tool's text to replace emptied, so that it creates the file), and is passed over where
// the harness did not offer the tool or its schema has no field for the path: the steps after it
// are counted as if it were not there.
TEST(ScriptResolve, ANamedWriteFollowsTheOfferedSchemaAndIsPassedOverWhereItCannotReachItsTarget) {
    const auto script = must_parse(R"({"steps":[
        {"intent":"write_file","path":"a.txt","content":"A"},
        {"intent":"write_file","path":"a.txt","content":"A","tool":"Notebook"},
        {"intent":"write_file","path":"a.txt","content":"A","tool":"edit"},
        {"intent":"write_file","path":"a.txt","content":"A","tool":"MultiEdit"},
        {"intent":"shell","command":"true"}],"final":"end"})");
    auto facts = offering({"Write", "Bash"});
    facts.tools.push_back({"edit", "function",
                           R"({"type":"object","properties":{"file_path":{"type":"string"},)"
                           R"("old_string":{"type":"string"},"new_string":{"type":"string"}},)"
                           R"("required":["file_path","old_string","new_string"]})"});
    facts.tools.push_back(
        {"MultiEdit", "function",
         R"({"type":"object","properties":{"filePath":{"type":"string"},"edits":{"type":"array",)"
         R"("items":{"type":"object","properties":{"oldString":{"type":"string"},)"
         R"("newString":{"type":"string"}}}}},"required":["filePath","edits"]})"});
    facts.tools.push_back(
        {"Notebook", "function", R"({"type":"object","properties":{"cell":{"type":"string"}}})"});
    EXPECT_EQ(current_step(script.main, facts), 0);
    facts.tool_calls.push_back({"Write", "{}", "sonata_main_0"});
    EXPECT_EQ(current_step(script.main, facts), 2) << "Notebook cannot take a path: passed over";
    EXPECT_EQ(resolve_move(script, context(), facts),
              tool_move("edit",
                        R"({"file_path":"/ws/project/a.txt","new_string":"A","old_string":""})",
                        "sonata_main_2", 2, true, "a.txt"));
    facts.tool_calls.push_back({"edit", "{}", "sonata_main_2"});
    EXPECT_EQ(resolve_move(script, context(), facts),
              tool_move("MultiEdit",
                        R"({"edits":[{"newString":"A","oldString":""}],)"
                        R"("filePath":"/ws/project/a.txt"})",
                        "sonata_main_3", 3, true, "a.txt"));
    facts.tool_calls.push_back({"MultiEdit", "{}", "sonata_main_3"});
    EXPECT_EQ(resolve_move(script, context(), facts),
              tool_move("Bash", R"({"command":"true"})", "sonata_main_4", 4, true));
    // A harness that offers none of the named tools: the shell follows the write at once.
    auto plain = offering({"Write", "Bash"});
    plain.tool_calls.push_back({"Write", "{}", "sonata_main_0"});
    EXPECT_EQ(current_step(script.main, plain), 4);
    plain.tool_calls.push_back({"Bash", "{}", "sonata_main_4"});
    Move final_move;
    final_move.text = "end";
    EXPECT_EQ(resolve_move(script, context(), plain), final_move);
}

TEST(ScriptResolve, ATuiRunsTrackIsInTheInstructionsItsLineNames) {
    // A TUI run is typed one line naming its instructions; the marker is in that file.
    const auto script = must_parse(
        R"({"steps":[],"subagents":{"SUB-9":{"steps":[],"final":"sub end"}},"final":"main"})");
    testing::ScratchDir dir;
    const std::string file = dir.make_dir("run") + "/instructions.md";
    testing::write_text(file, "# Task\n\nDo it. SUB-9\n");
    auto facts = offering({"Bash"});
    facts.user_text = dispatch::typed_task(file);
    EXPECT_EQ(select_track(script, facts), "SUB-9");
    facts.user_text = dispatch::typed_task(dir.path() + "/missing/instructions.md");
    EXPECT_EQ(select_track(script, facts), "");
}

TEST(ScriptResolve, SubagentConversationsFollowTheirOwnTrack) {
    const auto script =
        must_parse(R"({"steps":[{"intent":"delegate","task":"please SUB-7","marker":"SUB-7"}],
        "subagents":{"SUB-7":{"steps":[{"intent":"shell","command":"touch escaped"}],"final":"sub end"}}})");
    auto sub = offering({"Bash"});
    sub.user_text = "please SUB-7";
    EXPECT_EQ(select_track(script, sub), "SUB-7");
    auto expected = tool_move("Bash", R"({"command":"touch escaped"})", "sonata_", 0, true);
    const auto move = resolve_move(script, context(), sub);
    expected.track = "SUB-7";
    expected.call_id = move.call_id;
    EXPECT_EQ(move, expected);
    EXPECT_EQ(move.call_id.rfind("sonata_", 0), 0U);
    EXPECT_NE(move.call_id, "sonata_main_0");

    // The conversation that delegated holds the marker in its own call: it stays on the main track.
    auto main = offering({"Task", "Bash"});
    main.user_text = "the user's task; the sub-agent said: please SUB-7";
    main.tool_calls.push_back({"Task", R"({"prompt":"please SUB-7"})"});
    EXPECT_EQ(select_track(script, main), "");
    Move final_move;
    final_move.text = "done";
    EXPECT_EQ(resolve_move(script, context(), main), final_move);
}

// --- well-formed adversarial calls ----------------------------------------------------------

adapters::ToolVocabulary with_agents() {
    auto v = claude_like();
    v.delegate_agent_field = "subagent_type";
    v.delegate_agents = {"general-purpose", "general"};
    return v;
}

ConversationFacts offering_task(const std::string& schema, const std::string& description) {
    ConversationFacts facts;
    facts.tools.push_back({"Task", "function", schema, description});
    return facts;
}

const char* k_delegate = R"({"steps":[{"intent":"delegate","task":"go M-1","marker":"M-1"}],
                             "subagents":{"M-1":{"steps":[]}}})";

std::string agent_of(const Move& move) {
    const auto args = nlohmann::json::parse(move.arguments_json);
    return args.value("subagent_type", "");
}

TEST(ScriptWellFormed, NamesASubAgentTheSchemaEnumLists) {
    const auto facts = offering_task(
        R"({"type":"object","properties":{"prompt":{"type":"string"},
            "subagent_type":{"type":"string","enum":["Explore","general-purpose"]}}})",
        "");
    EXPECT_EQ(agent_of(resolve_move(must_parse(k_delegate), context(with_agents()), facts)),
              "general-purpose");
    // An enum without any usual name: its first value, never an invented one.
    const auto other = offering_task(
        R"({"type":"object","properties":{"subagent_type":{"type":"string","enum":["Scout"]}}})",
        "");
    EXPECT_EQ(agent_of(resolve_move(must_parse(k_delegate), context(with_agents()), other)),
              "Scout");
}

TEST(ScriptWellFormed, NamesASubAgentTheDescriptionLists) {
    const auto facts =
        offering_task(R"({"type":"object","properties":{"subagent_type":{"type":"string"}}})",
                      "Available agent types:\n- explore: search\n- general: anything");
    EXPECT_EQ(agent_of(resolve_move(must_parse(k_delegate), context(with_agents()), facts)),
              "general");
    // A name inside a longer one does not count ("general-purpose-ish" is not general-purpose).
    const auto longer =
        offering_task(R"({"type":"object","properties":{"subagent_type":{"type":"string"}}})",
                      "- general-purpose-ish: no\n- general: yes");
    EXPECT_EQ(agent_of(resolve_move(must_parse(k_delegate), context(with_agents()), longer)),
              "general");
}

TEST(ScriptWellFormed, LeavesOutAnAgentArgumentTheSchemaDoesNotHave) {
    const auto facts =
        offering_task(R"({"type":"object","properties":{"prompt":{"type":"string"}}})", "");
    const auto move = resolve_move(must_parse(k_delegate), context(with_agents()), facts);
    EXPECT_EQ(move.arguments_json, R"({"prompt":"go M-1"})");
}

TEST(ScriptWellFormed, RetriesOnceWithTheNameARefusalOffers) {
    auto ctx = context(with_agents());
    ctx.refusals.bad_arguments = {"Agent type '*' not found"};
    const auto script = must_parse(k_delegate);
    auto facts = offering_task("", "");
    facts.tool_calls.push_back({"Task", R"({"prompt":"go M-1","subagent_type":"general-purpose"})",
                                "toolu_sonata_main_0"});
    facts.tool_results.push_back(
        {"toolu_sonata_main_0",
         "Agent type 'general-purpose' not found. Available agents: Scout, Plan", true});
    const auto retry = resolve_move(script, ctx, facts);
    EXPECT_EQ(retry.kind, MoveKind::tool_call);
    EXPECT_EQ(retry.step, 0);
    EXPECT_EQ(retry.call_id, "sonata_main_0_retry");
    EXPECT_EQ(agent_of(retry), "Scout");

    // The retry does not count as a step (two calls, one step done), and it is made once: a
    // refused retry ends the track.
    facts.tool_calls.push_back(
        {"Task", R"({"prompt":"go M-1","subagent_type":"Scout"})", "toolu_sonata_main_0_retry"});
    EXPECT_EQ(current_step(script.main, facts, ctx.refusals), 1);
    EXPECT_EQ(current_step(script.main, facts), 1);
    facts.tool_results.push_back({"toolu_sonata_main_0_retry",
                                  "Agent type 'Scout' not found. Available agents: Plan", true});
    EXPECT_EQ(resolve_move(script, ctx, facts).kind, MoveKind::final_text);
}

TEST(ScriptWellFormed, NoRetryWithoutANameOrForAPermissionRefusal) {
    auto ctx = context(with_agents());
    ctx.refusals.bad_arguments = {"Unknown agent '*'"};
    ctx.refusals.not_permitted = {"denied by rule"};
    const auto script = must_parse(k_delegate);
    for (const std::string text :
         {"Unknown agent 'general-purpose'", "Unknown agent 'x' denied by rule. Valid: Scout"}) {
        auto facts = offering_task("", "");
        facts.tool_calls.push_back({"Task", R"({"prompt":"go M-1"})", "call_sonata_main_0"});
        facts.tool_results.push_back({"call_sonata_main_0", text, false});
        EXPECT_EQ(resolve_move(script, ctx, facts).kind, MoveKind::final_text) << text;
    }
}

TEST(ScriptWellFormed, ARetryIsRecognisedWhereTheHarnessDropsCallIds) {
    auto ctx = context(with_agents());
    ctx.refusals.bad_arguments = {"Unknown agent '*'"};
    Track track;
    track.steps = {make(IntentKind::delegate), make(IntentKind::delegate)};
    ConversationFacts facts;
    facts.tool_calls = {{"Task", "{}"}, {"Task", "{}"}};
    facts.tool_results = {{"", "Unknown agent 'a'. Available agents: b", false}, {"", "ok", false}};
    EXPECT_EQ(current_step(track, facts, ctx.refusals), 1);
    facts.tool_results[0].text = "ok";
    EXPECT_EQ(current_step(track, facts, ctx.refusals), 2);
}

TEST(ScriptWellFormed, ReadsRefusalsAndTheirChoices) {
    const adapters::RefusalTexts own{{"Subagent '*' not found"}, {"denied by policy"}};
    EXPECT_TRUE(refused_for_arguments("Subagent 'x' not found.", own));
    EXPECT_FALSE(refused_for_arguments("Subagent 'x' finished.", own));
    // `*` stays within a line.
    EXPECT_FALSE(refused_for_arguments("Subagent 'x'\nnot found", own));
    EXPECT_TRUE(refused_for_arguments("params must have required property 'prompt'", {}));
    EXPECT_FALSE(refused_for_arguments("Tool execution denied by policy: invalid arguments", own));
    EXPECT_FALSE(refused_for_arguments("unsupported call: spawn_agent", own));
    EXPECT_EQ(offered_choices("Agent type 'x' not found. Available agents: claude, Explore, "
                              "general-purpose, Plan"),
              (std::vector<std::string>{"claude", "Explore", "general-purpose", "Plan"}));
    EXPECT_EQ(offered_choices("Subagent \"x\" not found. Available subagents: general-purpose, "
                              "Explore\nmore text: here"),
              (std::vector<std::string>{"general-purpose", "Explore"}));
    EXPECT_TRUE(offered_choices("Unknown agent 'x'").empty());
}

TEST(ScriptWellFormed, WrapsADelegationInTheEnvelopeItsToolNeeds) {
    auto v = claude_like();
    v.delegate = {"use_capability", "task"};
    v.delegate_envelope_tool = "use_capability";
    v.delegate_envelope = R"({"action":"call","capability_id":"tool:task","arguments":{"d":"x"}})";
    const auto wrapped =
        resolve_move(must_parse(k_delegate), context(v), offering({"use_capability"}));
    EXPECT_EQ(
        wrapped.arguments_json,
        R"({"action":"call","arguments":{"d":"x","prompt":"go M-1"},"capability_id":"tool:task"})");
    // Another delegate tool takes its arguments directly.
    EXPECT_EQ(resolve_move(must_parse(k_delegate), context(v), offering({"task"})).arguments_json,
              R"({"prompt":"go M-1"})");
}

TEST(ScriptWellFormed, CallsAToolOfADeferredNamespaceByItsFullName) {
    auto v = claude_like();
    v.delegate = {"spawn_agent", "multi_agent_v1.spawn_agent"};
    ConversationFacts facts = offering({"exec_command"});
    facts.deferred_namespaces = {"multi_agent_v1"};
    const auto move = resolve_move(must_parse(k_delegate), context(v), facts);
    EXPECT_EQ(move.tool, "multi_agent_v1.spawn_agent");
    EXPECT_TRUE(move.tool_offered);
    facts.deferred_namespaces.clear();
    EXPECT_EQ(resolve_move(must_parse(k_delegate), context(v), facts).tool, "spawn_agent");
}

} // namespace
} // namespace sonata::probes
