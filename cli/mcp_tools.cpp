// `sonata mcp`'s tools (see mcp_tools.hpp) but dispatch (mcp_dispatch_tool.cpp). A refusal or a
// failed run is a tool result marked as an error; the arguments reach a body already checked
// against its schema; each tool declares the structured content it returns beside its text.
#include "cli/mcp_tools.hpp"

#include <memory>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "cli/mcp_client_record.hpp"
#include "cli/mcp_dispatch_tool.hpp"
#include "cli/mcp_run_results.hpp"
#include "cli/mcp_run_tasks.hpp"
#include "cli/mcp_tool_support.hpp"
#include "cli/mcp_worktree_tools.hpp"
#include "cli/run_output.hpp"
#include "core/decision_json.hpp"
#include "dispatch/caller/dispatcher.hpp"
#include "dispatch/caller/run.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::cli {
namespace {

using mcp::json;
using mcp::Progress;
using mcp::Stop;
using mcp::ToolResult;

/// An output schema: the text for a reader, and `properties` besides.
json output_schema(json properties) {
    properties["text"] = {{"type", "string"}, {"description", "The same, for a reader"}};
    return {{"type", "object"}, {"properties", std::move(properties)}, {"required", {"text"}}};
}

/// A tool whose result is about one run.
mcp::Tool run_tool(mcp::Tool tool) {
    tool.output_schema = run_output_schema();
    return tool;
}

// --- wait, approve -------------------------------------------------------------------------------

mcp::Tool wait_tool(const Context& context) {
    return run_tool({"wait", "Wait for a run to finish, pause or stall; returns its report.",
                     schema({{"id", id_prop()}, {"window_seconds", window_prop()}}, {"id"}),
                     mcp::Access::reads,
                     [context](const json& args, const Progress& progress, const Stop& stop) {
                         auto dir = named_run(args, context);
                         if (!dir) return error_result(dir.error());
                         return wait_and_tell(*dir, window_of(args, context), progress, stop, "");
                     }});
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
    return run_tool(
        {"approve", "Answer the approval a paused run waits on, then wait for it as wait does.",
         schema({{"id", id_prop()}, {"answer", answer}, {"window_seconds", window_prop()}},
                {"id", "answer"}),
         mcp::Access::acts,
         [context](const json& args, const Progress& progress, const Stop& stop) {
             return run_approve(args, context, progress, stop);
         }});
}

// --- status, cancel, runs ------------------------------------------------------------------------

mcp::Tool status_tool(const Context& context) {
    return run_tool(
        {"status", "One run's state (the newest run without an id).", schema({{"id", id_prop()}}),
         mcp::Access::reads, [context](const json& args, const Progress&, const Stop&) {
             // No id: the newest run. An id that is there is checked, the empty one included.
             auto dir = args.contains("id") ? named_run(args, context)
                                            : dispatch::newest_run_dir(context.cwd, context.env);
             if (!dir) return error_result(dir.error());
             auto receipt = dispatch::run_status(*dir);
             if (!receipt) return error_result(receipt.error());
             return told(*receipt, status_line(*receipt) + "\n");
         }});
}

mcp::Tool cancel_tool(const Context& context) {
    return run_tool({"cancel", "Stop a run; what it did stays.",
                     schema({{"id", id_prop()}}, {"id"}), mcp::Access::acts,
                     [context](const json& args, const Progress&, const Stop&) {
                         auto dir = named_run(args, context);
                         if (!dir) return error_result(dir.error());
                         auto receipt = dispatch::cancel_run(*dir);
                         if (!receipt) return error_result(receipt.error());
                         return told(*receipt, status_line(*receipt) + "\n");
                     }});
}

ToolResult list_runs(const Context& context) {
    auto root = dispatch::runs_root(context.cwd, context.env);
    if (!root) return error_result(root.error());
    auto dirs = dispatch::all_run_dirs(context.cwd, context.env);
    if (!dirs) return error_result(dirs.error());
    std::string text;
    json runs = json::array();
    for (const auto& dir : *dirs) {
        auto receipt = dispatch::run_status(dir);
        if (receipt) runs.push_back(run_facts(*receipt));
        text += (receipt ? status_line(*receipt) : "warning: " + receipt.error().message) + "\n";
    }
    if (text.empty()) text = "no runs under " + *root + "\n";
    return {text, false, {{"runs", runs}, {"text", text}}};
}

mcp::Tool runs_tool(const Context& context) {
    mcp::Tool tool{"runs", "Every run of this project, newest first.", schema(json::object()),
                   mcp::Access::reads, [context](const json&, const Progress&, const Stop&) {
                       return list_runs(context);
                   }};
    tool.output_schema =
        output_schema({{"runs", {{"type", "array"}, {"items", run_output_schema()}}}});
    tool.output_schema["properties"]["runs"]["items"]["required"] = {"run_id", "state"};
    return tool;
}

// --- plan, harnesses -----------------------------------------------------------------------------

ToolResult plan(const json& args, const Context& context) {
    auto config = context.config();
    if (!config) return error_result(config.error());
    auto planned = adapters::plan_dispatch(base_request(args, context), *config);
    if (!planned) return error_result(planned.error());
    const auto& decision = planned->decision;
    const auto& parent = planned->parent;
    std::string text = decision_to_text(decision) +
                       parent_line(to_string(parent.mode), parent.source, parent.session_id) + "\n";
    json data = {{"runs", decision.runs()},
                 {"harness", decision.harness},
                 {"version", decision.version},
                 {"parent_mode", to_string(parent.mode)},
                 {"text", text}};
    if (decision.runs()) data["mode"] = to_string(decision.effective_mode);
    return {std::move(text), !decision.runs(), std::move(data)};
}

mcp::Tool plan_tool(const Context& context) {
    const auto text = [](const char* description) {
        return json{{"type", "string"}, {"description", description}};
    };
    mcp::Tool tool{
        "plan", "What sonata would run for a dispatch from this session, or why it refuses.",
        schema({{"harness", harness_prop()}, {"role", role_prop()}}, {"harness"}),
        mcp::Access::reads,
        [context](const json& args, const Progress&, const Stop&) { return plan(args, context); }};
    tool.output_schema = output_schema(
        {{"runs", {{"type", "boolean"}, {"description", "Whether sonata would run it"}}},
         {"harness", text("The harness")},
         {"version", text("Its version")},
         {"mode", text("The mode it would run in")},
         {"parent_mode", text("This session's mode, as sonata found it")}});
    return tool;
}

mcp::Tool harnesses_tool(const Context& context) {
    const json harness = {{"type", "object"},
                          {"properties",
                           {{"id", {{"type", "string"}}},
                            {"installed", {{"type", "boolean"}}},
                            {"version", {{"type", "string"}}},
                            {"note", {{"type", "string"}}}}},
                          {"required", {"id", "installed"}}};
    mcp::Tool tool{"harnesses", "Every harness sonata knows: installed or not, and its version.",
                   schema(json::object()), mcp::Access::reads,
                   [context](const json&, const Progress&, const Stop&) {
                       auto config = context.config();
                       if (!config) return error_result(config.error());
                       auto runner = make_system_runner();
                       std::string text;
                       json found = json::array();
                       for (const auto& adapter : adapters::all_adapters()) {
                           const auto s = adapters::detect_harness(
                               *adapter, std::string(adapter->id()), *config, context.env, *runner);
                           text += s.id + "  " +
                                   (s.installed ? "installed " + s.version : "not installed") +
                                   (s.note.empty() ? "" : "  (" + s.note + ")") + "\n";
                           found.push_back({{"id", s.id},
                                            {"installed", s.installed},
                                            {"version", s.version},
                                            {"note", s.note}});
                       }
                       return ToolResult{text, false, {{"harnesses", found}, {"text", text}}};
                   }};
    tool.output_schema = output_schema({{"harnesses", {{"type", "array"}, {"items", harness}}}});
    return tool;
}

} // namespace

mcp::ServerInfo sonata_server_info(const Context& context) {
    return {"sonata",
            SONATA_VERSION,
            "sonata hands tasks to other coding agents, never more permissive than this session. "
            "Use dispatch to run one and get its report (as a task when the client takes tasks); "
            "a paused run waits for approve; a run still going continues with wait. Every answer "
            "names the run's id.",
            // Claude Code: offered up front, not behind its tool search; a report of up to
            // k_inline_report_chars comes back inline.
            {{"anthropic/alwaysLoad", true},
             {"anthropic/maxResultSizeChars", k_inline_report_chars + 20000}},
            std::make_shared<RunTasks>(context),
            client_recorder(context)};
}

std::vector<mcp::Tool> sonata_tools(const Context& context) {
    std::vector<mcp::Tool> tools = {
        dispatch_tool(context), wait_tool(context), approve_tool(context), status_tool(context),
        cancel_tool(context),   runs_tool(context), plan_tool(context),    harnesses_tool(context)};
    for (auto& tool : worktree_tools(context))
        tools.push_back(std::move(tool));
    return tools;
}

} // namespace sonata::cli
