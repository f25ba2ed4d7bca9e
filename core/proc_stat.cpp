#include "core/proc_stat.hpp"

#include <fstream>
#include <sstream>

namespace sonata {

std::optional<std::vector<std::string>> proc_stat_fields(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!in || !std::getline(in, stat)) return std::nullopt;
    const auto name_end = stat.rfind(')');
    if (name_end == std::string::npos) return std::nullopt;
    std::istringstream words(stat.substr(name_end + 1));
    std::vector<std::string> fields;
    for (std::string word; words >> word;)
        fields.push_back(word);
    return fields;
}

} // namespace sonata
