// The workspace fingerprint.
#include "dispatch/supervisor/worktree.hpp"

#include <algorithm>
#include <filesystem>

#include <sys/stat.h>

namespace sonata::dispatch {
namespace fs = std::filesystem;

Fingerprint fingerprint(const std::string& root, std::size_t limit) {
    Fingerprint print;
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const auto name = it->path().filename().string();
        if (it.depth() == 0 && (name == ".git" || name == ".sonata")) {
            it.disable_recursion_pending();
            continue;
        }
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;
        if (print.files.size() >= limit) {
            print.truncated = true;
            break;
        }
        const std::int64_t mtime =
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
        print.files[fs::relative(it->path(), root, ec).string()] = {
            static_cast<std::uint64_t>(st.st_size), mtime};
    }
    return print;
}

std::vector<std::string> changes(const Fingerprint& before, const Fingerprint& after) {
    std::vector<std::string> out;
    for (const auto& [path, stamp] : after.files) {
        const auto old = before.files.find(path);
        if (old == before.files.end())
            out.push_back("created " + path);
        else if (old->second != stamp)
            out.push_back("changed " + path);
    }
    for (const auto& [path, stamp] : before.files) {
        if (after.files.count(path) == 0) out.push_back("removed " + path);
    }
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
        return a.substr(a.find(' ') + 1) < b.substr(b.find(' ') + 1);
    });
    return out;
}

} // namespace sonata::dispatch
