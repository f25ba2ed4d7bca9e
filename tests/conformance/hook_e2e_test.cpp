// The PreToolUse hook end to end: the real Claude Code (the pinned one, when installed), set up
// with `sonata init` in a temporary project and driven by the scripted model into calling a tool,
// runs the hook init installed (the build's `sonata-hook`), which records the mode claude was
// started in.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "core/process.hpp"
#include "probes/model_server.hpp"
#include "probes/probe.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string path_var() {
    const char* path = std::getenv("PATH");
    return path == nullptr ? "/usr/bin:/bin" : path;
}

class HookEndToEnd : public ::testing::TestWithParam<std::string> {};

TEST_P(HookEndToEnd, RealClaudeRecordsTheModeItRunsIn) {
    const std::string mode = GetParam();
    const auto claude = search_path("claude", path_var());
    if (!claude) {
        const std::string why = testing::missing_harness_skip_reason();
        if (why.empty()) FAIL() << "claude is not installed although the npm registry answered";
        GTEST_SKIP() << "claude is not installed: " << why;
    }
    auto adapter = adapters::find_adapter("claude");
    ASSERT_TRUE(adapter);

    testing::ScratchDir dir;
    Environment env = testing::hermetic_env(dir);
    env["PATH"] = path_var();
    const std::string project = dir.make_dir("project");
    const auto init = testing::run_sonata({"init", "--scope", "project", "--yes"}, env, project);
    ASSERT_EQ(init.exit_code, 0) << init.err;
    ASSERT_NE(testing::read_text(project + "/.claude/settings.json").find(SONATA_HOOK_BIN),
              std::string::npos);

    probes::Script script;
    script.main.steps = {probes::shell_intent("ls")}; // any tool call fires PreToolUse
    probes::ModelServer server(script, (*adapter)->tools(), project);
    ASSERT_TRUE(server.start());
    Invocation invocation;
    invocation.argv = {*claude, "-p", "--permission-mode", mode, "--output-format", "json"};
    adapters::EndpointSpec endpoint;
    endpoint.base_url = server.base_url();
    endpoint.home = env.at("HOME");
    endpoint.workspace = project;
    auto injected = (*adapter)->inject_endpoint(invocation, endpoint);
    ASSERT_TRUE(injected);
    for (const auto& file : injected->files)
        testing::write_text(file.path, file.content);

    ProcessRequest request;
    request.argv = injected->invocation.argv;
    request.argv.emplace_back("List the files here.");
    request.env = env;
    for (const auto& [key, value] : injected->invocation.env)
        request.env[key] = value;
    request.cwd = project;
    request.timeout = std::chrono::minutes(3);
    auto result = make_system_runner()->run(request);
    ASSERT_TRUE(result);
    ASSERT_EQ(result->exit_code, 0) << result->out << result->err;
    const auto out = json::parse(result->out);
    const std::string session = out.at("session_id");

    bool tool_called = false;
    for (const auto& r : server.recording())
        tool_called = tool_called || !r.tool_calls.empty();
    ASSERT_TRUE(tool_called) << "the scripted model never asked for a tool";
    const std::string record_path = project + "/.sonata/session-" + session + ".json";
    ASSERT_TRUE(fs::exists(record_path)) << "the hook wrote no session file for " << session;
    const auto record = json::parse(testing::read_text(record_path));
    EXPECT_EQ(record.at("mode"), mode);

    // `sonata plan --session` now takes the parent's mode from that file.
    const auto plan = testing::run_sonata(
        {"plan", "--harness", "codex", "--session", session, "--json"}, env, project);
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    const auto planned = json::parse(plan.out);
    EXPECT_EQ(planned.at("parent_mode"), mode);
    EXPECT_EQ(planned.at("mode_source"), "session-file");
}

INSTANTIATE_TEST_SUITE_P(Modes, HookEndToEnd, ::testing::Values("default", "acceptEdits", "plan"));

} // namespace
} // namespace sonata
