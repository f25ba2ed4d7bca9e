// The system runner. Boost.Process v2 forks and execs the child (own process group, explicit
// environment, cwd, pipes); Boost.Asio drains the pipes, feeds stdin and runs the timers. The raw
// wait status is decoded here because Boost 1.81 folds `exit 9` and SIGKILL into one code. The end
// is ordered: the group is killed while the child is an unreaped zombie (so its pgid cannot have
// been reused), then the child is reaped, then the group's orphans, which come back to us.
#include "core/process.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <mutex>
#include <sstream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/process/v2/posix/default_launcher.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "core/fs.hpp"

namespace sonata {

std::optional<std::string> search_path(const std::string& name, const std::string& path_var) {
    if (name.find('/') != std::string::npos) return name;
    std::stringstream dirs(path_var);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) continue;
        const std::string candidate = dir + "/" + name;
        if (is_executable_file(candidate)) return candidate;
    }
    return std::nullopt;
}

namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t k_chunk = 64U * 1024U;
constexpr milliseconds k_orphan_reap_limit{2'000};

/// The executable to exec: argv[0] itself when it holds a '/', else its match on the env's PATH.
Result<std::string> resolve_executable(const ProcessRequest& request) {
    if (request.argv.empty()) return fail(ExitCode::failure, "cannot start a process: empty argv");
    const std::string& name = request.argv[0];
    std::string path = name;
    if (name.find('/') == std::string::npos) {
        const auto path_var = request.env.find("PATH");
        auto found =
            path_var == request.env.end() ? std::nullopt : search_path(name, path_var->second);
        if (!found) {
            return fail(ExitCode::failure, "cannot start '" + name + "': not found on its PATH");
        }
        path = *found;
    }
    const bool relative = path.front() != '/' && !request.cwd.empty();
    if (!is_executable_file(relative ? request.cwd + "/" + path : path)) {
        return fail(ExitCode::failure,
                    "cannot start '" + name + "': no executable file at " + path);
    }
    return path;
}

/// Closes every descriptor but those in `keep` (sorted here, in place: no allocation after fork).
/// Boost 1.81 means to do this but skips the gaps between whitelisted descriptors, so without it
/// a child inherits the write ends of its own pipes, and a daemon it starts (a tmux server) holds
/// our pipes open long after the child has exited.
void close_all_but(std::vector<int>& keep) {
    std::sort(keep.begin(), keep.end());
    unsigned int low = 0;
    for (const int fd : keep) {
        const auto high = static_cast<unsigned int>(fd);
        if (high > low) ::close_range(low, high - 1, 0);
        low = high + 1;
    }
    ::close_range(low, ~0U, 0);
}

/// Runs in the forked child before exec, after stdio is in place: its own process group, optional
/// cwd, no inherited descriptors, and a clean signal state (the runner's thread blocks SIGPIPE; a
/// child must not inherit that).
struct ChildSetup {
    const char* cwd = nullptr;

    template <class Launcher, class Path>
    boost::system::error_code on_exec_setup(Launcher& launcher, const Path&,
                                            const char* const*) const {
        if (::setpgid(0, 0) != 0) return {errno, boost::system::system_category()};
        if (cwd != nullptr && ::chdir(cwd) != 0) return {errno, boost::system::system_category()};
        close_all_but(launcher.fd_whitelist);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::signal(SIGPIPE, SIG_DFL);
        return {};
    }
};

/// Blocks SIGPIPE on this thread while a run writes to a child's stdin, then swallows the pending
/// SIGPIPE a closed pipe raised, so nothing process-wide changes.
class SigpipeGuard {
public:
    SigpipeGuard() {
        sigemptyset(&m_pipe);
        sigaddset(&m_pipe, SIGPIPE);
        ::pthread_sigmask(SIG_BLOCK, &m_pipe, &m_old);
    }
    ~SigpipeGuard() {
        if (sigismember(&m_old, SIGPIPE) == 1) return;
        const timespec zero{};
        while (::sigtimedwait(&m_pipe, nullptr, &zero) > 0) {
        }
        ::pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
    }
    SigpipeGuard(const SigpipeGuard&) = delete;
    SigpipeGuard& operator=(const SigpipeGuard&) = delete;

private:
    sigset_t m_pipe{};
    sigset_t m_old{};
};

/// At most `limit` bytes of a stream: the tail. Counts every byte seen.
class Tail {
public:
    explicit Tail(std::size_t limit) : m_limit(limit) {}
    void append(const char* data, std::size_t size) {
        m_total += size;
        if (size >= m_limit) {
            m_data.assign(data + (size - m_limit), m_limit);
            return;
        }
        m_data.append(data, size);
        if (m_data.size() > 2 * m_limit) m_data.erase(0, m_data.size() - m_limit);
    }
    std::string take() {
        if (m_data.size() > m_limit) m_data.erase(0, m_data.size() - m_limit);
        return std::move(m_data);
    }
    std::size_t total() const { return m_total; }

private:
    std::size_t m_limit;
    std::size_t m_total = 0;
    std::string m_data;
};

/// One output pipe being drained.
struct Drain {
    Drain(asio::io_context& io, std::size_t limit, OutputStream which)
        : pipe(io), tail(limit), stream(which), buffer(k_chunk) {}
    asio::readable_pipe pipe;
    Tail tail;
    OutputStream stream;
    std::vector<char> buffer;
    bool open = true;
};

/// Sends `sig` to the whole group. Only called while the leader is unreaped, so `pgid` is ours.
void kill_group(int pgid, int sig) { ::kill(-pgid, sig); }

int reap(int pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

/// Reaps what is left of the group that was reparented to us, until none of our children is in it.
void reap_orphans(int pgid) {
    const auto until = Clock::now() + k_orphan_reap_limit;
    for (;;) {
        const int reaped = ::waitpid(-pgid, nullptr, WNOHANG);
        if (reaped > 0 || (reaped < 0 && errno == EINTR)) continue;
        if (reaped < 0 || Clock::now() > until) return;
        std::this_thread::sleep_for(milliseconds(1));
    }
}

/// One run of one child, from launch to the last reaped orphan.
class Supervisor {
public:
    explicit Supervisor(const ProcessRequest& request)
        : m_request(request), m_in(m_io), m_out(m_io, request.max_output_bytes, OutputStream::out),
          m_err(m_io, request.max_output_bytes, OutputStream::err), m_exit_watch(m_io),
          m_limit(m_io), m_escalate(m_io), m_cancel_poll(m_io) {}

    Result<ProcessResult> run(const std::string& executable) {
        m_start = Clock::now();
        SONATA_TRY(launch(executable));
        read(m_out);
        read(m_err);
        feed_stdin();
        m_limit.expires_at(m_start + m_request.timeout);
        m_limit.async_wait([this](auto ec) {
            if (!ec) on_timeout();
        });
        poll_cancel();
        m_io.run();
        kill_group(m_pid, SIGKILL);
        const int status = reap(m_pid);
        reap_orphans(m_pid);
        return collect(status);
    }

private:
    Result<void> launch(const std::string& executable) {
        std::vector<std::string> env_entries;
        for (const auto& [key, value] : m_request.env)
            env_entries.push_back(key + "=" + value);
        std::vector<const char*> envp;
        for (const auto& entry : env_entries)
            envp.push_back(entry.c_str());
        envp.push_back(nullptr);
        std::vector<const char*> argv;
        for (const auto& arg : m_request.argv)
            argv.push_back(arg.c_str());
        argv.push_back(nullptr);

        bp::posix::default_launcher launcher;
        launcher.env = envp.data();
        const ChildSetup setup{m_request.cwd.empty() ? nullptr : m_request.cwd.c_str()};
        const char** args = argv.data();
        boost::system::error_code ec;
        auto start = [&](auto&& in) {
            bp::process_stdio stdio{in, m_out.pipe, m_err.pipe};
            return launcher(m_io.get_executor(), ec, executable, args, stdio, setup);
        };
        auto child = m_request.stdin_data ? start(m_in) : start(nullptr);
        if (ec) {
            if (launcher.pid > 0) reap(launcher.pid);
            return fail(ExitCode::failure,
                        "cannot start '" + m_request.argv[0] + "': " + ec.message());
        }
        m_pid = child.id();
        child.detach(); // we reap by hand: Boost's wait folds signals into one code
        // The child is not reaped yet, so its pid cannot have been reused.
        const auto pidfd = static_cast<int>(::syscall(SYS_pidfd_open, m_pid, 0));
        if (pidfd < 0) {
            kill_group(m_pid, SIGKILL);
            reap(m_pid);
            return fail(ExitCode::failure, "cannot watch '" + m_request.argv[0] + "' (no pidfd)");
        }
        if (m_request.on_start) m_request.on_start(m_pid);
        m_exit_watch.assign(pidfd);
        m_exit_watch.async_wait(asio::posix::descriptor_base::wait_read, [this](auto ec2) {
            if (!ec2) on_exit();
        });
        return {};
    }

    void read(Drain& drain) {
        auto on_read = [this, &drain](auto ec, std::size_t n) {
            if (n > 0) {
                drain.tail.append(drain.buffer.data(), n);
                const std::string_view chunk(drain.buffer.data(), n);
                if (m_request.on_output) m_request.on_output(drain.stream, chunk);
            }
            if (!ec) return read(drain);
            drain.open = false;
            maybe_finish();
        };
        drain.pipe.async_read_some(asio::buffer(drain.buffer), on_read);
    }

    void feed_stdin() {
        if (!m_request.stdin_data) return;
        asio::async_write(m_in, asio::buffer(*m_request.stdin_data), [this](auto, std::size_t) {
            boost::system::error_code ignored;
            m_in.close(ignored);
        });
    }

    void poll_cancel() {
        if (m_request.cancel == nullptr) return;
        m_cancel_poll.expires_after(milliseconds(100));
        m_cancel_poll.async_wait([this](auto ec) {
            if (ec || m_exited) return;
            if (!m_request.cancel->load()) return poll_cancel();
            m_cancelled = true;
            m_limit.cancel();
            stop_group();
        });
    }

    void on_timeout() {
        m_timed_out = true;
        stop_group();
    }

    /// SIGTERM to the group, SIGKILL after the grace, then stop waiting for the pipes.
    void stop_group() {
        kill_group(m_pid, SIGTERM);
        escalate([this] {
            kill_group(m_pid, SIGKILL);
            escalate([this] { abandon_pipes(); });
        });
    }

    void on_exit() {
        m_exited = true;
        if (m_timed_out || m_cancelled || (!m_out.open && !m_err.open)) return maybe_finish();
        const auto drain_end = Clock::now() + m_request.exit_drain;
        m_limit.expires_at(std::min(drain_end, m_start + m_request.timeout));
        m_limit.async_wait([this](auto ec) {
            if (ec) return;
            m_leftovers_killed = true;
            kill_group(m_pid, SIGKILL);
            escalate([this] { abandon_pipes(); });
        });
    }

    template <class Then> void escalate(Then then) {
        m_escalate.expires_after(m_request.kill_grace);
        m_escalate.async_wait([then](auto ec) {
            if (!ec) then();
        });
    }

    /// Last resort: a process outside the group holds a pipe open. Stop waiting for its EOF.
    void abandon_pipes() {
        boost::system::error_code ignored;
        m_out.pipe.close(ignored);
        m_err.pipe.close(ignored);
    }

    void maybe_finish() {
        if (!m_exited || m_out.open || m_err.open) return;
        m_io.stop();
    }

    ProcessResult collect(int status) {
        ProcessResult result;
        if (WIFEXITED(status)) {
            result.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            result.term_signal = WTERMSIG(status);
            result.exit_code = 128 + result.term_signal;
        }
        result.timed_out = m_timed_out;
        result.cancelled = m_cancelled;
        result.leftovers_killed = m_leftovers_killed;
        result.out_bytes = m_out.tail.total();
        result.err_bytes = m_err.tail.total();
        result.out = m_out.tail.take();
        result.err = m_err.tail.take();
        result.pid = m_pid;
        result.duration = std::chrono::duration_cast<milliseconds>(Clock::now() - m_start);
        return result;
    }

    const ProcessRequest& m_request;
    asio::io_context m_io;
    asio::writable_pipe m_in;
    Drain m_out;
    Drain m_err;
    asio::posix::stream_descriptor m_exit_watch;
    asio::steady_timer m_limit;    ///< The timeout; after the child exits, the drain limit.
    asio::steady_timer m_escalate; ///< TERM → KILL → abandon the pipes.
    asio::steady_timer m_cancel_poll;
    Clock::time_point m_start;
    int m_pid = 0;
    bool m_exited = false;
    bool m_timed_out = false;
    bool m_cancelled = false;
    bool m_leftovers_killed = false;
};

class SystemRunner final : public ProcessRunner {
public:
    Result<ProcessResult> run(const ProcessRequest& request) override {
        auto executable = resolve_executable(request);
        SONATA_TRY(executable);
        struct stat st {};
        const bool cwd_ok =
            request.cwd.empty() || (::stat(request.cwd.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
        if (!cwd_ok) {
            return fail(ExitCode::failure,
                        "cannot start '" + request.argv[0] + "': no directory at " + request.cwd);
        }
        const SigpipeGuard guard;
        Supervisor supervisor(request);
        return supervisor.run(*executable);
    }
};

} // namespace

std::unique_ptr<ProcessRunner> make_system_runner() {
    static std::once_flag subreaper;
    std::call_once(subreaper, [] { ::prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL); });
    return std::make_unique<SystemRunner>();
}

} // namespace sonata
