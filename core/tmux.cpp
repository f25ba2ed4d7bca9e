// TmuxSession: a private tmux server (own socket, empty environment, no config file) running one
// detached session whose pane stays after its process ends (remain-on-exit), so the exit status
// can be read.
// Checked against tmux 3.3a: one-argument commands run through `sh -c` (so a one-element argv goes
// through `env`), an argument ending in ';' ends a command, and `-c` is format-expanded.
#include "core/tmux.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <sys/wait.h>

#include "core/proc_stat.hpp"

namespace sonata {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const std::string k_session = "sonata";
const std::string k_target = "=" + k_session + ":"; ///< The session's current (only) pane.
constexpr milliseconds k_exit_grace{1'000};
constexpr std::size_t k_max_socket_path = 107;

/// tmux reads an argument ending in ';' as the end of a command; "\;" at the end is a literal ';'.
std::string escape_argument(std::string arg) {
    if (!arg.empty() && arg.back() == ';') {
        arg.pop_back();
        arg += "\\;";
    }
    return arg;
}

/// `-c` is expanded as a tmux format, where '#' starts a directive.
std::string escape_format(const std::string& text) {
    std::string out;
    for (const char c : text) {
        out += c;
        if (c == '#') out += '#';
    }
    return out;
}

std::string unique_socket_name() {
    static std::atomic<unsigned> counter{0};
    std::random_device random;
    return fmt::format("sonata-{}-{}-{:08x}", ::getpid(), counter++, random());
}

std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> fields(1);
    for (const char c : line) {
        if (c == ' ') {
            fields.emplace_back();
        } else if (c != '\n') {
            fields.back() += c;
        }
    }
    return fields;
}

int to_int(const std::string& text, int fallback) {
    try {
        return text.empty() ? fallback : std::stoi(text);
    } catch (const std::exception&) {
        return fallback;
    }
}

/// The wait status of `pid` if it is a zombie, from field 52 of /proc/<pid>/stat (Linux ≥ 3.5).
std::optional<int> zombie_status(int pid) {
    const auto fields = proc_stat_fields(pid);
    constexpr std::size_t k_state = 0;      // field 3
    constexpr std::size_t k_exit_code = 49; // field 52
    if (!fields || fields->size() <= k_exit_code || (*fields)[k_state] != "Z") return std::nullopt;
    return to_int((*fields)[k_exit_code], -1);
}

/// Waits until process `pid` is gone, reaping it when it is our child; SIGKILL after `grace`.
void await_gone(int pid, milliseconds grace) {
    const auto until = Clock::now() + grace;
    bool killed = false;
    for (;;) {
        const int reaped = ::waitpid(pid, nullptr, WNOHANG);
        if (reaped == pid || (reaped < 0 && errno == ECHILD && ::kill(pid, 0) != 0)) return;
        if (!killed && Clock::now() > until) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
        std::this_thread::sleep_for(milliseconds(2));
    }
}

/// Waits until process group `pgid` is empty, reaping members that came back to us.
void await_group_gone(int pgid, milliseconds grace) {
    const auto until = Clock::now() + grace;
    bool killed = false;
    for (;;) {
        while (::waitpid(-pgid, nullptr, WNOHANG) > 0) {
        }
        if (::kill(-pgid, 0) != 0) return;
        if (killed && Clock::now() > until + grace) return; // not ours to reap; it is dying
        if (!killed && Clock::now() > until) {
            ::kill(-pgid, SIGKILL);
            killed = true;
        }
        std::this_thread::sleep_for(milliseconds(2));
    }
}

} // namespace

TmuxSession::TmuxSession(ProcessRunner& runner, std::string tmux, std::string socket,
                         Environment client_env, milliseconds timeout)
    : m_runner(runner), m_tmux(std::move(tmux)), m_socket(std::move(socket)),
      m_client_env(std::move(client_env)), m_timeout(timeout) {}

Result<std::unique_ptr<TmuxSession>> TmuxSession::start(ProcessRunner& runner,
                                                        const TmuxSpec& spec) {
    if (spec.argv.empty()) return fail(ExitCode::failure, "tmux session: empty argv");
    const auto path_var = spec.env.find("PATH");
    const std::string path = path_var == spec.env.end() ? std::string() : path_var->second;
    auto tmux_path = search_path(spec.tmux, path);
    if (!tmux_path) {
        return fail(ExitCode::failure, "cannot start tmux: '" + spec.tmux + "' not found");
    }
    auto program = search_path(spec.argv[0], path);
    if (!program || ::access(program->c_str(), X_OK) != 0) {
        return fail(ExitCode::failure, "cannot start '" + spec.argv[0] + "' in tmux: not found");
    }
    const std::string socket = unique_socket_name();
    // A Unix socket path holds at most 107 bytes; a socket directory too deep for
    // <dir>/tmux-<uid>/<name> falls back to tmux's default directory (the socket is removed at
    // shutdown either way).
    const bool fits = spec.socket_dir.size() + socket.size() + 20 < k_max_socket_path;
    Environment client_env = spec.server_env;
    if (!spec.socket_dir.empty() && fits) client_env["TMUX_TMPDIR"] = spec.socket_dir;
    std::unique_ptr<TmuxSession> session(
        new TmuxSession(runner, *tmux_path, socket, client_env, spec.command_timeout));

    std::vector<std::string> create = {"new-session", "-d",
                                       "-s",          k_session,
                                       "-x",          std::to_string(spec.width),
                                       "-y",          std::to_string(spec.height)};
    if (!spec.cwd.empty()) create.insert(create.end(), {"-c", escape_format(spec.cwd)});
    for (const auto& [key, value] : spec.env) {
        create.insert(create.end(), {"-e", key + "=" + value});
    }
    create.emplace_back("--");
    if (spec.argv.size() == 1) { // tmux would run a lone argument through `sh -c`
        create.push_back(search_path("env", path).value_or("/usr/bin/env"));
        create.emplace_back("--");
    }
    create.push_back(*program);
    create.insert(create.end(), spec.argv.begin() + 1, spec.argv.end());

    std::vector<std::vector<std::string>> commands = {
        {"start-server"},
        {"set-option", "-g", "remain-on-exit", "on"},
        {"set-option", "-g", "remain-on-exit-format", ""},
    };
    for (const auto& [key, value] : client_env)
        commands.push_back({"set-environment", "-g", "-u", key});
    commands.push_back(create);
    SONATA_TRY(session->run_tmux(commands));

    auto ids = session->run_tmux(
        {{"display-message", "-p", "-t", k_target, "#{pid} #{pane_pid} #{socket_path}"}});
    SONATA_TRY(ids);
    const auto fields = split_fields(*ids);
    session->m_server_pid = to_int(fields[0], 0);
    session->m_pane_pid = fields.size() > 1 ? to_int(fields[1], 0) : 0;
    session->m_socket_path = fields.size() > 2 ? fields[2] : std::string();
    return session;
}

TmuxSession::~TmuxSession() { shutdown(); }

std::vector<std::string> tmux_attach_argv(const std::string& tmux, const std::string& socket_path) {
    return {tmux, "-S", socket_path, "attach-session", "-t", k_target};
}

Result<std::string> TmuxSession::run_tmux(const std::vector<std::vector<std::string>>& commands) {
    ProcessRequest request;
    request.argv = {m_tmux, "-L", m_socket, "-f", "/dev/null", "-u"};
    for (const auto& command : commands) {
        if (&command != &commands.front()) request.argv.emplace_back(";");
        for (const auto& arg : command)
            request.argv.push_back(escape_argument(arg));
    }
    request.env = m_client_env;
    request.timeout = m_timeout;
    auto result = m_runner.run(request);
    SONATA_TRY(result);
    const std::string& name = commands.back().front();
    if (result->timed_out) return fail(ExitCode::failure, "tmux " + name + " timed out");
    if (result->exit_code != 0) {
        return fail(ExitCode::failure, fmt::format("tmux {} failed (exit {}): {}", name,
                                                   result->exit_code, result->err));
    }
    return std::move(result->out);
}

Result<void> TmuxSession::type_text(std::string_view text) {
    if (text.empty()) return {};
    auto sent = run_tmux({{"send-keys", "-t", k_target, "-l", "--", std::string(text)}});
    SONATA_TRY(sent);
    return {};
}

Result<void> TmuxSession::send_keys(const std::vector<std::string>& keys) {
    std::vector<std::string> command = {"send-keys", "-t", k_target, "--"};
    command.insert(command.end(), keys.begin(), keys.end());
    auto sent = run_tmux({command});
    SONATA_TRY(sent);
    return {};
}

Result<std::string> TmuxSession::capture() {
    return run_tmux({{"capture-pane", "-p", "-t", k_target}});
}

Result<std::string> TmuxSession::capture_history() {
    return run_tmux({{"capture-pane", "-p", "-S", "-", "-t", k_target}});
}

Result<PaneStatus> TmuxSession::status() {
    auto line = run_tmux({{"display-message", "-p", "-t", k_target,
                           "#{pane_dead} #{pane_dead_status} #{pane_dead_signal}"}});
    SONATA_TRY(line);
    const auto fields = split_fields(*line);
    if (fields.size() != 3) return fail(ExitCode::failure, "unexpected tmux pane status: " + *line);
    // A pane is dead once its terminal closes; tmux knows the status only after reaping the
    // process, a moment later. Until then (or if the process lives on without its terminal) the
    // process counts as running.
    //
    // tmux 3.3a can miss the SIGCHLD of a process that exits while the pane is being set up
    // (libutempter resets SIGCHLD's handler, which discards a pending signal): the pane is dead
    // but its process stays an unreaped zombie for good. Its status is then read from /proc.
    PaneStatus status;
    if (fields[0] != "1") return status;
    if (fields[1].empty() && fields[2].empty()) {
        const auto zombie = m_pane_pid > 0 ? zombie_status(m_pane_pid) : std::nullopt;
        if (!zombie) return status;
        status.exited = true;
        status.term_signal = WIFSIGNALED(*zombie) ? WTERMSIG(*zombie) : 0;
        status.exit_code =
            status.term_signal != 0 ? 128 + status.term_signal : WEXITSTATUS(*zombie);
        return status;
    }
    status.exited = true;
    status.term_signal = to_int(fields[2], 0);
    status.exit_code = status.term_signal != 0 ? 128 + status.term_signal : to_int(fields[1], -1);
    return status;
}

Result<PaneWait> TmuxSession::wait_until(const std::function<bool(const std::string&)>& matches,
                                         milliseconds timeout, milliseconds poll) {
    const auto until = Clock::now() + timeout;
    for (;;) {
        auto screen = capture();
        SONATA_TRY(screen);
        if (matches(*screen)) return PaneWait{true, std::move(*screen)};
        if (Clock::now() >= until) return PaneWait{false, std::move(*screen)};
        auto state = status();
        SONATA_TRY(state);
        if (state->exited) { // the screen cannot change any more: one last look
            auto last = capture();
            SONATA_TRY(last);
            const bool matched = matches(*last);
            return PaneWait{matched, std::move(*last)};
        }
        std::this_thread::sleep_for(poll);
    }
}

Result<PaneStatus> TmuxSession::wait_for_exit(milliseconds timeout) {
    const auto until = Clock::now() + timeout;
    for (;;) {
        auto state = status();
        if (!state || state->exited || Clock::now() >= until) return state;
        std::this_thread::sleep_for(milliseconds(20));
    }
}

void TmuxSession::shutdown() {
    const auto state = status();
    const bool pane_running = state && !state->exited;
    (void)run_tmux({{"kill-server"}});
    if (m_server_pid > 0) await_gone(m_server_pid, k_exit_grace);
    // Closing the pane's terminal hangs its process up; one that ignores SIGHUP is killed.
    if (pane_running && m_pane_pid > 0) await_group_gone(m_pane_pid, k_exit_grace);
    if (!m_socket_path.empty()) ::unlink(m_socket_path.c_str());
}

} // namespace sonata
