// Where the config lives: the nearest project with sonata.toml or .sonata/, and the machine dir.
// Kept apart from the TOML parser so that the hook, which needs only this, links nothing heavy.
#include <filesystem>

#include "core/config.hpp"

namespace sonata {
namespace fs = std::filesystem;
namespace {

std::string env_or(const std::map<std::string, std::string>& env, const std::string& key,
                   const std::string& fallback) {
    const auto it = env.find(key);
    return it == env.end() || it->second.empty() ? fallback : it->second;
}

} // namespace

std::string machine_dir(const std::map<std::string, std::string>& env) {
    const std::string xdg = env_or(env, "XDG_CONFIG_HOME", env_or(env, "HOME", "/") + "/.config");
    return xdg + "/sonata";
}

ConfigLocation locate_config(const std::string& cwd,
                             const std::map<std::string, std::string>& env) {
    ConfigLocation where;
    std::error_code ec;
    for (fs::path dir = fs::path(cwd); !dir.empty(); dir = dir.parent_path()) {
        if (fs::is_regular_file(dir / "sonata.toml", ec)) {
            where.project_dir = dir.string();
            where.project_file = (dir / "sonata.toml").string();
            break;
        }
        if (fs::is_directory(dir / ".sonata", ec)) {
            where.project_dir = dir.string();
            if (fs::is_regular_file(dir / ".sonata" / "config.toml", ec))
                where.project_file = (dir / ".sonata" / "config.toml").string();
            break;
        }
        if (dir == dir.root_path()) break;
    }
    where.machine_dir = machine_dir(env);
    if (fs::is_regular_file(fs::path(where.machine_dir) / "config.toml", ec)) {
        where.machine_file = (fs::path(where.machine_dir) / "config.toml").string();
    }
    return where;
}

} // namespace sonata
