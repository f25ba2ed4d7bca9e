// Claude Code's interactive TUI in a private tmux session, driven as a user drives it: wait for
// the input box, type the prompt, wait until the scripted model has served its final answer and
// the turn is over, then /exit (or close its terminal). Each step has its own bound; one that runs
// out fails the test with the last screen seen.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/process.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::testing {

/// How a session ends once its turn is over.
enum class TuiEnd {
    exit,           ///< /exit, and claude exits by itself (`SonataRun::exit_code`).
    close_terminal, ///< Its terminal closes (the tmux server ends; claude is hung up), as a user's
                    ///< window does: /exit would offer to stop claude's background tasks.
};

/// One TUI session of claude.
struct ClaudeTui {
    std::vector<std::string> argv; ///< claude (absolute) and its flags, no -p.
    Environment env;               ///< The pane's whole environment.
    std::string cwd;
    std::string socket_dir;         ///< Where the private tmux server's socket goes.
    std::string prompt;             ///< Typed into the input box, then Enter; empty: nothing.
    std::string final_text;         ///< The model's last answer, shown once the turn is over.
    std::function<bool()> finished; ///< True once the model served its final answer.
    /// While the session waits for `finished`: the keys a user presses at this screen (a form
    /// to answer), or none. Empty: the user presses nothing.
    std::function<std::vector<std::string>(const std::string& screen)> respond = {};
    TuiEnd end = TuiEnd::exit;
};

/// Runs `tui` from its start to its end: `out` gets the pane's exit code and whole transcript,
/// `tmux_server` the private tmux server's pid. The server and the pane are gone on return. False,
/// with a failure that shows the last screen, when a step did not happen within its bound.
bool run_claude_tui(const ClaudeTui& tui, SonataRun& out, int& tmux_server);

} // namespace sonata::testing
