// The process tree from /proc.
#include "core/proc_tree.hpp"

#include <unistd.h>

#include <filesystem>
#include <map>

#include <sys/stat.h>

#include "core/fs.hpp"
#include "core/proc_stat.hpp"

namespace sonata {
namespace {

/// Every process with its parent, read once.
std::map<int, int> parents() {
    std::map<int, int> parent;
    for (const int pid : all_processes())
        if (const auto up = parent_of(pid)) parent[pid] = *up;
    return parent;
}

} // namespace

std::vector<int> all_processes() {
    std::vector<int> pids;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.empty() && name.size() < 10 &&
            name.find_first_not_of("0123456789") == std::string::npos)
            pids.push_back(std::stoi(name));
    }
    return pids;
}

std::optional<int> parent_of(int pid) {
    const auto fields = proc_stat_fields(pid);
    if (!fields || fields->size() < 2) return std::nullopt;
    try {
        return std::stoi((*fields)[1]);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

bool is_descendant_of(int pid, int ancestor) {
    // A chain longer than any real tree means the table changed under the walk: not a descendant.
    for (int hops = 0; pid > 1 && hops < 4096; ++hops) {
        const auto up = parent_of(pid);
        if (!up) return false;
        if (*up == ancestor) return true;
        pid = *up;
    }
    return false;
}

std::vector<int> descendants_of(int ancestor) {
    const auto parent = parents();
    std::vector<int> found;
    for (const auto& [pid, up] : parent) {
        int at = up;
        for (int hops = 0; at > 1 && at != ancestor && hops < 4096; ++hops) {
            const auto next = parent.find(at);
            at = next == parent.end() ? 0 : next->second;
        }
        if (at == ancestor && pid != ancestor) found.push_back(pid);
    }
    return found;
}

std::optional<unsigned> owner_of(int pid) {
    struct stat st {};
    if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return std::nullopt;
    return st.st_uid;
}

bool is_own_process(int pid) {
    const auto owner = owner_of(pid);
    return owner && *owner == ::geteuid();
}

std::vector<std::string> command_line_of(int pid) {
    auto text = read_file_bounded("/proc/" + std::to_string(pid) + "/cmdline", 1U << 20U);
    std::vector<std::string> args;
    if (!text) return args;
    for (std::size_t at = 0; at < text->size();) {
        const auto end = std::min(text->find('\0', at), text->size());
        args.push_back(text->substr(at, end - at));
        at = end + 1;
    }
    return args;
}

std::vector<std::vector<std::string>> ancestor_command_lines(int pid, std::size_t depth) {
    std::vector<std::vector<std::string>> lines;
    for (auto parent = parent_of(pid); parent && *parent > 1 && lines.size() < depth;
         parent = parent_of(*parent))
        lines.push_back(command_line_of(*parent));
    return lines;
}

unsigned long long start_time_of(int pid) {
    const auto fields = proc_stat_fields(pid);
    if (!fields || fields->size() < 20 || (*fields)[0] == "Z") return 0;
    try {
        return std::stoull((*fields)[19]);
    } catch (const std::exception&) {
        return 0;
    }
}

} // namespace sonata
