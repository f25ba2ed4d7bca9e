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
    auto dir = machine_dir_checked(env);
    return dir ? *dir : std::string();
}

Result<std::string> machine_dir_checked(const std::map<std::string, std::string>& env) {
    const std::string xdg = env_or(env, "XDG_CONFIG_HOME", "");
    if (!xdg.empty() && xdg.front() == '/') return xdg + "/sonata";
    if (!xdg.empty()) {
        return fail(ExitCode::config,
                    "XDG_CONFIG_HOME is a relative path ('" + xdg +
                        "'): sonata's machine config dir must be absolute; set it to an "
                        "absolute path or unset it");
    }
    const std::string home = env_or(env, "HOME", "");
    if (!home.empty() && home.front() == '/') return (home == "/" ? "" : home) + "/.config/sonata";
    return fail(ExitCode::config,
                home.empty() ? "neither HOME nor XDG_CONFIG_HOME is set: sonata cannot place "
                               "its machine config dir; set HOME"
                             : "HOME is a relative path ('" + home +
                                   "'): sonata's machine config dir must be absolute");
}

ConfigLocation locate_config(const std::string& cwd,
                             const std::map<std::string, std::string>& env) {
    ConfigLocation where;
    std::error_code ec;
    for (fs::path dir = fs::path(cwd); !dir.empty(); dir = dir.parent_path()) {
        // Anything named sonata.toml marks the project, so that one that is not a regular file
        // (a FIFO, a directory) is an error when read, never silently no config.
        if (fs::exists(fs::symlink_status(dir / "sonata.toml", ec))) {
            where.project_dir = dir.string();
            where.project_file = (dir / "sonata.toml").string();
            break;
        }
        if (fs::is_directory(dir / ".sonata", ec)) {
            where.project_dir = dir.string();
            if (fs::exists(fs::symlink_status(dir / ".sonata" / "config.toml", ec)))
                where.project_file = (dir / ".sonata" / "config.toml").string();
            break;
        }
        if (dir == dir.root_path()) break;
    }
    auto dir = machine_dir_checked(env);
    if (!dir) {
        where.problem = dir.error();
        return where;
    }
    where.machine_dir = *dir;
    const auto file = fs::path(where.machine_dir) / "config.toml";
    const auto status = fs::status(file, ec);
    if (fs::is_regular_file(status)) {
        where.machine_file = file.string();
    } else if (ec && ec != std::errc::no_such_file_or_directory &&
               ec != std::errc::not_a_directory) {
        // An unreadable machine config dir is not "no config": its gate setting, and the matrix
        // beside it, would silently count as absent.
        where.problem =
            Error{ExitCode::bad_data, file.string() + ": cannot be examined (" + ec.message() +
                                          "): sonata will not read an unreadable config as none"};
    }
    return where;
}

} // namespace sonata
