// Marking a run's processes, checking its supervisor through /proc, and stopping a lost run.
#include "dispatch/run_processes.hpp"

#include <filesystem>

#include <sys/stat.h>

#include "core/proc_tree.hpp"

namespace sonata::dispatch {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_run_mode = "SONATA_RUN_MODE";

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

bool is_supervisor_of(int pid, const std::string& dir) {
    if (pid <= 0 || !is_own_process(pid)) return false;
    const auto args = command_line_of(pid);
    return args.size() == 3 && args[1] == "supervise" && same_directory(args[2], dir);
}

void kill_what_runs(const Receipt& r, RunHost& host) {
    if (r.harness_pgid > 0 && !r.id.empty()) host.kill_marked_group(r.harness_pgid, r.id);
    if (r.tmux_server_pid > 0 && !r.tmux_socket.empty()) {
        host.kill_marked_process(r.tmux_server_pid, r.tmux_server_start, r.id,
                                 fs::path(r.tmux_socket).filename().string());
    }
}

void mark_lost(Receipt& r, RunHost& host) {
    kill_what_runs(r, host);
    r.state = RunState::lost;
    r.ended_at = utc_now();
    r.degraded = true;
    r.degraded_reason = "the supervisor ended without recording the run's end (it died, or its run "
                        "directory could not be written); its harness was killed";
}

} // namespace sonata::dispatch
