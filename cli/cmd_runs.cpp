// The commands that act on runs by id: status, wait, log, cancel, diff, apply, discard, runs,
// gc, and the hidden supervise that is the supervisor itself. Runs are looked up where `dispatch`
// puts them for the working directory (the project's .sonata/runs, else the state dir).
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "cli/app.hpp"
#include "cli/run_output.hpp"
#include "core/json_parse.hpp"
#include "core/session.hpp"
#include "core/tmux.hpp"
#include "dispatch/caller/dispatcher.hpp"
#include "dispatch/caller/run.hpp"
#include "dispatch/caller/worktree_dispatch.hpp"
#include "dispatch/run_dir.hpp"
#include "dispatch/supervisor/supervise.hpp"

namespace sonata::cli {
namespace {

struct RunArgs {
    std::optional<std::string> id; ///< Absent: status looks at the newest run.
    bool json = false;
    bool yes = false;
    bool no = false;
    bool follow = false;
    bool stat = false;
    bool include_sensitive = false;
    std::optional<long> timeout;
    std::optional<std::string> older_than;
};

Result<int> run_status(const RunArgs& args, const Context& context) {
    auto dir = args.id ? dispatch::run_dir_of(*args.id, context.cwd, context.env)
                       : dispatch::newest_run_dir(context.cwd, context.env);
    SONATA_TRY(dir);
    auto receipt = dispatch::run_status(*dir);
    SONATA_TRY(receipt);
    if (args.json)
        std::cout << dispatch::receipt_to_json(*receipt);
    else
        std::cout << status_line(*receipt) << '\n';
    return 0;
}

Result<int> run_wait(const RunArgs& args, const Context& context) {
    auto dir = dispatch::run_dir_of(args.id.value_or(""), context.cwd, context.env);
    SONATA_TRY(dir);
    auto config = context.config();
    SONATA_TRY(config);
    const auto window =
        args.timeout ? std::chrono::seconds(*args.timeout) : config->dispatch_window;
    auto receipt = dispatch::wait_run(*dir, window);
    SONATA_TRY(receipt);
    print_run(*dir, *receipt, args.json);
    return to_int(dispatch::exit_code_for(*receipt));
}

Result<int> run_cancel(const RunArgs& args, const Context& context) {
    auto dir = dispatch::run_dir_of(args.id.value_or(""), context.cwd, context.env);
    SONATA_TRY(dir);
    auto receipt = dispatch::cancel_run(*dir);
    SONATA_TRY(receipt);
    std::cout << status_line(*receipt) << '\n';
    return 0;
}

Result<int> run_diff(const RunArgs& args, const Context& context) {
    auto dir = dispatch::run_dir_of(args.id.value_or(""), context.cwd, context.env);
    SONATA_TRY(dir);
    auto diff = dispatch::run_diff(*dir, args.stat, context.env);
    SONATA_TRY(diff);
    std::cout << *diff;
    return 0;
}

Result<int> run_apply(const RunArgs& args, const Context& context) {
    auto dir = dispatch::run_dir_of(args.id.value_or(""), context.cwd, context.env);
    SONATA_TRY(dir);
    auto applied = dispatch::apply_run(*dir, context.env,
                                       args.include_sensitive ? dispatch::GuardedPaths::include
                                                              : dispatch::GuardedPaths::hold_back);
    SONATA_TRY(applied);
    const std::string summary = dispatch::apply_summary(*args.id, *applied);
    if (!applied->conflicts.empty()) {
        std::cerr << "sonata: " << summary;
        return to_int(ExitCode::failure);
    }
    std::cout << summary;
    return 0;
}

Result<int> run_discard(const RunArgs& args, const Context& context) {
    auto dir = dispatch::run_dir_of(args.id.value_or(""), context.cwd, context.env);
    SONATA_TRY(dir);
    SONATA_TRY(dispatch::discard_run(*dir, context.env));
    std::cout << "discarded run " << *args.id << "'s worktree and branch\n";
    return 0;
}

Result<int> run_approve(const RunArgs& args, const Context& context) {
    if (args.yes == args.no) return fail(ExitCode::usage, "approve takes one of --yes and --no");
    auto dir = dispatch::run_dir_of(args.id.value_or(""), context.cwd, context.env);
    SONATA_TRY(dir);
    auto receipt = dispatch::approve_run(*dir, args.yes, std::chrono::seconds(15));
    SONATA_TRY(receipt);
    std::cout << status_line(*receipt) << '\n';
    return 0;
}

/// Attaches this terminal to a TUI run's tmux session (tmux replaces sonata).
Result<int> run_attach(const RunArgs& args, const Context& context) {
    auto dir = dispatch::run_dir_of(args.id.value_or(""), context.cwd, context.env);
    SONATA_TRY(dir);
    auto receipt = dispatch::run_status(*dir);
    SONATA_TRY(receipt);
    if (!receipt->interactive)
        return fail(ExitCode::usage, "run " + receipt->id +
                                         " runs headless: there is no TUI to "
                                         "attach to (`sonata log " +
                                         receipt->id + " --follow`)");
    if (dispatch::is_final(receipt->state))
        return fail(ExitCode::usage, "run " + receipt->id + " has ended (" +
                                         std::string(to_string(receipt->state)) + ")");
    // The socket comes from the receipt, which anyone who can write the run directory can plant:
    // only a Unix socket of this user is attached to, with the tmux found on PATH, never an argv
    // read from the file.
    struct stat st {};
    const std::string& socket = receipt->tmux_socket;
    if (socket.empty() || socket.front() != '/' || ::lstat(socket.c_str(), &st) != 0 ||
        !S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid()) {
        return fail(ExitCode::failure,
                    "run " + receipt->id + " has no tmux socket of yours to attach to (yet)");
    }
    const auto path = context.env.find("PATH");
    const auto tmux =
        search_path("tmux", path == context.env.end() ? "/usr/bin:/bin" : path->second);
    if (!tmux) return fail(ExitCode::failure, "tmux is not on PATH");
    std::vector<std::string> client = tmux_attach_argv(*tmux, socket);
    std::vector<char*> argv;
    for (auto& a : client)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::cout.flush();
    ::execv(argv[0], argv.data());
    return fail(ExitCode::failure, "cannot run " + *tmux);
}

/// Copies harness.log to stdout; with --follow, keeps copying until the run is final.
Result<int> run_log(const RunArgs& args, const Context& context) {
    auto dir = dispatch::run_dir_of(args.id.value_or(""), context.cwd, context.env);
    SONATA_TRY(dir);
    const int fd =
        ::open((*dir + "/harness.log").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    char buffer[65536];
    for (;;) {
        for (ssize_t n = 0; fd >= 0 && (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
            std::cout.write(buffer, n);
        }
        std::cout.flush();
        if (!args.follow) break;
        auto receipt = dispatch::run_status(*dir);
        if (!receipt || dispatch::is_final(receipt->state)) {
            for (ssize_t n = 0; fd >= 0 && (n = ::read(fd, buffer, sizeof buffer)) > 0;)
                std::cout.write(buffer, n);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (fd >= 0) ::close(fd);
    return 0;
}

Result<int> run_runs(const RunArgs& args, const Context& context) {
    auto dirs = dispatch::all_run_dirs(context.cwd, context.env);
    SONATA_TRY(dirs);
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& dir : *dirs) {
        auto receipt = dispatch::run_status(dir);
        if (!receipt) {
            std::cerr << "sonata: warning: " << receipt.error().message << '\n';
            continue;
        }
        if (args.json)
            all.push_back(parse_ordered_json(dispatch::receipt_to_json(*receipt)).value());
        else
            std::cout << status_line(*receipt) << '\n';
    }
    if (args.json)
        std::cout << all.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                  << '\n';
    return 0;
}

/// "7d", "12h", "30m", "45s" or a number of seconds.
Result<std::chrono::seconds> parse_age(const std::string& text) {
    std::size_t used = 0;
    long long value = -1;
    try {
        value = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    const std::string unit = text.substr(used);
    const long long scale = unit.empty() || unit == "s" ? 1
                            : unit == "m"               ? 60
                            : unit == "h"               ? 3600
                            : unit == "d"               ? 86400
                                                        : 0;
    if (used == 0 || value < 0 || scale == 0 || value > 3650LL * 86400 / scale) {
        return fail(ExitCode::usage,
                    "--older-than '" + text + "' is not an age like 7d, 12h, 30m or 45s");
    }
    return std::chrono::seconds(value * scale);
}

/// Removes finished runs that ended longer ago than --older-than; never a run still going.
Result<int> run_gc(const RunArgs& args, const Context& context) {
    auto age = parse_age(args.older_than.value_or("7d"));
    SONATA_TRY(age);
    auto dirs = dispatch::all_run_dirs(context.cwd, context.env);
    SONATA_TRY(dirs);
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    int removed = 0;
    int kept = 0;
    for (const auto& path : *dirs) {
        const std::string id = std::filesystem::path(path).filename().string();
        // A run a supervisor still holds is going, whatever its receipt says.
        auto dir = dispatch::RunDirectory::open(path);
        const Result<dispatch::Receipt> receipt =
            dir ? dispatch::run_status(dir->path()) : tl::unexpected(dir.error());
        const auto ended = receipt ? parse_utc(receipt->ended_at) : std::nullopt;
        if (!receipt || !dispatch::is_final(receipt->state) || !ended || dir->supervised() ||
            now - *ended < age->count()) {
            ++kept;
            continue;
        }
        // A worktree run's worktree and branch go with it.
        SONATA_TRY(dispatch::discard_run(path, context.env));
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
        if (ec)
            return fail(ExitCode::failure, "cannot remove run " + id + " (" + ec.message() + ")");
        std::cout << "removed " << id << '\n';
        ++removed;
    }
    std::cout << "sonata gc: removed " << removed << " finished run(s), kept " << kept << '\n';
    return 0;
}

using Body = Result<int> (*)(const RunArgs&, const Context&);

CLI::App* add_run_command(CLI::App& app, Action& action, const char* name, const char* help,
                          Body body, std::shared_ptr<RunArgs> args, bool id_required) {
    auto* cmd = app.add_subcommand(name, help);
    auto* id = cmd->add_option("id", args->id, "The run's id (`sonata runs` lists them)");
    if (id_required) id->required();
    cmd->callback([&action, args, body] {
        action = [args, body](const Context& context) { return body(*args, context); };
    });
    return cmd;
}

/// status, wait, log, approve, attach, cancel: following one run and answering it.
void add_follow_commands(CLI::App& app, Action& action) {
    auto status = std::make_shared<RunArgs>();
    add_run_command(app, action, "status", "Where a run stands (default: the newest)", run_status,
                    status, false)
        ->add_flag("--json", status->json, "Print the receipt");
    auto wait = std::make_shared<RunArgs>();
    auto* w = add_run_command(app, action, "wait",
                              "Wait until a run is done, paused or stalled; print its report",
                              run_wait, wait, true);
    w->add_option("--timeout", wait->timeout,
                  "Seconds to wait at most (default: [dispatch] window_seconds)")
        ->check(CLI::Range(0L, 7L * 24 * 3600));
    w->add_flag("--json", wait->json, "Print the receipt and report as JSON");
    auto log = std::make_shared<RunArgs>();
    add_run_command(app, action, "log", "Print a run's harness.log", run_log, log, true)
        ->add_flag("--follow,-f", log->follow, "Keep printing until the run ends");
    auto approve = std::make_shared<RunArgs>();
    auto* a = add_run_command(app, action, "approve", "Answer the approval card a paused run shows",
                              run_approve, approve, true);
    a->add_flag("--yes", approve->yes, "Accept what the card asks, once");
    a->add_flag("--no", approve->no, "Decline it");
    add_run_command(app, action, "attach", "Attach this terminal to a TUI run (detach: C-b d)",
                    run_attach, std::make_shared<RunArgs>(), true);
    add_run_command(app, action, "cancel", "Stop a run: kill its harness, keep everything it wrote",
                    run_cancel, std::make_shared<RunArgs>(), true);
}

/// diff, apply, discard: a worktree run's changes.
void add_worktree_commands(CLI::App& app, Action& action) {
    auto diff = std::make_shared<RunArgs>();
    add_run_command(app, action, "diff", "A worktree run's changes (`--worktree`), as git diff",
                    run_diff, diff, true)
        ->add_flag("--stat", diff->stat, "Only the files and their changed lines");
    auto apply = std::make_shared<RunArgs>();
    add_run_command(app, action, "apply",
                    "Merge a finished worktree run's changes into your working tree (three-way); "
                    "on a conflict nothing changes; changes to paths Claude Code guards are held "
                    "back",
                    run_apply, apply, true)
        ->add_flag("--include-sensitive", apply->include_sensitive,
                   "Also land the run's changes to guarded paths (.claude/, .mcp.json, .vscode/, "
                   "…), which you have read");
    add_run_command(app, action, "discard",
                    "Remove a finished worktree run's worktree and its branch", run_discard,
                    std::make_shared<RunArgs>(), true);
}

/// runs, gc, and the hidden supervise: every run here.
void add_housekeeping_commands(CLI::App& app, Action& action) {
    auto runs = std::make_shared<RunArgs>();
    auto* r = app.add_subcommand("runs", "Every run here, newest first");
    r->add_flag("--json", runs->json, "Print the receipts");
    r->callback([&action, runs] {
        action = [runs](const Context& context) { return run_runs(*runs, context); };
    });
    auto gc = std::make_shared<RunArgs>();
    auto* g = app.add_subcommand(
        "gc",
        "Remove finished runs (done, failed, timed-out, cancelled, lost), never running ones");
    g->add_option("--older-than", gc->older_than,
                  "Only runs that ended longer ago than this (7d, 12h, 30m, 45s; default 7d)");
    g->callback(
        [&action, gc] { action = [gc](const Context& context) { return run_gc(*gc, context); }; });
    auto dir = std::make_shared<std::string>();
    auto* supervise =
        app.add_subcommand("supervise", "The supervisor of one run (started by dispatch)");
    supervise->group(""); // hidden: sonata starts it itself
    supervise->add_option("dir", *dir, "The run directory")->required();
    supervise->callback([&action, dir] {
        action = [dir](const Context&) -> Result<int> {
            auto runner = make_system_runner();
            return dispatch::supervise(*dir, *runner);
        };
    });
}

} // namespace

void add_runs(CLI::App& app, Action& action) {
    add_follow_commands(app, action);
    add_worktree_commands(app, action);
    add_housekeeping_commands(app, action);
}

} // namespace sonata::cli
