// Finding and killing a run's processes through /proc.
#include "core/marked_processes.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include <sys/wait.h>

#include "core/fs.hpp"
#include "core/proc_stat.hpp"
#include "core/proc_tree.hpp"
#include "core/run_host.hpp"

namespace sonata {
namespace {

/// Every process but this one that carries run `run_id`'s marker and passes `also`.
template <class Also> std::vector<int> marked_processes(const std::string& run_id, Also also) {
    std::vector<int> pids;
    for (const int pid : all_processes())
        if (pid != ::getpid() && also(pid) && carries_marker(pid, run_id)) pids.push_back(pid);
    return pids;
}

} // namespace

bool carries_marker(int pid, const std::string& run_id) {
    if (run_id.empty() || !is_own_process(pid)) return false;
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

int kill_own_descendants(int keep) {
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

void kill_marked_group(int pgid, const std::string& run_id) {
    if (carries_marker(pgid, run_id)) {
        ::kill(-pgid, SIGKILL);
        return;
    }
    const auto in_group = [&](int pid) {
        const auto fields = proc_stat_fields(pid);
        return fields && fields->size() > 2 && (*fields)[2] == std::to_string(pgid);
    };
    for (const int pid : marked_processes(run_id, in_group))
        ::kill(pid, SIGKILL);
}

void kill_marked_process(int pid, unsigned long long start_time, const std::string& run_id,
                         const std::string& argument) {
    if (start_time_of(pid) != start_time || !carries_marker(pid, run_id)) return;
    const auto args = command_line_of(pid);
    const bool names_it =
        !argument.empty() && std::any_of(args.begin(), args.end(), [&](const std::string& a) {
            return a.find(argument) != std::string::npos;
        });
    if (names_it) ::kill(pid, SIGKILL);
}

} // namespace sonata
