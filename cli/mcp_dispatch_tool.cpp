// The dispatch tool (see mcp_dispatch_tool.hpp). A refusal names the alternatives; a started run
// is told from its receipt, the same whether the call waited for it or a task reports it.
#include "cli/mcp_dispatch_tool.hpp"

#include <filesystem>
#include <optional>

#include "cli/dispatch_asks.hpp"
#include "cli/fanout_report.hpp"
#include "cli/mcp_run_results.hpp"
#include "cli/mcp_tool_support.hpp"
#include "core/decision_json.hpp"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "dispatch/caller/dispatch_ask.hpp"
#include "dispatch/caller/dispatcher.hpp"
#include "dispatch/caller/fanout.hpp"
#include "dispatch/caller/run.hpp"

namespace sonata::cli {
namespace {

using mcp::json;
using mcp::Progress;
using mcp::Stop;
using mcp::ToolResult;

constexpr std::size_t k_max_task_bytes = 1U << 20U;
/// Claude Code's key for what a server tells the model when it starts a task.
constexpr const char* k_claude_task_meta = "com.anthropic/agent-task";

/// The task from `task`, or from `task_file` relative to the workspace.
Result<std::string> task_of(const json& args, const std::string& cwd) {
    std::string task = text_arg(args, "task");
    if (!args.contains("task")) {
        const auto path = std::filesystem::path(cwd) / text_arg(args, "task_file");
        auto text = read_file_bounded(path.string(), k_max_task_bytes);
        if (!text) return fail(ExitCode::usage, "task_file: " + text.error().message);
        task = *text;
    }
    if (task.find_first_not_of(" \t\r\n") == std::string::npos)
        return fail(ExitCode::usage, "the task is empty");
    return task;
}

/// The answer to a call that failed before any run started.
ToolResult errored(const Error& error) { return untold(error_result(error).text, "error"); }

/// A dispatch the call asks for, decided and read.
struct Asked {
    dispatch::DispatchOrder order;
    std::string task;
    Config config;
};

/// The dispatch a call asks for; the answer that turns it down when it cannot be made.
tl::expected<Asked, ToolResult> asked_dispatch(const json& args, const Context& context) {
    if (args.contains("task") == args.contains("task_file"))
        return tl::unexpected(untold("give the task once: task or task_file", "error"));
    auto config = context.config();
    if (!config) return tl::unexpected(errored(config.error()));
    auto ask = ask_from_tool_arguments(args, context);
    if (!ask) return tl::unexpected(untold(ask.error().message, "error"));
    auto order = dispatch::decide_dispatch(*ask, *config);
    if (!order) return tl::unexpected(errored(order.error()));
    auto task = task_of(args, order->request.cwd);
    if (!task) return tl::unexpected(untold(task.error().message, "error"));
    return Asked{std::move(*order), std::move(*task), std::move(*config)};
}

/// The answer to a dispatch the gate refused: the decision, what was passed over, the parent.
ToolResult refusal(const dispatch::DispatchStarted& started) {
    std::string tried;
    for (const auto& a : started.passed_over)
        tried += "passed over " + a.harness + ": " + a.why + "\n";
    const auto& parent = started.planned.parent;
    return untold(decision_to_text(started.planned.decision) + tried +
                      parent_line(to_string(parent.mode), parent.source, parent.session_id) + "\n",
                  "refused");
}

/// A fan-out: the task on each harness at once, waited for within the window; one combined report.
ToolResult run_fanout(const Asked& asked, const json& args, const Context& context,
                      const Progress& progress, const Stop& stop) {
    const auto members =
        dispatch::start_fanout(asked.order.request, asked.order.fanout, asked.task, asked.config,
                               std::nullopt, asked.order.only_runnable);
    const auto window = window_of(args, context);
    const auto deadline = std::chrono::steady_clock::now() + window;
    json runs = json::array();
    std::string next = "none";
    for (const auto& m : members) {
        if (m.run_dir.empty()) continue;
        const auto left =
            std::chrono::duration_cast<Seconds>(deadline - std::chrono::steady_clock::now());
        auto r = watch(m.run_dir, std::max(left, Seconds(0)), progress, stop,
                       [&](const dispatch::Receipt& receipt) {
                           return m.harness + " " + std::string(to_string(receipt.state));
                       });
        if (!r) continue;
        runs.push_back(run_facts(*r));
        if (!dispatch::is_final(r->state)) next = "wait";
    }
    const std::string text =
        fanout_report(members, k_inline_report_chars / std::max<std::size_t>(members.size(), 1));
    return {text, !dispatch::any_done(members),
            json{{"state", "fanout"}, {"next", next}, {"runs", runs}, {"text", text}}};
}

ToolResult run_dispatch(const json& args, const Context& context, const Progress& progress,
                        const Stop& stop) {
    auto asked = asked_dispatch(args, context);
    if (!asked) return asked.error();
    if (asked->order.is_fanout()) return run_fanout(*asked, args, context, progress, stop);
    const auto window = window_of(args, context);
    // A ranked role moves on past a run that ends failed with no report: wait for each run as
    // the wait tool does, and stop waiting where the tool would return.
    const dispatch::Settle settle =
        [&](const std::string& dir) -> std::optional<dispatch::Receipt> {
        auto r = watch(dir, window, progress, stop, [](const dispatch::Receipt& receipt) {
            return receipt.harness + " " + std::string(to_string(receipt.state));
        });
        if (r && dispatch::is_final(r->state)) return *r;
        return std::nullopt;
    };
    auto started = dispatch::start_dispatch(asked->order.request, asked->task, asked->config,
                                            std::nullopt, settle);
    if (!started) return errored(started.error());
    if (!started->planned.decision.runs()) return refusal(*started);
    progress("started run " + started->id);
    return wait_and_tell(started->run_dir, window, progress, stop, "");
}

/// The dispatch as a task: the run starts and the call returns at once with its id. A ranked
/// role's first harness that plans to run is the one (falling through would mean waiting).
mcp::TaskStart start_dispatch_task(const json& args, const Context& context,
                                   const Progress& progress, const Stop& stop) {
    auto asked = asked_dispatch(args, context);
    if (!asked) return {"", asked.error()};
    // Several runs are not one task: a fan-out answers when its runs do (within the window).
    if (asked->order.is_fanout()) return {"", run_fanout(*asked, args, context, progress, stop)};
    auto started = dispatch::start_dispatch(asked->order.request, asked->task, asked->config,
                                            std::nullopt, {});
    if (!started) return {"", errored(started.error())};
    if (!started->planned.decision.runs()) return {"", refusal(*started)};
    auto receipt = dispatch::run_status(started->run_dir);
    const std::string note =
        (receipt ? run_header(*receipt) : "run " + started->id + "\n") +
        "The run's report comes back when it ends. The status and cancel tools take its id.";
    return {started->id, {}, {{k_claude_task_meta, {{"modelImmediateResponse", note}}}}};
}

} // namespace

Result<dispatch::DispatchAsk> ask_from_tool_arguments(const json& args, const Context& context) {
    dispatch::DispatchAsk ask;
    ask.request = base_request(args, context);
    if (auto bad = checked_dir(ask.request.cwd, context.cwd); !bad.empty())
        return fail(ExitCode::usage, bad);
    ask.role = text_arg(args, "role");
    ask.resume = text_arg(args, "resume");
    if (const auto it = args.find("fanout"); it != args.end())
        ask.fanout = join(it->get<std::vector<std::string>>(), ",");
    if (const auto it = args.find("worktree"); it != args.end() && *it == true)
        ask.workspace = adapters::Workspace::worktree;
    return ask;
}

mcp::Tool dispatch_tool(const Context& context) {
    const json budget = {{"type", "number"},
                         {"description", "A spending limit in dollars: enforced by the harness "
                                         "where it can (claude), else the run goes ahead with a "
                                         "warning (or is refused under budget = \"strict\")"}};
    const json options = {{"type", "object"},
                          {"additionalProperties", {{"type", "string"}}},
                          {"description", "Per-task options (key: value); they may only narrow"}};
    mcp::Tool tool{
        "dispatch",
        "Hand a task to another coding agent (a harness) and get its report. sonata runs it no "
        "more permissive than this session's mode, or refuses and names the alternatives. As a "
        "task, the report comes back when the run ends; otherwise the call returns when the run "
        "is done, paused at an approval (answer with approve), stalled, or when window_seconds "
        "pass (continue with wait, with the run id it names).",
        schema({{"harness", harness_prop()},
                {"role", role_prop()},
                {"task", string_prop("The task, as text")},
                {"task_file", string_prop("A file holding the task (relative to cwd)")},
                {"model", string_prop("The model to ask the harness for")},
                {"max_budget_usd", budget},
                {"options", options},
                {"cwd", string_prop("The workspace (default: this session's directory)")},
                {"resume", string_prop("A finished run's id: continue its harness session "
                                       "(its harness and role), never wider than that run")},
                {"fanout",
                 {{"type", "array"},
                  {"items", {{"type", "string"}}},
                  {"description", "Hand the task to these harnesses at once ([\"all\"]: every "
                                  "installed one), each planned and gated on its own, a write "
                                  "role's each in a worktree; one combined report"}}},
                {"worktree",
                 {{"type", "boolean"},
                  {"description", "Run in a git worktree of its own from the "
                                  "workspace as it is; diff, apply and discard "
                                  "take it on"}}},
                {"window_seconds", window_prop()}}),
        mcp::Access::acts, [context](const json& args, const Progress& progress, const Stop& stop) {
            return run_dispatch(args, context, progress, stop);
        }};
    tool.output_schema = run_output_schema();
    tool.start_task = [context](const json& args, const Progress& progress, const Stop& stop) {
        return start_dispatch_task(args, context, progress, stop);
    };
    return tool;
}

} // namespace sonata::cli
