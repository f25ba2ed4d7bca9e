// `sonata init [--scope project|global] [--yes] [--remove]`: installs (or removes) sonata's
// PreToolUse hook in Claude Code's settings and `sonata mcp` as its MCP server, and in project
// scope a commented sonata.toml. It says what it will change first; without --yes it asks on a
// terminal, and elsewhere changes nothing.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <sys/stat.h>

#include "adapters/registry.hpp"
#include "cli/app.hpp"
#include "cli/init_created_list.hpp"
#include "cli/init_support.hpp"
#include "cli/plugin_source.hpp"
#include "core/config.hpp"
#include "core/fs.hpp"
#include "core/process.hpp"
#include "core/text.hpp"

namespace sonata::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_max_settings = 16U * 1024U * 1024U;

struct InitArgs {
    std::string scope = "project";
    bool yes = false;
    bool remove = false;
    bool plugin = false;
    std::string marketplace; ///< --marketplace; empty: plugin_marketplace() looks for it
};

/// One change init will make: what to tell the user and how to make it.
struct Step {
    std::string what;
    std::function<Result<void>()> apply;
};

struct Plan {
    std::vector<Step> steps;
    std::vector<std::string> notes; ///< Said whether or not anything changes.
};

/// An error when `resolved` (weakly_canonical's result) or a directory above it is still a
/// symlink: one whose target does not exist. Writing would replace the link with a file, so that a
/// linked dotfile silently stops being one.
Result<void> refuse_dangling_link(const fs::path& resolved) {
    for (fs::path at = resolved; at.has_relative_path(); at = at.parent_path()) {
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(at, ec))) continue;
        const auto to = fs::read_symlink(at, ec);
        return fail(ExitCode::bad_data, at.string() + " is a symlink to " + to.string() +
                                            ", which does not exist: create the file there or "
                                            "remove the link (nothing was changed)");
    }
    return {};
}

/// A Claude Code file to edit (`relative` to the project, or to HOME in global scope), with a
/// symlink followed so a linked dotfile stays linked.
Result<std::string> target_path(const InitArgs& args, const Context& context,
                                const fs::path& relative) {
    std::string base = context.cwd;
    if (args.scope == "global") {
        const auto home = context.env.find("HOME");
        if (home == context.env.end() || home->second.empty()) {
            return fail(ExitCode::usage, "HOME is not set: cannot find ~/" + relative.string());
        }
        // A relative HOME would put the user's files under whatever directory init runs in.
        if (home->second.front() != '/') {
            return fail(ExitCode::config, "HOME is a relative path ('" + home->second +
                                              "'): init --scope global edits files under HOME, "
                                              "which must be absolute");
        }
        base = home->second;
    }
    const fs::path path = fs::path(base) / relative;
    std::error_code ec;
    const auto target = fs::weakly_canonical(path, ec);
    if (ec)
        return fail(ExitCode::bad_data,
                    path.string() + ": cannot resolve its path (" + ec.message() + ")");
    SONATA_TRY(refuse_dangling_link(target));
    if (args.scope == "global") return target.string(); // the user's own dotfile, linked anywhere
    // A project comes with its repository, which is not trusted: its .claude/ or settings.json may
    // link anywhere (the global settings, another project), and init edits only the project.
    const auto root = fs::weakly_canonical(base, ec);
    const auto inside =
        std::mismatch(root.begin(), root.end(), target.begin(), target.end()).first == root.end();
    if (ec || !inside) {
        return fail(ExitCode::bad_data,
                    path.string() + " leads out of the project to " + target.string() +
                        " (a symlink): sonata init edits only files inside the project; "
                        "the file was left untouched");
    }
    return target.string();
}

/// The file's text, nullopt when there is none.
Result<std::optional<std::string>> read_settings(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return std::optional<std::string>{};
    auto text = read_file_bounded(path, k_max_settings);
    SONATA_TRY(text);
    return std::optional<std::string>{*text};
}

unsigned mode_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? static_cast<unsigned>(st.st_mode & 07777) : 0644U;
}

Step write_step(std::string what, const std::string& path, const std::string& text) {
    return Step{std::move(what), [path, text]() {
                    return write_file_atomic(path, text, WriteOptions{.mode = mode_of(path)});
                }};
}

/// The settings edit, as one step per hook added or removed; one atomic write (on the last step)
/// makes all of them.
Result<void> settings_steps(const InitArgs& args, const std::string& path, Plan& plan) {
    auto text = read_settings(path);
    SONATA_TRY(text);
    if (args.remove && !*text) {
        plan.notes.push_back("no sonata hook in " + path + " (the file does not exist)");
        return {};
    }
    auto sonata = this_executable();
    SONATA_TRY(sonata);
    const std::string command = hook_command(hook_program(*sonata));
    auto edit = args.remove ? uninstall_hook(**text, path) : install_hook(*text, command, path);
    SONATA_TRY(edit);
    if (!edit->changed) {
        plan.notes.push_back(args.remove ? "no sonata hook in " + path
                                         : "the hook `" + command + "` is already in " + path);
        return {};
    }
    for (const auto& old : edit->removed)
        plan.steps.push_back(Step{"remove the PreToolUse hook `" + old + "` from " + path, {}});
    if (edit->added) {
        plan.steps.push_back(Step{"add a PreToolUse hook running `" + command + "` to " + path +
                                      (*text ? "" : " (a new file)"),
                                  {}});
    }
    plan.steps.back().apply = write_step({}, path, edit->text).apply;
    return {};
}

/// Registers (or takes out) `sonata mcp` as Claude Code's MCP server "sonata": the project's
/// .mcp.json, or in global scope ~/.claude.json (Claude Code's user scope).
Result<void> mcp_steps(const InitArgs& args, const Context& context, Plan& plan) {
    auto path = target_path(
        args, context, args.scope == "global" ? fs::path(".claude.json") : fs::path(".mcp.json"));
    SONATA_TRY(path);
    auto text = read_settings(*path);
    SONATA_TRY(text);
    if (args.remove && !*text) return {};
    auto sonata = this_executable();
    SONATA_TRY(sonata);
    auto edit = args.remove ? uninstall_mcp_server(**text, *path)
                            : install_mcp_server(*text, *sonata, *path);
    SONATA_TRY(edit);
    if (!edit->changed) {
        if (!args.remove)
            plan.notes.push_back("the MCP server `" + *sonata + " mcp` is already in " + *path);
        return {};
    }
    for (const auto& old : edit->removed)
        plan.steps.push_back(Step{"remove the MCP server `" + old + "` from " + *path, {}});
    if (edit->added) {
        plan.steps.push_back(Step{"register the MCP server \"sonata\" (`" + *sonata + " mcp`) in " +
                                      *path + (*text ? "" : " (a new file)"),
                                  {}});
    }
    const std::string target = *path;
    const std::string new_text = edit->text;
    const std::string list = args.scope == "project" ? created_list(context.env) : std::string();
    // A .mcp.json init created and that holds nothing else goes with sonata's server.
    if (args.remove && is_listed(list, target) &&
        new_text.find_first_not_of("{} \n") == std::string::npos) {
        plan.steps.back().apply = [target, list]() -> Result<void> {
            if (::unlink(target.c_str()) != 0)
                return fail(ExitCode::failure, "cannot delete " + target);
            return set_listed(list, target, false);
        };
        return {};
    }
    const bool created = !args.remove && !*text;
    plan.steps.back().apply = [write = write_step({}, target, new_text).apply, list, target,
                               created]() -> Result<void> {
        if (auto ok = write(); !ok) return ok;
        return set_listed(list, target, created);
    };
    if (args.scope == "project" && !args.remove) {
        plan.notes.push_back(
            "harnesses that load a project's .mcp.json (" +
            join(adapters::harnesses_loading_mcp(fs::path(target).parent_path().string(), target),
                 ", ") +
            ") would see sonata's tools: sonata refuses to dispatch them from here while it is "
            "there; `--scope global` or the plugin keeps it out of the repository");
    }
    return {};
}

void project_config_steps(const InitArgs& args, const Context& context, Plan& plan) {
    const std::string path = (fs::path(context.cwd) / "sonata.toml").string();
    const auto where = locate_config(context.cwd, context.env);
    if (args.remove) {
        auto text = read_file_bounded(path, k_max_settings);
        if (!text) return;
        if (*text != project_config_template()) {
            plan.notes.push_back("leaving " + path +
                                 ": it was changed after `sonata init` wrote it");
            return;
        }
        plan.steps.push_back(Step{"delete " + path + " (unchanged since `sonata init` wrote it)",
                                  [path]() -> Result<void> {
                                      if (::unlink(path.c_str()) != 0)
                                          return fail(ExitCode::failure, "cannot delete " + path);
                                      return {};
                                  }});
        return;
    }
    if (!where.project_dir.empty()) {
        plan.notes.push_back(
            "sonata's project is " + where.project_dir + " (" +
            (where.project_file.empty() ? where.project_dir + "/.sonata/" : where.project_file) +
            "); no sonata.toml is created");
        return;
    }
    const std::string text(project_config_template());
    plan.steps.push_back(write_step(
        "create " + path + " with every setting commented out at its default", path, text));
}

void global_notes(const Context& context, Plan& plan) {
    const auto where = locate_config(context.cwd, context.env);
    if (where.machine_file.empty()) {
        plan.notes.push_back(
            "there is no machine config (" + where.machine_dir +
            "/config.toml): the hook records the "
            "mode only in projects with a sonata.toml or .sonata/ until you create it");
    }
}

/// --plugin: the plugin from the marketplace instead of the hook and the MCP server, through
/// Claude Code's own `claude plugin` commands (argv, never a shell), at user or project scope.
Result<void> plugin_steps(const InitArgs& args, const Context& context, Plan& plan) {
    const auto path = context.env.find("PATH");
    const std::string path_var = path == context.env.end() ? "/usr/bin:/bin" : path->second;
    const auto claude = search_path("claude", path_var);
    if (!claude) return fail(ExitCode::usage, "--plugin needs Claude Code's `claude` on PATH");
    const std::string scope = args.scope == "global" ? "user" : "project";
    std::vector<std::vector<std::string>> commands;
    if (args.remove) {
        commands = {{*claude, "plugin", "uninstall", "sonata@sonata", "--scope", scope},
                    {*claude, "plugin", "marketplace", "remove", "sonata"}};
    } else {
        const auto sonata = this_executable();
        const auto marketplace = plugin_marketplace(args.marketplace, context.env,
                                                    sonata ? *sonata : "", SONATA_MARKETPLACE_DIR);
        SONATA_TRY(marketplace);
        commands = {{*claude, "plugin", "marketplace", "add", *marketplace},
                    {*claude, "plugin", "install", "sonata@sonata", "--scope", scope}};
        if (!search_path("sonata", path_var)) {
            plan.notes.push_back("the plugin starts `sonata` from PATH, and it is not on PATH: "
                                 "install sonata with npm (npm install -g @sonata-cli/sonata) or "
                                 "put this one there (cmake --install build --prefix ~/.local)");
        }
    }
    for (const auto& argv : commands) {
        std::string shown;
        for (const auto& a : argv)
            shown += (shown.empty() ? "" : " ") + a;
        plan.steps.push_back(Step{"run `" + shown + "`", [argv, context]() -> Result<void> {
                                      auto runner = make_system_runner();
                                      ProcessRequest request;
                                      request.argv = argv;
                                      request.env = context.env;
                                      request.cwd = context.cwd;
                                      request.timeout = std::chrono::seconds(120);
                                      auto done = runner->run(request);
                                      SONATA_TRY(done);
                                      if (done->exit_code != 0) {
                                          return fail(ExitCode::failure,
                                                      argv[1] + " " + argv[2] + " " + argv[3] +
                                                          " failed: " + done->out + done->err);
                                      }
                                      return {};
                                  }});
    }
    return {};
}

bool confirm_on_terminal() {
    std::cout << "Proceed? [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer)) return false;
    return answer == "y" || answer == "Y" || answer == "yes";
}

Result<int> run_init(const InitArgs& args, const Context& context) {
    auto path = target_path(args, context, fs::path(".claude") / "settings.json");
    SONATA_TRY(path);
    Plan plan;
    if (args.plugin) {
        // The plugin brings the hook and the server: installing both would run the hook twice.
        SONATA_TRY(plugin_steps(args, context, plan));
    } else {
        SONATA_TRY(settings_steps(args, *path, plan));
        SONATA_TRY(mcp_steps(args, context, plan));
    }
    if (args.scope == "project") project_config_steps(args, context, plan);
    if (args.scope == "global" && !args.remove) global_notes(context, plan);
    for (const auto& note : plan.notes)
        std::cout << "note: " << note << '\n';
    if (plan.steps.empty()) {
        std::cout << "sonata init: nothing to do\n";
        return 0;
    }
    std::cout << "sonata init " << (args.remove ? "--remove " : "") << "will:\n";
    for (const auto& step : plan.steps)
        std::cout << "  - " << step.what << '\n';
    if (!args.yes) {
        if (::isatty(STDIN_FILENO) == 0) {
            return fail(ExitCode::usage,
                        "nothing changed: not asking without a terminal; run `sonata init" +
                            std::string(args.remove ? " --remove" : "") +
                            (args.scope == "global" ? " --scope global" : "") + " --yes` to apply");
        }
        if (!confirm_on_terminal()) {
            std::cout << "Nothing changed.\n";
            return to_int(ExitCode::failure);
        }
    }
    for (const auto& step : plan.steps) {
        if (!step.apply) continue;
        SONATA_TRY(step.apply());
    }
    std::cout << "Done.\n";
    return 0;
}

} // namespace

void add_init(CLI::App& app, Action& action) {
    auto args = std::make_shared<InitArgs>();
    auto* cmd = app.add_subcommand(
        "init",
        "Install sonata's PreToolUse hook in Claude Code's settings, register `sonata mcp` as its "
        "MCP server (and a commented sonata.toml in project scope). Shows what it will change; "
        "without --yes it asks on a terminal, and with "
        "no terminal it changes nothing and exits 2");
    cmd->add_option("--scope", args->scope,
                    "project: ./.claude/settings.json and ./.mcp.json; global: "
                    "~/.claude/settings.json and ~/.claude.json")
        ->check(CLI::IsMember({"project", "global"}));
    cmd->add_flag("--yes,-y", args->yes, "Apply without asking");
    cmd->add_flag("--remove", args->remove,
                  "Take out what init added (sonata.toml only when unchanged)");
    cmd->add_flag("--plugin", args->plugin,
                  "Install the sonata plugin (hook, MCP server, agents) with `claude plugin` "
                  "instead (user scope with --scope global)");
    cmd->add_option(
        "--marketplace", args->marketplace,
        "With --plugin: the directory holding .claude-plugin/marketplace.json "
        "(default: where this sonata was installed from: $SONATA_MARKETPLACE_DIR, the npm "
        "package, ../share/sonata beside the binary, or its source tree)");
    cmd->callback([&action, args] {
        action = [args](const Context& context) { return run_init(*args, context); };
    });
}

} // namespace sonata::cli
