#include "cli/plugin_source.hpp"

#include <filesystem>
#include <vector>

namespace sonata::cli {

namespace fs = std::filesystem;

namespace {

bool holds_marketplace(const std::string& dir) {
    std::error_code ec;
    return !dir.empty() &&
           fs::is_regular_file(fs::path(dir) / ".claude-plugin" / "marketplace.json", ec);
}

} // namespace

Result<std::string> plugin_marketplace(const std::string& given,
                                       const std::map<std::string, std::string>& env,
                                       const std::string& executable,
                                       const std::string& source_tree) {
    std::vector<std::string> places;
    if (!given.empty()) {
        places.push_back(given);
    } else {
        if (const auto set = env.find("SONATA_MARKETPLACE_DIR");
            set != env.end() && !set->second.empty())
            places.push_back(set->second);
        if (!executable.empty()) {
            const auto above = fs::path(executable).parent_path().parent_path();
            places.push_back((above / "share" / "sonata").string());
            places.push_back(above.string());
        }
        places.push_back(source_tree);
    }
    std::string looked;
    for (const auto& place : places) {
        if (holds_marketplace(place)) return place;
        if (!place.empty()) looked += (looked.empty() ? "" : ", ") + place;
    }
    return fail(ExitCode::usage,
                "no .claude-plugin/marketplace.json in " + looked +
                    ": pass --marketplace DIR (an installed sonata's share/sonata, its npm "
                    "package's directory, or a sonata source tree)");
}

} // namespace sonata::cli
