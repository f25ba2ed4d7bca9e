// `sonata model-server --script FILE [--port N] [--harness H] [--workspace DIR] [--record FILE]`:
// the scripted model server on its own, for driving a harness by hand. It prints its URL, serves
// until SIGINT or SIGTERM, then prints the recording as JSON (or writes it to --record FILE).
//
// Script file (JSON): {"steps":[{"intent":"write_file","path":"x","content":"y"}, …],
// "final":"done", "subagents":{"MARKER":{"steps":[…],"final":"…"}}, "input_tokens":N}.
#include <pthread.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "adapters/registry.hpp"
#include "cli/app.hpp"
#include "core/fs.hpp"
#include "probes/model_server.hpp"

namespace sonata::cli {
namespace {

constexpr const char* k_script_help = R"(Script file format (JSON):
  {"steps": [ {"intent": "write_file", "path": "notes.txt", "content": "hi"},
              {"intent": "shell", "command": "rm victim"},
              {"intent": "delegate", "task": "Write x.txt", "marker": "SUB-1"},
              {"intent": "switch_mode"},                      (optional "tool": "ExitPlanMode")
              {"intent": "call_tool", "name": "Read", "args": {"file_path": "/etc/hostname"}},
              {"intent": "reply", "text": "first turn over"} ],
   "final": "done",
   "subagents": {"SUB-1": {"steps": [...], "final": "sub done"}},
   "input_tokens": 0}
Every intent may add "args": {...}, merged over the arguments the server computes. Each intent
uses the first of the harness's tools (--harness) that the request offers, else the harness's
usual name. The step a conversation is at is read from the conversation itself: its past tool
calls, plus its past replies that match a "reply" step. Requests without tools get short text.
A conversation whose user text holds a sub-agent marker follows that sub-agent's steps.)";

struct ModelServerArgs {
    std::string script;
    unsigned short port = 0;
    std::string harness;
    std::string workspace;
    std::string record;
};

// Without --harness: neutral tool names, so a hand-driven client can see what each intent becomes.
adapters::ToolVocabulary generic_vocabulary() {
    return {{"write_file"}, "path",   "content",          false, {"shell"}, "command",
            {"task"},       "prompt", {"exit_plan_mode"}, {},    "",        {}};
}

Result<adapters::ToolVocabulary> vocabulary_for(const std::string& harness) {
    if (harness.empty()) return generic_vocabulary();
    auto adapter = adapters::find_adapter(harness);
    SONATA_TRY(adapter);
    return (*adapter)->tools();
}

/// Replaces `path` with the recording: never opened for writing in place, so a FIFO (or a symlink)
/// there is replaced instead of blocking the exit or writing elsewhere.
Result<void> write_record(const std::string& path, const std::string& text) {
    if (auto ok = write_file_atomic(path, text + "\n"); !ok) {
        return fail(ExitCode::failure,
                    "cannot write the recording to " + path + " (" + ok.error().message + ")");
    }
    return {};
}

// Blocks SIGINT and SIGTERM in this thread (and so in the server threads it starts) and waits.
class SignalWait {
public:
    SignalWait() {
        sigemptyset(&m_set);
        sigaddset(&m_set, SIGINT);
        sigaddset(&m_set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &m_set, &m_old);
    }
    ~SignalWait() { pthread_sigmask(SIG_SETMASK, &m_old, nullptr); }
    SignalWait(const SignalWait&) = delete;
    SignalWait& operator=(const SignalWait&) = delete;

    void wait() const {
        int signal = 0;
        sigwait(&m_set, &signal);
    }

private:
    sigset_t m_set{};
    sigset_t m_old{};
};

Result<int> run_model_server(const ModelServerArgs& args, const Context& context) {
    auto script = probes::load_script(args.script);
    SONATA_TRY(script);
    auto vocabulary = vocabulary_for(args.harness);
    SONATA_TRY(vocabulary);
    const auto workspace =
        args.workspace.empty()
            ? std::filesystem::path(context.cwd)
            : std::filesystem::absolute(std::filesystem::path(context.cwd) / args.workspace);
    const SignalWait signals;
    probes::ModelServerOptions options;
    options.port = args.port;
    if (!args.harness.empty()) {
        if (auto adapter = adapters::find_adapter(args.harness))
            options.refusals = (*adapter)->refusal_texts();
    }
    probes::ModelServer server(std::move(*script), std::move(*vocabulary),
                               workspace.lexically_normal().string(), options);
    SONATA_TRY(server.start());
    std::cout << "sonata model-server listening on " << server.base_url() << std::endl;
    signals.wait();
    server.stop();
    const auto record = probes::recording_to_json(server.recording(), server.tool_results());
    if (args.record.empty()) {
        std::cout << record << std::endl;
        return 0;
    }
    SONATA_TRY(write_record(args.record, record));
    return 0;
}

} // namespace

void add_model_server(CLI::App& app, Action& action) {
    auto args = std::make_shared<ModelServerArgs>();
    auto* cmd = app.add_subcommand(
        "model-server", "Run the scripted model server on 127.0.0.1 until SIGINT/SIGTERM");
    cmd->add_option("--script", args->script, "Script file (JSON, see below)")->required();
    cmd->add_option("--port", args->port, "Port to listen on (default: an ephemeral port)");
    cmd->add_option("--harness", args->harness, "Use this harness's tool vocabulary");
    cmd->add_option("--workspace", args->workspace,
                    "Workspace that relative paths resolve against");
    cmd->add_option("--record", args->record, "Write the recording (JSON) here instead of stdout");
    cmd->footer(k_script_help);
    cmd->callback([&action, args] {
        action = [args](const Context& context) { return run_model_server(*args, context); };
    });
}

} // namespace sonata::cli
