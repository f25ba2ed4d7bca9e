// A TUI run inside tmux, on a tmux server of sonata's own (`tmux -L sonata-…`), never the user's.
// Every tmux call is an argv vector through the ProcessRunner.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "core/result.hpp"

namespace sonata {

/// What a TmuxSession runs in its one pane.
struct TmuxSpec {
    /// The pane's program. argv[0] is absolute or looked up on the PATH of `env`; tmux execs it
    /// directly, never through a shell.
    std::vector<std::string> argv;
    /// The pane process's environment, passed with `new-session -e`. The server itself starts with
    /// an empty environment, so nothing of sonata's leaks in; tmux adds only what a terminal
    /// multiplexer sets (TERM, TERM_PROGRAM, TERM_PROGRAM_VERSION, TMUX, TMUX_PANE, PWD, SHELL, and
    /// PATH when `env` has none).
    Environment env;
    std::string cwd; ///< The pane's working directory. Empty: sonata's.
    /// Variables the server process itself carries (a run's marker), so that a pid found later can
    /// be told to be this session's server; they are not passed on to the pane through tmux's
    /// global environment.
    Environment server_env = {};
    int width = 200;
    int height = 50;
    /// The tmux executable: absolute, or looked up on the PATH of `env`.
    std::string tmux = "tmux";
    /// Where the server's socket directory goes (TMUX_TMPDIR). Empty, or too deep for a socket
    /// path: tmux's default under /tmp.
    std::string socket_dir;
    std::chrono::milliseconds command_timeout{10'000}; ///< For each tmux command.
};

/// Whether the pane's process is still running and, once it is not, how it ended.
struct PaneStatus {
    bool exited = false;
    int exit_code = -1;  ///< 0–255, or 128+N after death by signal N; -1 while running.
    int term_signal = 0; ///< N when killed by a signal, else 0.

    bool operator==(const PaneStatus&) const = default;
};

/// The outcome of waiting for the pane: whether it matched and the last screen seen.
struct PaneWait {
    bool matched = false;
    std::string screen;
};

/// The argv of a tmux client (`tmux`, absolute) that attaches a terminal to the one session of the
/// sonata tmux server listening on `socket_path`.
std::vector<std::string> tmux_attach_argv(const std::string& tmux, const std::string& socket_path);

/// One detached tmux session running one program, on a private server that the destructor kills:
/// nothing (server, pane process, socket) is left behind.
class TmuxSession {
public:
    /// Starts the private server and the session. An error means tmux or the program could not
    /// be started; a program that starts and fails shows in status().
    static Result<std::unique_ptr<TmuxSession>> start(ProcessRunner& runner, const TmuxSpec& spec);

    ~TmuxSession();
    TmuxSession(const TmuxSession&) = delete;
    TmuxSession& operator=(const TmuxSession&) = delete;

    /// Types `text` literally (`send-keys -l`): no key names, no shell.
    Result<void> type_text(std::string_view text);
    /// Sends named keys such as "Enter", "Escape" or "C-d".
    Result<void> send_keys(const std::vector<std::string>& keys);
    /// The visible screen (`capture-pane -p`), one line per row.
    Result<std::string> capture();
    /// The scrollback and the visible screen together (`capture-pane -p -S -`).
    Result<std::string> capture_history();
    /// Polls the visible screen until `matches` holds, the pane's process has exited and the
    /// screen still does not match, or `timeout` passes.
    Result<PaneWait> wait_until(const std::function<bool(const std::string&)>& matches,
                                std::chrono::milliseconds timeout,
                                std::chrono::milliseconds poll = std::chrono::milliseconds(50));
    /// Polls until the pane's process has exited or `timeout` passes; returns the last status.
    Result<PaneStatus> wait_for_exit(std::chrono::milliseconds timeout);
    /// Whether the pane's process has exited (remain-on-exit keeps the pane) and its status.
    Result<PaneStatus> status();

    const std::string& socket_name() const { return m_socket; }
    const std::string& socket_path() const { return m_socket_path; }
    /// The argv of a client that attaches a terminal to this session (`sonata attach`).
    std::vector<std::string> attach_argv() const { return tmux_attach_argv(m_tmux, m_socket_path); }
    int server_pid() const { return m_server_pid; }
    int pane_pid() const { return m_pane_pid; } ///< Also the pane's process-group id.

private:
    TmuxSession(ProcessRunner& runner, std::string tmux, std::string socket, Environment client_env,
                std::chrono::milliseconds timeout);
    /// Runs one tmux client with `commands` joined by ';'.
    Result<std::string> run_tmux(const std::vector<std::vector<std::string>>& commands);
    void shutdown();

    ProcessRunner& m_runner;
    std::string m_tmux;
    std::string m_socket;
    Environment m_client_env;
    std::chrono::milliseconds m_timeout;
    int m_server_pid = 0;
    int m_pane_pid = 0;
    std::string m_socket_path;
};

} // namespace sonata
