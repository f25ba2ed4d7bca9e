// `sonata dispatch` and `sonata run`: plan a dispatch as `sonata plan` does, refuse exactly when it
// refuses, else start the run under a detached supervisor. `run` prints the run's id at once;
// `dispatch` waits until the run is done, paused, stalled or its window passes, then prints the
// report (or where the run stands).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "adapters/support/pipeline.hpp"
#include "cli/app.hpp"
#include "cli/dispatch_asks.hpp"
#include "cli/fanout_report.hpp"
#include "cli/init_support.hpp"
#include "cli/run_output.hpp"
#include "core/decision_json.hpp"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "dispatch/caller/dispatch_ask.hpp"
#include "dispatch/caller/dispatcher.hpp"
#include "dispatch/caller/fanout.hpp"
#include "dispatch/caller/run.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::cli {
namespace {

constexpr std::size_t k_max_task_bytes = 1U << 20U;

struct DispatchArgs {
    adapters::DispatchRequest request;
    std::string task;
    std::string task_file;
    std::string stdin_marker; ///< "-": the task comes on stdin.
    std::string role;
    std::string resume_run;
    std::string cwd;
    std::optional<long> timeout;
    std::optional<long> window;
    bool json = false;
    bool worktree = false;
    std::string fanout; ///< --fanout: harness ids, comma-separated, or "all".
    bool wait = true;   ///< false for `sonata run`
};

Result<std::string> read_task(const DispatchArgs& args) {
    const int given = (args.task.empty() ? 0 : 1) + (args.task_file.empty() ? 0 : 1) +
                      (args.stdin_marker.empty() ? 0 : 1);
    if (given != 1)
        return fail(ExitCode::usage,
                    "give the task once: --task TEXT, --task-file FILE, or - for stdin");
    if (!args.stdin_marker.empty() && args.stdin_marker != "-") {
        return fail(ExitCode::usage, "unexpected argument '" + args.stdin_marker +
                                         "' (only - reads the task from stdin)");
    }
    if (!args.task.empty()) return args.task;
    if (!args.task_file.empty()) {
        auto text = read_file_bounded(args.task_file, k_max_task_bytes);
        if (!text) return fail(ExitCode::usage, "--task-file: " + text.error().message);
        return *text;
    }
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > k_max_task_bytes)
            return fail(ExitCode::usage, "the task on stdin is larger than 1 MiB");
    }
    return text;
}

/// A fan-out: the task on each harness at once; waits for them all (within the window) and prints
/// the combined report. Exit 0 when at least one run is done.
Result<int> run_fanout(const DispatchArgs& args, const dispatch::DispatchOrder& order,
                       const std::string& task, const Config& config) {
    const auto timeout =
        args.timeout ? std::optional(std::chrono::seconds(*args.timeout)) : std::nullopt;
    const auto members = dispatch::start_fanout(order.request, order.fanout, task, config, timeout,
                                                order.only_runnable);
    if (!args.wait) {
        for (const auto& m : members)
            std::cout << m.harness << "  " << (m.id.empty() ? "-" : m.id) << '\n';
        return 0;
    }
    const auto window = args.window ? std::chrono::seconds(*args.window) : config.dispatch_window;
    const auto deadline = std::chrono::steady_clock::now() + window;
    for (const auto& m : members) {
        if (m.run_dir.empty()) continue;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        (void)dispatch::wait_run(m.run_dir, std::max(left, std::chrono::milliseconds(0)));
    }
    std::cout << fanout_report(members);
    return dispatch::any_done(members) ? 0 : to_int(ExitCode::run_failed);
}

/// The command line's dispatch, in no syntax: the rules are dispatch::decide_dispatch's.
dispatch::DispatchAsk ask_of(const DispatchArgs& args, const Context& context) {
    dispatch::DispatchAsk ask;
    ask.request = args.request;
    ask.request.cwd = dispatch::workspace_path(args.cwd, context.cwd);
    ask.request.session_cwd =
        context.cwd; // never --cwd's: a workspace may hold planted session files
    ask.request.env = context.env;
    ask.role = args.role;
    ask.resume = args.resume_run;
    ask.fanout = args.fanout;
    if (args.worktree) ask.workspace = adapters::Workspace::worktree;
    return ask;
}

Result<int> run_dispatch(const DispatchArgs& args, const Context& context) {
    auto config = context.config();
    SONATA_TRY(config);
    auto task = read_task(args);
    SONATA_TRY(task);
    auto order = dispatch::decide_dispatch(ask_of(args, context), *config);
    SONATA_TRY(order);
    if (order->is_fanout()) return run_fanout(args, *order, *task, *config);
    const auto timeout =
        args.timeout ? std::optional(std::chrono::seconds(*args.timeout)) : std::nullopt;
    const auto window = args.window ? std::chrono::seconds(*args.window) : config->dispatch_window;
    const dispatch::Settle settle =
        [&](const std::string& dir) -> std::optional<dispatch::Receipt> {
        auto receipt = dispatch::wait_run(dir, window);
        if (receipt && dispatch::is_final(receipt->state)) return *receipt;
        return std::nullopt;
    };
    auto started = dispatch::start_dispatch(order->request, *task, *config, timeout,
                                            args.wait ? settle : dispatch::Settle{});
    SONATA_TRY(started);
    const Decision& decision = started->planned.decision;
    if (!decision.runs()) {
        std::cout << decision_to_text(decision); // the same text as `sonata plan`
        for (const auto& a : started->passed_over)
            std::cout << "  also tried " << a.harness << ": " << a.why << '\n';
        return to_int(ExitCode::refused);
    }
    for (const auto& a : started->passed_over)
        std::cerr << "sonata: passed over " << a.harness << " (" << a.why << ")\n";
    for (const auto& warning : decision.warnings)
        std::cerr << "sonata: warning: " << warning << '\n';
    if (!args.wait) {
        std::cout << started->id << '\n';
        return 0;
    }
    auto receipt = dispatch::wait_run(started->run_dir, window);
    SONATA_TRY(receipt);
    print_run(started->run_dir, *receipt, args.json);
    return to_int(dispatch::exit_code_for(*receipt));
}

void add_common(CLI::App* cmd, DispatchArgs& args) {
    cmd->add_option("--harness", args.request.harness, "Harness id (default: the role's harness)");
    cmd->add_option("--role", args.role,
                    "Role: read-only, write, review, explore, plan, code, or one from config "
                    "(default with --harness: write)");
    cmd->add_option("--resume", args.resume_run,
                    "Continue the harness session of a finished run (its harness and role), "
                    "never wider than that run nor the parent's mode now");
    cmd->add_option("--task", args.task, "The task, as text");
    cmd->add_option("--task-file", args.task_file, "Read the task from FILE");
    cmd->add_option("stdin", args.stdin_marker, "- reads the task from stdin");
    cmd->add_option("--mode", args.request.mode,
                    "The parent's mode; with a known session it may only narrow it");
    cmd->add_option("--session", args.request.session,
                    "Claude Code session id whose mode file to read");
    cmd->add_option("--model", args.request.model, "Model to ask the harness for");
    cmd->add_option("--option", args.request.options,
                    "Per-task option key=value (may only narrow)");
    cmd->add_option("--max-budget-usd", args.request.budget,
                    "Spending limit in dollars: enforced by the harness where it can (claude); "
                    "elsewhere a warning, or a refusal under budget = \"strict\"");
    cmd->add_option("--cwd", args.cwd, "The workspace (default: the working directory)");
    cmd->add_option("--timeout", args.timeout,
                    "Seconds before the harness is killed (default: [dispatch] timeout_seconds)")
        ->check(CLI::Range(1L, 7L * 24 * 3600));
    cmd->add_option("--harness-version", args.request.version,
                    "Plan for this harness version instead of detecting it")
        ->group("");
    cmd->add_option("--matrix", args.request.matrix,
                    "Capability matrix for the gate (default: this machine's)");
    cmd->add_flag("--json", args.json, "Print the receipt (and report) as JSON");
    cmd->add_option("--fanout", args.fanout,
                    "Hand the task to several harnesses at once (H1,H2,… or all): each planned "
                    "and gated on its own, a write role's each in a worktree; one combined report");
    cmd->add_flag("--worktree", args.worktree,
                  "Run in a git worktree of its own (.sonata/worktrees/ID, branch sonata/ID) "
                  "from the workspace as it is; `sonata diff`, `apply` and `discard` take it on");
}

} // namespace

Result<dispatch::DispatchAsk> ask_from_command_line(const std::vector<std::string>& args,
                                                    const Context& context) {
    CLI::App app("sonata dispatch");
    DispatchArgs parsed;
    add_common(&app, parsed);
    std::vector<std::string> reversed(args.rbegin(), args.rend()); // CLI11 parses from the back
    try {
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        return fail(ExitCode::usage, e.what());
    }
    return ask_of(parsed, context);
}

void add_dispatch(CLI::App& app, Action& action) {
    auto args = std::make_shared<DispatchArgs>();
    auto* cmd = app.add_subcommand(
        "dispatch",
        "Run a task on a harness, gated as `sonata plan` decides, and wait for its report");
    add_common(cmd, *args);
    cmd->add_option("--window", args->window,
                    "Seconds to wait before returning with the run still going (default 1500)")
        ->check(CLI::Range(0L, 7L * 24 * 3600));
    cmd->callback([&action, args] {
        action = [args](const Context& context) { return run_dispatch(*args, context); };
    });
    auto run_args = std::make_shared<DispatchArgs>();
    run_args->wait = false;
    auto* run = app.add_subcommand(
        "run", "Like dispatch, but print the run's id at once and leave it running");
    add_common(run, *run_args);
    run->callback([&action, run_args] {
        action = [run_args](const Context& context) { return run_dispatch(*run_args, context); };
    });
}

} // namespace sonata::cli
