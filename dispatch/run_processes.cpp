// Finding, checking and stopping a run's processes through /proc.
#include "dispatch/run_processes.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>

#include "core/fs.hpp"
#include "core/proc_stat.hpp"
#include "core/proc_tree.hpp"

namespace sonata::dispatch {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_run_marker = "SONATA_RUN_ID";
constexpr const char* k_run_mode = "SONATA_RUN_MODE";

bool ours(int pid) {
    const auto owner = owner_of(pid);
    return owner && *owner == ::geteuid();
}

/// Every process but this one that carries run `run_id`'s marker and passes `also`.
template <class Also> std::vector<int> marked_processes(const std::string& run_id, Also also) {
    std::vector<int> pids;
    for (const int pid : all_processes())
        if (pid != ::getpid() && also(pid) && carries_marker(pid, run_id)) pids.push_back(pid);
    return pids;
}

/// True when `a` and `b` name one directory (device and inode).
bool same_directory(const std::string& a, const std::string& b) {
    struct stat sa {};
    struct stat sb {};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && S_ISDIR(sa.st_mode) &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

} // namespace

Environment marked(Environment base, const Receipt& receipt) {
    base[k_run_marker] = receipt.id;
    base[k_run_mode] = receipt.mode;
    return base;
}

Environment marker_of(const Receipt& receipt) { return {{k_run_marker, receipt.id}}; }

bool carries_marker(int pid, const std::string& run_id) {
    if (run_id.empty() || !ours(pid)) return false;
    auto environ = read_file_bounded("/proc/" + std::to_string(pid) + "/environ", 4U << 20U);
    if (!environ) return false;
    const std::string want = std::string(k_run_marker) + "=" + run_id;
    for (std::size_t at = 0; at < environ->size();) {
        const auto end = std::min(environ->find('\0', at), environ->size());
        if (environ->compare(at, end - at, want) == 0) return true;
        at = end + 1;
    }
    return false;
}

bool is_supervisor_of(int pid, const std::string& dir) {
    if (pid <= 0 || !ours(pid)) return false;
    const auto args = command_line_of(pid);
    return args.size() == 3 && args[1] == "supervise" && same_directory(args[2], dir);
}

int stop_descendants(int keep) {
    std::set<int> seen;
    for (int round = 0; round < 50; ++round) {
        std::vector<int> pids = descendants_of(static_cast<int>(::getpid()));
        pids.erase(std::remove(pids.begin(), pids.end(), keep), pids.end());
        if (pids.empty()) break;
        for (const int pid : pids) {
            if (start_time_of(pid) != 0) seen.insert(pid); // a zombie ran nothing any more
            ::kill(pid, SIGKILL);
        }
        for (const int pid : pids) {
            if (parent_of(pid) == static_cast<int>(::getpid())) ::waitpid(pid, nullptr, 0);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return static_cast<int>(seen.size());
}

void kill_what_runs(const Receipt& r) {
    if (r.harness_pgid > 0 && !r.id.empty()) {
        if (carries_marker(r.harness_pgid, r.id)) {
            ::kill(-r.harness_pgid, SIGKILL);
        } else {
            const auto in_group = [&](int pid) {
                const auto fields = proc_stat_fields(pid);
                return fields && fields->size() > 2 &&
                       (*fields)[2] == std::to_string(r.harness_pgid);
            };
            for (const int pid : marked_processes(r.id, in_group))
                ::kill(pid, SIGKILL);
        }
    }
    if (r.tmux_server_pid > 0 && !r.tmux_socket.empty() &&
        start_time_of(r.tmux_server_pid) == r.tmux_server_start &&
        carries_marker(r.tmux_server_pid, r.id)) {
        const std::string socket = fs::path(r.tmux_socket).filename().string();
        const auto args = command_line_of(r.tmux_server_pid);
        const bool names_socket =
            !socket.empty() && std::any_of(args.begin(), args.end(), [&](const std::string& a) {
                return a.find(socket) != std::string::npos;
            });
        if (names_socket) ::kill(r.tmux_server_pid, SIGKILL);
    }
}

void mark_lost(Receipt& r) {
    kill_what_runs(r);
    r.state = RunState::lost;
    r.ended_at = utc_now();
    r.degraded = true;
    r.degraded_reason = "the supervisor ended without recording the run's end (it died, or its run "
                        "directory could not be written); its harness was killed";
}

} // namespace sonata::dispatch
