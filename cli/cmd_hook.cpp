// `sonata hook`: Claude Code's PreToolUse hook. Records the session's permission mode; always
// exits 0 and prints nothing, so it can never change Claude Code's decision about a tool call.
// run() in app.cpp dispatches a bare `sonata hook` here before building the CLI11 app.
#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "core/session.hpp"

namespace sonata::cli {

void add_hook(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "hook",
        "Claude Code PreToolUse hook: record the session's permission mode (reads hook JSON on "
        "stdin, always exits 0, prints nothing); installed by `sonata init`");
    cmd->callback([&action] {
        action = [](const Context& context) -> Result<int> { return run_hook(context.env); };
    });
}

} // namespace sonata::cli
