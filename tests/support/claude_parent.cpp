#include "tests/support/claude_parent.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "adapters/registry.hpp"
#include "core/node_runtime.hpp"
#include "probes/script.hpp"
#include "tests/support/claude_tui.hpp"
#include "tests/support/nothing_left.hpp"
#include "tests/support/pins.hpp"

namespace sonata::testing {

nlohmann::json dispatch_call(const nlohmann::json& args) {
    return {{"intent", "call_tool"}, {"name", "mcp__sonata__dispatch"}, {"args", args}};
}

nlohmann::json child_report_script(const nlohmann::json& steps, const std::string& marker,
                                   const std::string& report) {
    return {{"steps", steps},
            {"final", "claude is done"},
            {"subagents", {{marker, {{"steps", nlohmann::json::array()}, {"final", report}}}}}};
}

void ClaudeParentFixture::SetUp() {
    const char* path = std::getenv("PATH");
    m_path = path != nullptr ? path : "/usr/bin:/bin";
    for (const char* name : {"claude", "pi", "reasonix"}) {
        if (!search_path(name, m_path)) {
            const std::string why = missing_harness_skip_reason();
            if (why.empty()) FAIL() << name << " is not installed although npm answered";
            GTEST_SKIP() << name << " is not installed: " << why;
        }
    }
    m_claude = *search_path("claude", m_path);
}

void ClaudeParentFixture::run_parent(const json& script, const std::string& allowed, ParentRun& out,
                                     Setup setup, const std::string& vocabulary) {
    prepare(script, allowed, setup, vocabulary);
    if (HasFatalFailure()) return;
    std::vector<std::string> argv = {m_claude, "-p", k_parent_prompt};
    argv.insert(argv.end(), m_claude_args.begin(), m_claude_args.end());
    out.claude = run_program(argv, m_claude_env, m_scratch->workspace());
    collect(out);
}

bool main_saw(const probes::ModelServer& server, const std::string& text) {
    const auto requests = server.recording();
    return std::any_of(requests.begin(), requests.end(), [&](const probes::RequestRecord& r) {
        return r.track.empty() &&
               std::find(r.watched.begin(), r.watched.end(), text) != r.watched.end();
    });
}

void ClaudeParentFixture::run_parent_tui(const json& script, const std::string& allowed,
                                         ParentRun& out, Setup setup,
                                         const std::string& vocabulary) {
    run_parent_tui(script, allowed, out, TuiParent{}, setup, vocabulary);
}

void ClaudeParentFixture::run_parent_tui(const json& script, const std::string& allowed,
                                         ParentRun& out, const TuiParent& parent, Setup setup,
                                         const std::string& vocabulary) {
    prepare(script, allowed, setup, vocabulary, parent.mode);
    if (HasFatalFailure()) return;
    seed_tui_settings();
    m_final_text = script.value("final", "done");
    run_tui_session(parent, out);
}

void ClaudeParentFixture::continue_parent_tui(const TuiParent& parent, ParentRun& out) {
    ASSERT_TRUE(m_server) << "no session left its world for another";
    run_tui_session(parent, out);
}

void ClaudeParentFixture::run_tui_session(const TuiParent& parent, ParentRun& out) {
    ClaudeTui tui;
    tui.argv = {m_claude};
    tui.argv.insert(tui.argv.end(), m_claude_args.begin(), m_claude_args.end());
    tui.argv.insert(tui.argv.end(), parent.args.begin(), parent.args.end());
    tui.env = m_claude_env;
    for (const auto& [key, value] : parent.env)
        tui.env[key] = value;
    tui.env.erase("TERM"); // the pane's terminal is tmux's
    tui.cwd = m_scratch->workspace();
    tui.socket_dir = m_scratch->tmp();
    tui.prompt = parent.prompt;
    tui.final_text = m_final_text;
    tui.end = parent.end;
    const probes::ModelServer& server = *m_server;
    tui.respond = parent.respond;
    tui.finished = [&server, &parent] {
        return parent.finished ? parent.finished(server) : server.main_finished();
    };
    int tmux_server = 0;
    const bool driven = run_claude_tui(tui, out.claude, tmux_server);
    m_tmux_servers.push_back(tmux_server);
    record(out);
    if (parent.next == NextSession::none || !driven) {
        m_server.reset();
        for (const int pid : m_tmux_servers)
            expect_nothing_left(m_dir.path(), pid);
    }
    ASSERT_TRUE(driven) << "what the model server saw:\n" << out.recording;
}

void ClaudeParentFixture::prepare(const json& script, const std::string& allowed, Setup setup,
                                  const std::string& vocabulary, const std::string& mode) {
    start_world(script, vocabulary);
    if (HasFatalFailure()) return;
    m_claude_args = {"--permission-mode", mode, "--allowedTools=" + allowed};
    install_sonata(setup);
}

void ClaudeParentFixture::start_world(const json& script, const std::string& vocabulary) {
    auto runner = make_system_runner();
    auto scratch = probes::Scratch::create(m_dir.path(), "", *runner);
    ASSERT_TRUE(scratch) << scratch.error().message;
    m_scratch.emplace(std::move(*scratch));
    auto parsed = probes::parse_script(script.dump());
    ASSERT_TRUE(parsed) << parsed.error().message;
    const auto& claude = **adapters::find_adapter("claude");
    m_server = std::make_unique<probes::ModelServer>(
        *parsed, (*adapters::find_adapter(vocabulary))->tools(), m_scratch->workspace());
    ASSERT_TRUE(m_server->start());
    adapters::EndpointSpec endpoint;
    endpoint.base_url = m_server->base_url();
    endpoint.home = m_scratch->home();
    endpoint.workspace = m_scratch->workspace();
    Invocation parent;
    parent.argv = {m_claude};
    auto injected = claude.inject_endpoint(parent, endpoint);
    ASSERT_TRUE(injected) << injected.error().message;
    ASSERT_TRUE(m_scratch->write_files(injected->files));
    m_env = m_scratch->environment(current_environment());
    m_env["PATH"] = m_path;
    // The Node.js runtimes a user's own harness cache holds (pi 1.x needs Node.js 22): the
    // scratch HOME has none.
    if (const auto runtimes = harness_runtimes_dir(current_environment()); !runtimes.empty())
        m_env["SONATA_RUNTIMES_DIR"] = runtimes;
    for (const char* child : {"pi", "reasonix"}) {
        Invocation inv;
        inv.argv = {child};
        auto config = (*adapters::find_adapter(child))->inject_endpoint(inv, endpoint);
        ASSERT_TRUE(config) << config.error().message;
        ASSERT_TRUE(m_scratch->write_files(config->files));
        for (const auto& [key, value] : config->invocation.env)
            if (key != "REASONIX_HOME") m_env[key] = value; // reasonix reads ~/.reasonix
    }
    write_text(m_scratch->home() + "/.pi/agent/settings.json",
               json{{"defaultProvider", "sonata-probe"}, {"defaultModel", endpoint.model}}.dump());
    m_claude_env = m_env;
    for (const auto& [key, value] : injected->invocation.env)
        m_claude_env[key] = value;
}

void ClaudeParentFixture::install_sonata(Setup setup) {
    const std::string workspace = m_scratch->workspace();
    if (setup == Setup::plugin) {
        // The plugin from this repository's marketplace, as its README installs it: it brings
        // the hook and the MCP server, started as `sonata` from PATH.
        m_env["PATH"] = std::filesystem::path(SONATA_BIN).parent_path().string() + ":" + m_path;
        m_claude_env["PATH"] = m_env["PATH"];
        for (const std::vector<std::string>& step :
             {std::vector<std::string>{m_claude, "plugin", "marketplace", "add", SONATA_SOURCE_DIR},
              std::vector<std::string>{m_claude, "plugin", "install", "sonata@sonata"}}) {
            const auto r = run_program(step, m_claude_env, workspace);
            ASSERT_EQ(r.exit_code, 0) << step[2] << ": " << r.out << r.err;
        }
        write_text(workspace + "/sonata.toml", "");
    } else if (setup == Setup::global_init) {
        // For every project: the hook in ~/.claude/settings.json, the server in ~/.claude.json
        // (Claude Code's user scope, beside what the endpoint injection wrote there).
        const auto init = run_sonata({"init", "--scope", "global", "--yes"}, m_env, workspace);
        ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
        write_text(workspace + "/sonata.toml", "");
    } else {
        // The hook, the MCP server and sonata.toml, as a user's `sonata init` installs them.
        const auto init = run_sonata({"init", "--yes"}, m_env, workspace);
        ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
        // init registered `sonata mcp` in the project's .mcp.json; claude reads that only.
        m_claude_args.insert(m_claude_args.end(),
                             {"--strict-mcp-config", "--mcp-config", workspace + "/.mcp.json"});
    }
}

void ClaudeParentFixture::seed_tui_settings() {
    // ~/.claude.json holds the onboarding and key approval the endpoint injection wrote (and the
    // user-scope server of a global init). A folder not yet trusted gets the trust card; the MCP
    // servers here come from --mcp-config, the user's scope or the plugin, none of which asks.
    const std::string path = m_scratch->home() + "/.claude.json";
    auto config = json::parse(read_text(path));
    config["projects"][m_scratch->workspace()]["hasTrustDialogAccepted"] = true;
    write_text(path, config.dump(2));
}

void ClaudeParentFixture::record(ParentRun& out) const {
    for (const auto& result : m_server->tool_results())
        if (result.track.empty()) out.results.push_back(result);
    out.recording = probes::recording_to_json(m_server->recording(), m_server->tool_results());
    out.env = m_env;
    out.workspace = m_scratch->workspace();
}

void ClaudeParentFixture::collect(ParentRun& out) {
    record(out);
    m_server.reset();
}

} // namespace sonata::testing
