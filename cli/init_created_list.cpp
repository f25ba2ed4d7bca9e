// The list of the .mcp.json files init created, one absolute path a line.
#include "cli/init_created_list.hpp"

#include <algorithm>
#include <sstream>

#include "core/config.hpp"
#include "core/fs.hpp"

namespace sonata::cli {
namespace {

constexpr std::size_t k_max_list = 16U * 1024U * 1024U;

} // namespace

std::string created_list(const Environment& env) {
    const auto dir = machine_dir(env);
    return dir.empty() ? std::string() : dir + "/init-created";
}

std::vector<std::string> listed_files(const std::string& list) {
    std::vector<std::string> files;
    if (list.empty()) return files;
    auto text = read_file_bounded(list, k_max_list);
    if (!text) return files; // none yet
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) files.push_back(line);
    return files;
}

bool is_listed(const std::string& list, const std::string& file) {
    const auto files = listed_files(list);
    return std::find(files.begin(), files.end(), file) != files.end();
}

Result<void> set_listed(const std::string& list, const std::string& file, bool created) {
    if (list.empty() || (!created && !is_listed(list, file))) return {};
    auto files = listed_files(list);
    std::erase(files, file);
    if (created) files.push_back(file);
    std::string text;
    for (const auto& f : files)
        text += f + "\n";
    return write_file_atomic(list, text, WriteOptions{.mode = 0600});
}

} // namespace sonata::cli
