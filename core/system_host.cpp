// The host of this machine: a daemon by double fork, the watchdog as a forked child that waits for
// its starter's end on a pipe (the kernel closes it, whatever ends the starter), stop signals into
// one flag, slots as flocks on `<dir>/<k>.lock` (the kernel drops them with the process), and
// inotify for a directory's changes.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <thread>

#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "core/marked_processes.hpp"
#include "core/run_host.hpp"

namespace sonata {
namespace {

std::atomic<bool> g_stop{false};

void on_stop_signal(int) { g_stop.store(true); }

constexpr int k_stop_signals[] = {SIGTERM, SIGINT, SIGHUP};

/// A file descriptor closed with its owner.
class OwnedFd : public HostLease {
public:
    explicit OwnedFd(int fd) : m_fd(fd) {}
    ~OwnedFd() override {
        if (m_fd >= 0) ::close(m_fd);
    }
    OwnedFd(const OwnedFd&) = delete;
    OwnedFd& operator=(const OwnedFd&) = delete;

private:
    int m_fd;
};

/// The watchdog child; its starter holds the pipe's write end until it releases it or ends.
class ForkedWatchdog : public Watchdog {
public:
    ForkedWatchdog(int pid, int write_fd) : m_pid(pid), m_write_fd(write_fd) {}
    ~ForkedWatchdog() override { release(); }
    ForkedWatchdog(const ForkedWatchdog&) = delete;
    ForkedWatchdog& operator=(const ForkedWatchdog&) = delete;

    int pid() const override { return m_pid; }

    void release() override {
        if (m_write_fd < 0) return;
        ::close(m_write_fd); // the watchdog runs its task, finds nothing left to do, and leaves
        m_write_fd = -1;
        while (m_pid > 0 && ::waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }

private:
    int m_pid;
    int m_write_fd;
};

/// The watchdog's whole life: wait for the starter to go, then run its task.
[[noreturn]] void watch(int read_fd, const std::function<void()>& on_orphaned) {
    for (const int sig : k_stop_signals)
        std::signal(sig, SIG_IGN);
    char byte = 0;
    while (::read(read_fd, &byte, 1) != 0 && errno == EINTR) {
    }
    on_orphaned();
    ::_exit(0);
}

/// Wakes a waiter when something lands in a directory, or once it follows a process, when that
/// process ends; without inotify it just sleeps a little.
class InotifyWatch : public DirWatch {
public:
    explicit InotifyWatch(const std::string& dir)
        : m_fd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) {
        if (m_fd < 0) return;
        m_watch = ::inotify_add_watch(m_fd, dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE);
        if (m_watch < 0) {
            ::close(m_fd);
            m_fd = -1;
        }
    }
    ~InotifyWatch() override {
        if (m_fd >= 0) ::close(m_fd);
        if (m_exit_fd >= 0) ::close(m_exit_fd);
    }
    InotifyWatch(const InotifyWatch&) = delete;
    InotifyWatch& operator=(const InotifyWatch&) = delete;

    void wait(std::chrono::milliseconds timeout) override {
        if (m_fd < 0) {
            std::this_thread::sleep_for(std::min(timeout, std::chrono::milliseconds(10)));
            return;
        }
        pollfd p[2] = {{m_fd, POLLIN, 0}, {m_exit_fd, POLLIN, 0}};
        const nfds_t count = m_exit_fd >= 0 ? 2 : 1;
        if (::poll(p, count, static_cast<int>(std::max<long>(timeout.count(), 0))) <= 0) return;
        drain();
        if (count == 2 && p[1].revents != 0) { // an ended process stays readable: wake once
            ::close(m_exit_fd);
            m_exit_fd = -1;
        }
    }

    void follow_exit(int pid) override {
        if (m_fd < 0 || m_followed || pid <= 0) return;
        m_followed = true;
        // Dropped now, the directory's watch is torn down while the process ends: dropped at
        // close, its teardown (a kernel grace period, up to 20 ms) would delay the waiter's end.
        ::inotify_rm_watch(m_fd, m_watch);
        drain(); // what landed before, and the watch's own removal, wake no wait
        m_exit_fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    }

private:
    void drain() {
        char events[4096];
        while (::read(m_fd, events, sizeof events) > 0) {
        }
    }

    int m_fd;
    int m_watch = -1;
    int m_exit_fd = -1;      ///< A pidfd of the process whose end wakes a wait, or -1.
    bool m_followed = false; ///< follow_exit was called: a second call does nothing.
};

/// `strings` as the null-terminated array of pointers exec takes; `strings` must outlive it.
std::vector<char*> c_array(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

class SystemHost : public RunHost {
public:
    Result<void> start_detached(const std::vector<std::string>& argv, const Environment& env,
                                const std::string& log) override {
        // Everything the children need is built before fork().
        std::vector<std::string> env_strings;
        for (const auto& [k, v] : env)
            env_strings.push_back(k + "=" + v);
        std::vector<char*> envp = c_array(env_strings);
        std::vector<std::string> args = argv;
        std::vector<char*> argp = c_array(args);
        const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (null_fd < 0 || log_fd < 0)
            return fail(ExitCode::failure, "cannot open the supervisor's log " + log);
        const pid_t child = ::fork();
        if (child == 0) {
            ::setsid();
            if (::fork() != 0) ::_exit(0);
            ::dup2(null_fd, STDIN_FILENO);
            ::dup2(log_fd, STDOUT_FILENO);
            ::dup2(log_fd, STDERR_FILENO);
            ::execve(argp[0], argp.data(), envp.data());
            ::_exit(127);
        }
        ::close(null_fd);
        ::close(log_fd);
        if (child < 0) return fail(ExitCode::failure, "cannot start the supervisor (fork failed)");
        int status = 0;
        while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
        return {};
    }

    Result<std::unique_ptr<Watchdog>> start_watchdog(std::function<void()> on_orphaned) override {
        int pipe_fds[2];
        if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
            return fail(ExitCode::failure, "cannot start the watchdog (no pipe)");
        const pid_t dog = ::fork();
        if (dog == 0) {
            ::close(pipe_fds[1]);
            watch(pipe_fds[0], on_orphaned);
        }
        ::close(pipe_fds[0]);
        return std::make_unique<ForkedWatchdog>(std::max(dog, 0), pipe_fds[1]);
    }

    std::atomic<bool>& stop_on_signals() override {
        for (const int sig : k_stop_signals)
            std::signal(sig, on_stop_signal);
        return g_stop;
    }

    Result<std::optional<Slot>> try_slot(const std::string& dir, int count) override {
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        int opened = 0;
        for (int k = 0; k < count; ++k) {
            const std::string path = dir + "/" + std::to_string(k) + ".lock";
            const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (fd < 0) continue;
            ++opened;
            if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return Slot{k, std::make_unique<OwnedFd>(fd)};
            ::close(fd);
        }
        if (opened == 0)
            return fail(ExitCode::failure, "cannot open the concurrency slots in " + dir);
        return std::nullopt;
    }

    void pause(std::chrono::milliseconds period) override { std::this_thread::sleep_for(period); }

    int kill_descendants(int keep) override { return kill_own_descendants(keep); }

    void kill_marked_group(int pgid, const std::string& run_id) override {
        sonata::kill_marked_group(pgid, run_id);
    }

    void kill_marked_process(int pid, unsigned long long start_time, const std::string& run_id,
                             const std::string& argument) override {
        sonata::kill_marked_process(pid, start_time, run_id, argument);
    }

    std::unique_ptr<DirWatch> watch_dir(const std::string& dir) override {
        return std::make_unique<InotifyWatch>(dir);
    }
};

} // namespace

RunHost& system_host() {
    static SystemHost host;
    return host;
}

} // namespace sonata
