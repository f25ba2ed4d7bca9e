// `sonata mcp`'s tools (see mcp_tools.hpp). A refusal or a failed run is a tool result marked as
// an error; the arguments reach a body already checked against its schema.
#include "cli/mcp_tools.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "adapters/support/pipeline.hpp"
#include "cli/run_output.hpp"
#include "core/decision_json.hpp"
#include "core/fs.hpp"
#include "core/session.hpp"
#include "dispatch/dispatcher.hpp"
#include "dispatch/run.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::cli {
namespace {

using mcp::json;
using mcp::Progress;
using mcp::Stop;
using mcp::ToolResult;
using Seconds = std::chrono::seconds;

constexpr std::size_t k_max_task_bytes = 1U << 20U;
/// A session file the PreToolUse hook wrote this recently is the session calling (the hook runs
/// for the MCP tool call itself, just before it reaches this server).
constexpr Seconds k_fresh_session{120};
constexpr Seconds k_progress_every{5};
constexpr Seconds k_approve_window{15};
/// The longest report returned inline; the rest is left to `sonata log ID` and the report file.
constexpr std::size_t k_inline_report_chars = 100000;

ToolResult error_result(const Error& error) { return {"sonata: error: " + error.message, true}; }

std::string text_arg(const json& args, const char* key) {
    const auto it = args.find(key);
    return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// --- Schemas -------------------------------------------------------------------------------------

json string_prop(const char* description) {
    return {{"type", "string"}, {"description", description}};
}

json schema(json properties, json required = json::array()) {
    return {{"type", "object"},
            {"properties", std::move(properties)},
            {"required", std::move(required)},
            {"additionalProperties", false}};
}

json id_prop() { return string_prop("The run's id, as dispatch returned it"); }

json window_prop() {
    return {{"type", "integer"},
            {"minimum", 0},
            {"maximum", 86400},
            {"description", "Seconds to wait before returning while the run goes on (default: "
                            "[dispatch] window_seconds)"}};
}

json role_prop() {
    return string_prop("read-only, write, review, explore, plan, code, or a role from sonata.toml");
}

json harness_prop() {
    return string_prop("Harness id (sonata harnesses lists them); default: the role's harness");
}

// --- The request a tool plans --------------------------------------------------------------------

/// The request every tool that plans builds: the parent's session as the hook recorded it, in the
/// directory the server was started for (the session's own). A `cwd` argument moves the
/// workspace only: a nested directory with a sonata.toml of its own is a project whose session
/// files anything that writes in the workspace may have planted.
adapters::DispatchRequest base_request(const json& args, const Context& context) {
    adapters::DispatchRequest request;
    request.cwd = context.cwd;
    if (const auto cwd = text_arg(args, "cwd"); !cwd.empty())
        request.cwd = std::filesystem::absolute(std::filesystem::path(context.cwd) / cwd)
                          .lexically_normal()
                          .string();
    request.session_cwd = context.cwd;
    request.env = context.env;
    const auto known = context.env.find("CLAUDE_CODE_SESSION_ID");
    if (known == context.env.end() || known->second.empty()) {
        const auto now = std::chrono::system_clock::now();
        if (auto id = freshest_session(context.cwd, context.env, k_fresh_session, now))
            request.session = *id;
    }
    request.harness = text_arg(args, "harness");
    if (const auto role = text_arg(args, "role"); !role.empty()) request.role = role;
    request.model = text_arg(args, "model");
    if (const auto it = args.find("max_budget_usd"); it != args.end())
        request.budget = it->get<double>(); // the planner checks it is finite and above 0
    if (const auto it = args.find("options"); it != args.end()) {
        for (const auto& [key, value] : it->items())
            request.options.push_back(key + "=" + value.get<std::string>());
    }
    return request;
}

/// The line that says where the parent's mode came from.
std::string parent_line(const adapters::Planned& planned) {
    const auto& p = planned.parent;
    const std::string mode(to_string(p.mode));
    if (p.source == "session-file")
        return "parent mode: " + mode + " (session " + p.session_id + ", recorded by the hook)";
    if (p.source == "default" && p.session_id.empty()) {
        return "parent mode: default (assumed: sonata could not tell this session's mode; `sonata "
               "init` installs the hook that records it)";
    }
    return "parent mode: " + mode + " (" + p.source + ")";
}

/// The workspace a tool call names must be a directory inside this session's own (symlinks
/// resolved): the parent's modes grant edits there, so a dispatch elsewhere would be wider.
std::string checked_dir(const std::string& cwd, const std::string& session_dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(cwd, ec)) return "cwd " + cwd + " is not a directory";
    const auto target = fs::weakly_canonical(cwd, ec);
    const auto root = fs::weakly_canonical(session_dir, ec);
    const bool inside =
        !ec &&
        std::mismatch(root.begin(), root.end(), target.begin(), target.end()).first == root.end();
    if (!inside) {
        return "cwd " + cwd + " is outside this session's directory " + session_dir +
               ": a dispatch may only work where the session itself may";
    }
    return {};
}

// --- Waiting on a run ----------------------------------------------------------------------------

/// A run that still works towards its end: starting, queued or running.
bool going(dispatch::RunState state) {
    return state == dispatch::RunState::running || state == dispatch::RunState::starting ||
           state == dispatch::RunState::queued;
}

/// Waits up to `window` while the run is going, sending `describe(receipt)` as progress every few
/// seconds; the receipt then (the run may go on).
Result<dispatch::Receipt>
watch(const std::string& run_dir, Seconds window, const Progress& progress, const Stop& stop,
      const std::function<std::string(const dispatch::Receipt&)>& describe) {
    const auto deadline = std::chrono::steady_clock::now() + window;
    for (;;) {
        const auto left =
            std::chrono::duration_cast<Seconds>(deadline - std::chrono::steady_clock::now());
        auto receipt = dispatch::wait_run(run_dir, std::clamp(left, Seconds(0), k_progress_every));
        if (!receipt || !going(receipt->state) || left.count() <= 0 || stop) return receipt;
        progress(describe(*receipt));
    }
}

/// What the model reads once a wait returns: the run's report or status, and how to go on.
ToolResult tell(const std::string& run_dir, const dispatch::Receipt& r, const std::string& header) {
    std::string text = header + run_text(run_dir, r, k_inline_report_chars);
    if (r.state == dispatch::RunState::paused) {
        text += "\nThe harness asks:\n" + r.prompt + "\nAnswer with the approve tool: {\"id\": \"" +
                r.id + "\", \"answer\": \"yes\"} (or \"no\").\n";
    } else if (!dispatch::is_final(r.state)) {
        text += "\nThe run goes on; continue with the wait tool: {\"id\": \"" + r.id + "\"}.\n";
    } else if (r.degraded) {
        text += "\nThe run is degraded: " + r.degraded_reason + "\n";
    }
    const bool failed = r.state == dispatch::RunState::failed ||
                        r.state == dispatch::RunState::timed_out ||
                        r.state == dispatch::RunState::lost;
    return {text, failed};
}

/// Waits up to `window` for the run to leave `running`/`starting`, with its state and last output
/// line as progress; then tells.
ToolResult wait_and_tell(const std::string& run_dir, Seconds window, const Progress& progress,
                         const Stop& stop, const std::string& header) {
    auto receipt = watch(run_dir, window, progress, stop, [&](const dispatch::Receipt& r) {
        const auto line = last_output_line(run_dir);
        return std::string(to_string(r.state)) + (line.empty() ? "" : ": " + line);
    });
    if (!receipt) return error_result(receipt.error());
    return tell(run_dir, *receipt, header);
}

/// The directory of the run the call's `id` names (checked: an empty or hostile id is an error).
Result<std::string> named_run(const json& args, const Context& context) {
    return dispatch::run_dir_of(text_arg(args, "id"), context.cwd, context.env);
}

Seconds window_of(const json& args, const Context& context) {
    if (const auto it = args.find("window_seconds"); it != args.end())
        return Seconds(it->get<long long>());
    auto config = context.config();
    return config ? config->dispatch_window : Seconds(1500);
}

// --- dispatch ------------------------------------------------------------------------------------

/// The arguments' own consistency, before anything is read; empty when they make sense.
std::string dispatch_arguments_error(const json& args) {
    if (args.contains("task") == args.contains("task_file"))
        return "give the task once: task or task_file";
    const bool resuming = args.contains("resume");
    if (!resuming && !args.contains("harness") && !args.contains("role"))
        return "give a harness or a role (or resume, a finished run's id)";
    if (resuming && args.contains("role")) return "resume continues the run's own role: drop role";
    return {};
}

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

/// The header of a started run's answer: what runs, for whom, and what was passed over.
std::string started_header(const dispatch::DispatchStarted& started, const std::string& tried) {
    const auto& decision = started.planned.decision;
    std::string header = "run " + started.id + ": " + decision.harness + "@" + decision.version +
                         " in " + std::string(to_string(decision.effective_mode)) + " mode\n" +
                         parent_line(started.planned) + "\n" + tried;
    for (const auto& warning : decision.warnings)
        header += "warning: " + warning + "\n";
    return header + "\n";
}

ToolResult run_dispatch(const json& args, const Context& context, const Progress& progress,
                        const Stop& stop) {
    if (auto bad = dispatch_arguments_error(args); !bad.empty()) return {bad, true};
    auto config = context.config();
    if (!config) return error_result(config.error());
    auto request = base_request(args, context);
    if (auto bad = checked_dir(request.cwd, context.cwd); !bad.empty()) return {bad, true};
    if (args.contains("resume")) {
        if (auto ok = dispatch::resume_run(request, text_arg(args, "resume")); !ok)
            return error_result(ok.error());
    }
    auto task = task_of(args, request.cwd);
    if (!task) return {task.error().message, true};
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
    auto started = dispatch::start_dispatch(request, *task, *config, std::nullopt, settle);
    if (!started) return error_result(started.error());
    std::string tried;
    for (const auto& a : started->passed_over)
        tried += "passed over " + a.harness + ": " + a.why + "\n";
    const auto& decision = started->planned.decision;
    if (!decision.runs())
        return {decision_to_text(decision) + tried + parent_line(started->planned) + "\n", true};
    progress("started run " + started->id);
    return wait_and_tell(started->run_dir, window, progress, stop, started_header(*started, tried));
}

mcp::Tool dispatch_tool(const Context& context) {
    const json budget = {{"type", "number"},
                         {"description", "A spending limit in dollars: enforced by the harness "
                                         "where it can (claude), else the run goes ahead with a "
                                         "warning (or is refused under budget = \"strict\")"}};
    const json options = {{"type", "object"},
                          {"additionalProperties", {{"type", "string"}}},
                          {"description", "Per-task options (key: value); they may only narrow"}};
    return {"dispatch",
            "Hand a task to another coding agent (a harness) and wait for its report. sonata runs "
            "it no more permissive than this session's mode, or refuses and names the "
            "alternatives. Returns when the run is done, paused at an approval (answer with "
            "approve), stalled, or when window_seconds pass (continue with wait).",
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
                    {"window_seconds", window_prop()}}),
            mcp::Access::acts,
            [context](const json& args, const Progress& progress, const Stop& stop) {
                return run_dispatch(args, context, progress, stop);
            }};
}

// --- wait, approve -------------------------------------------------------------------------------

mcp::Tool wait_tool(const Context& context) {
    return {"wait", "Wait for a run to finish, pause or stall; returns its report.",
            schema({{"id", id_prop()}, {"window_seconds", window_prop()}}, {"id"}),
            mcp::Access::reads,
            [context](const json& args, const Progress& progress, const Stop& stop) {
                auto dir = named_run(args, context);
                if (!dir) return error_result(dir.error());
                return wait_and_tell(*dir, window_of(args, context), progress, stop, "");
            }};
}

ToolResult run_approve(const json& args, const Context& context, const Progress& progress,
                       const Stop& stop) {
    auto dir = named_run(args, context);
    if (!dir) return error_result(dir.error());
    const std::string answer = text_arg(args, "answer");
    auto receipt = dispatch::approve_run(*dir, answer == "yes", k_approve_window);
    if (!receipt) return error_result(receipt.error());
    return wait_and_tell(*dir, window_of(args, context), progress, stop,
                         "answered " + answer + "\n");
}

mcp::Tool approve_tool(const Context& context) {
    const json answer = {{"type", "string"},
                         {"enum", {"yes", "no"}},
                         {"description", "yes allows the action once; no declines it"}};
    return {"approve", "Answer the approval a paused run waits on, then wait for it as wait does.",
            schema({{"id", id_prop()}, {"answer", answer}, {"window_seconds", window_prop()}},
                   {"id", "answer"}),
            mcp::Access::acts,
            [context](const json& args, const Progress& progress, const Stop& stop) {
                return run_approve(args, context, progress, stop);
            }};
}

// --- status, cancel, runs ------------------------------------------------------------------------

mcp::Tool status_tool(const Context& context) {
    return {"status", "One run's state (the newest run without an id).",
            schema({{"id", id_prop()}}), mcp::Access::reads,
            [context](const json& args, const Progress&, const Stop&) {
                // No id: the newest run. An id that is there is checked, the empty one included.
                auto dir = args.contains("id") ? named_run(args, context)
                                               : dispatch::newest_run_dir(context.cwd, context.env);
                if (!dir) return error_result(dir.error());
                auto receipt = dispatch::run_status(*dir);
                if (!receipt) return error_result(receipt.error());
                return ToolResult{status_line(*receipt) + "\n"};
            }};
}

mcp::Tool cancel_tool(const Context& context) {
    return {"cancel", "Stop a run; what it did stays.", schema({{"id", id_prop()}}, {"id"}),
            mcp::Access::acts, [context](const json& args, const Progress&, const Stop&) {
                auto dir = named_run(args, context);
                if (!dir) return error_result(dir.error());
                auto receipt = dispatch::cancel_run(*dir);
                if (!receipt) return error_result(receipt.error());
                return ToolResult{status_line(*receipt) + "\n"};
            }};
}

mcp::Tool runs_tool(const Context& context) {
    return {"runs", "Every run of this project, newest first.", schema(json::object()),
            mcp::Access::reads, [context](const json&, const Progress&, const Stop&) {
                auto root = dispatch::runs_root(context.cwd, context.env);
                if (!root) return error_result(root.error());
                std::string text;
                for (const auto& id : dispatch::list_runs(*root)) {
                    auto receipt = dispatch::run_status(*root + "/" + id);
                    text +=
                        (receipt ? status_line(*receipt) : "warning: " + receipt.error().message) +
                        "\n";
                }
                return ToolResult{text.empty() ? "no runs under " + *root + "\n" : text};
            }};
}

// --- plan, harnesses -----------------------------------------------------------------------------

mcp::Tool plan_tool(const Context& context) {
    return {"plan", "What sonata would run for a dispatch from this session, or why it refuses.",
            schema({{"harness", harness_prop()}, {"role", role_prop()}}, {"harness"}),
            mcp::Access::reads, [context](const json& args, const Progress&, const Stop&) {
                auto config = context.config();
                if (!config) return error_result(config.error());
                auto planned = adapters::plan_dispatch(base_request(args, context), *config);
                if (!planned) return error_result(planned.error());
                return ToolResult{decision_to_text(planned->decision) + parent_line(*planned) +
                                      "\n",
                                  !planned->decision.runs()};
            }};
}

mcp::Tool harnesses_tool(const Context& context) {
    return {"harnesses", "Every harness sonata knows: installed or not, and its version.",
            schema(json::object()), mcp::Access::reads,
            [context](const json&, const Progress&, const Stop&) {
                auto config = context.config();
                if (!config) return error_result(config.error());
                auto runner = make_system_runner();
                std::string text;
                for (const auto& adapter : adapters::all_adapters()) {
                    const auto s = adapters::detect_harness(*adapter, std::string(adapter->id()),
                                                            *config, context.env, *runner);
                    text += s.id + "  " +
                            (s.installed ? "installed " + s.version : "not installed") +
                            (s.note.empty() ? "" : "  (" + s.note + ")") + "\n";
                }
                return ToolResult{text};
            }};
}

} // namespace

mcp::ServerInfo sonata_server_info() {
    return {"sonata",
            SONATA_VERSION,
            "sonata hands tasks to other coding agents, never more permissive than this session. "
            "Use dispatch to run one and get its report; a paused run waits for approve; a run "
            "still going continues with wait.",
            // Claude Code: offered up front, not behind its tool search; a report of up to
            // k_inline_report_chars comes back inline.
            {{"anthropic/alwaysLoad", true},
             {"anthropic/maxResultSizeChars", k_inline_report_chars + 20000}}};
}

std::vector<mcp::Tool> sonata_tools(const Context& context) {
    return {dispatch_tool(context), wait_tool(context),     approve_tool(context),
            status_tool(context),   cancel_tool(context),   runs_tool(context),
            plan_tool(context),     harnesses_tool(context)};
}

} // namespace sonata::cli
