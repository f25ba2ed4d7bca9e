// `sonata mcp` (see mcp_server.hpp). Messages are parsed with nlohmann/json after a nesting-depth
// check; every request gets an answer, a notification never does. Tool arguments are checked
// against the tool's own input schema (types, required, no other fields) before anything runs: a
// bad call is a JSON-RPC error (-32602), a refusal or a failed run is a tool result with isError.
#include "cli/mcp_server.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "adapters/support/pipeline.hpp"
#include "cli/operations.hpp"
#include "cli/run_output.hpp"
#include "core/config.hpp"
#include "core/decision_json.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/session.hpp"
#include "core/text.hpp"
#include "dispatch/run.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::cli {

using nlohmann::json;

namespace {

constexpr const char* k_latest_protocol = "2025-11-25";
constexpr std::array k_protocols = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
constexpr std::size_t k_max_task_bytes = 1U << 20U;
/// A session file the PreToolUse hook wrote this recently is the session calling (the hook runs
/// for the MCP tool call itself, just before it reaches this server).
constexpr std::chrono::seconds k_fresh_session{120};
constexpr std::chrono::seconds k_progress_every{5};
constexpr std::chrono::seconds k_approve_window{15};
/// The longest report returned inline; the rest is left to `sonata log ID` and the report file.
constexpr std::size_t k_inline_report_chars = 100000;

enum RpcError : int {
    parse_error = -32700,
    invalid_request = -32600,
    method_not_found = -32601,
    invalid_params = -32602,
    not_initialized = -32002,
};

std::string dump(const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json error_message(const json& id, int code, const std::string& message) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json result_message(const json& id, json result) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

/// What a tool call produced: text for the model, and whether it is an error (a refusal, a run
/// that failed, a library error).
struct ToolOutcome {
    std::string text;
    bool is_error = false;
};

ToolOutcome error_outcome(const Error& error) { return {"sonata: error: " + error.message, true}; }

using Progress = std::function<void(const std::string&)>;
using Args = json;

struct Tool {
    const char* name;
    const char* description;
    json schema;
    bool read_only = false;
    ToolOutcome (*run)(const Args&, const Context&, const Progress&, const std::atomic<bool>&);
};

// --- Argument checks -----------------------------------------------------------------------------

/// Checks `args` against one of our own input schemas: an object whose properties have the
/// declared type ("string", "integer", "number", "object" of strings), with the enum when one is
/// given, every required one present and no other. Empty: the arguments are fine.
std::string check_arguments(const json& args, const json& schema) {
    if (!args.is_object()) return "arguments must be an object";
    const auto& properties = schema["properties"];
    for (const auto& [key, value] : args.items()) {
        const auto it = properties.find(key);
        if (it == properties.end()) return "unknown argument '" + key + "'";
        const std::string type = (*it)["type"].get<std::string>();
        bool ok = false;
        if (type == "string") ok = value.is_string();
        if (type == "integer") ok = value.is_number_integer();
        if (type == "number") ok = value.is_number();
        if (type == "object") {
            ok = value.is_object() && std::all_of(value.begin(), value.end(),
                                                  [](const json& v) { return v.is_string(); });
        }
        if (!ok)
            return "argument '" + key + "' must be " +
                   (type == "object" ? "an object of strings" : "a " + type);
        if (const auto e = it->find("enum");
            e != it->end() && std::find(e->begin(), e->end(), value) == e->end()) {
            return "argument '" + key + "' must be one of " + e->dump();
        }
        if (type == "integer") {
            const auto n = value.get<long long>();
            if (n < (*it).value("minimum", 0LL) || n > (*it).value("maximum", 1LL << 40))
                return "argument '" + key + "' is out of range";
        }
    }
    for (const auto& key : schema.value("required", json::array())) {
        if (!args.contains(key.get<std::string>()))
            return "missing argument '" + key.get<std::string>() + "'";
    }
    return {};
}

std::string text_arg(const Args& args, const char* key) {
    const auto it = args.find(key);
    return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// --- The parent's session ------------------------------------------------------------------------

/// The session whose mode file the hook wrote last, within k_fresh_session, for a client that did
/// not say which session it is ($CLAUDE_CODE_SESSION_ID unset). When several sessions of this
/// project are that fresh, the one recording the narrowest mode: a guess may only narrow. `cwd` is
/// the session's own directory, where the hook writes, never one a tool call names.
std::optional<std::string> fresh_session(const std::string& cwd, const Environment& env) {
    const auto where = locate_config(cwd, env);
    std::vector<std::string> dirs;
    if (!where.project_dir.empty()) dirs.push_back(where.project_dir + "/.sonata");
    if (!where.machine_dir.empty()) dirs.push_back(where.machine_dir);
    const auto now = std::chrono::system_clock::now();
    std::optional<SessionRecord> best;
    for (const auto& dir : dirs) {
        std::error_code ec;
        for (auto it = std::filesystem::directory_iterator(dir, ec);
             !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.rfind("session-", 0) != 0 || !name.ends_with(".json")) continue;
            auto text = read_file_bounded(it->path().string(), 4096);
            if (!text) continue;
            auto record = parse_session_record(*text, it->path().string());
            if (!record) continue;
            const auto age = std::chrono::duration_cast<std::chrono::seconds>(
                now - std::chrono::system_clock::from_time_t(record->updated_at));
            if (age > k_fresh_session || age < -k_fresh_session) continue;
            if (!best || no_wider_than(record->mode, best->mode)) best = *record;
        }
        if (best) break; // the project's files first, as find_session looks
    }
    if (!best) return std::nullopt;
    return best->session_id;
}

/// The request every tool that plans builds: the parent's session as the hook recorded it, in the
/// directory the server was started for (the session's own). A `cwd` argument moves the
/// workspace only: a nested directory with a sonata.toml of its own is a project whose session
/// files anything that writes in the workspace may have planted.
adapters::DispatchRequest base_request(const Args& args, const Context& context) {
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
        if (auto id = fresh_session(context.cwd, context.env)) request.session = *id;
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

/// The last non-empty line of the run's output, for a progress message.
std::string last_line(const std::string& run_dir) {
    // Only the end of the log is read: this runs every few seconds while the log grows.
    constexpr off_t k_tail = 4096;
    const int fd = ::open((run_dir + "/harness.log").c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return {};
    struct stat st {};
    std::string text;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        const off_t from = st.st_size > k_tail ? st.st_size - k_tail : 0;
        text.resize(static_cast<std::size_t>(st.st_size - from));
        const ssize_t n = ::pread(fd, text.data(), text.size(), from);
        text.resize(n > 0 ? static_cast<std::size_t>(n) : 0U);
    }
    ::close(fd);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
        text.pop_back();
    const auto start = text.find_last_of('\n');
    std::string line = start == std::string::npos ? text : text.substr(start + 1);
    if (line.size() > 200) line = line.substr(line.size() - 200);
    return line;
}

/// A run that still works towards its end: starting, queued or running.
bool going(dispatch::RunState state) {
    return state == dispatch::RunState::running || state == dispatch::RunState::starting ||
           state == dispatch::RunState::queued;
}

/// Waits up to `window` for the run to leave `running`/`starting`, sending a progress line every
/// few seconds; then the text the model gets back.
ToolOutcome wait_and_tell(const std::string& run_dir, std::chrono::seconds window,
                          const Progress& progress, const std::atomic<bool>& stop,
                          const std::string& header) {
    const auto deadline = std::chrono::steady_clock::now() + window;
    Result<dispatch::Receipt> receipt = dispatch::run_status(run_dir);
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::seconds>(
            deadline - std::chrono::steady_clock::now());
        receipt = dispatch::wait_run(run_dir, std::clamp(left, std::chrono::seconds(0),
                                                         std::chrono::seconds(k_progress_every)));
        if (!receipt) return error_outcome(receipt.error());
        if (!going(receipt->state) || left.count() <= 0 || stop) break;
        const auto line = last_line(run_dir);
        progress(std::string(to_string(receipt->state)) + (line.empty() ? "" : ": " + line));
    }
    const auto& r = *receipt;
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

std::chrono::seconds window_of(const Args& args, const Context& context) {
    if (const auto it = args.find("window_seconds"); it != args.end())
        return std::chrono::seconds(it->get<long long>());
    auto config = context.config();
    return config ? config->dispatch_window : std::chrono::seconds(1500);
}

// --- The tools -----------------------------------------------------------------------------------

ToolOutcome tool_dispatch(const Args& args, const Context& context, const Progress& progress,
                          const std::atomic<bool>& stop) {
    const bool has_task = args.contains("task");
    if (has_task == args.contains("task_file"))
        return {"give the task once: task or task_file", true};
    const bool resuming = args.contains("resume");
    if (!resuming && !args.contains("harness") && !args.contains("role"))
        return {"give a harness or a role (or resume, a finished run's id)", true};
    if (resuming && args.contains("role"))
        return {"resume continues the run's own role: drop role", true};
    auto config = context.config();
    if (!config) return error_outcome(config.error());
    auto request = base_request(args, context);
    if (auto bad = checked_dir(request.cwd, context.cwd); !bad.empty()) return {bad, true};
    if (resuming) {
        Context here = context;
        here.cwd = request.cwd;
        if (auto ok = resume_run(request, text_arg(args, "resume"), here); !ok)
            return error_outcome(ok.error());
    }
    std::string task = text_arg(args, "task");
    if (!has_task) {
        const auto path = std::filesystem::path(request.cwd) / text_arg(args, "task_file");
        auto text = read_file_bounded(path.string(), k_max_task_bytes);
        if (!text) return {"task_file: " + text.error().message, true};
        task = *text;
    }
    if (task.find_first_not_of(" \t\r\n") == std::string::npos) return {"the task is empty", true};
    const auto window = window_of(args, context);
    // A ranked role moves on past a run that ends failed with no report: wait for each run as
    // the wait tool does (with progress), and stop waiting where the tool would return.
    const Settle settle = [&](const std::string& dir) -> std::optional<dispatch::Receipt> {
        const auto deadline = std::chrono::steady_clock::now() + window;
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::seconds>(
                deadline - std::chrono::steady_clock::now());
            auto r = dispatch::wait_run(dir, std::clamp(left, std::chrono::seconds(0),
                                                        std::chrono::seconds(k_progress_every)));
            if (!r) return std::nullopt;
            if (dispatch::is_final(r->state)) return *r;
            if (!going(r->state) || left.count() <= 0 || stop) return std::nullopt;
            progress(r->harness + " " + std::string(to_string(r->state)));
        }
    };
    auto started = start_dispatch(request, task, *config, std::nullopt, settle);
    if (!started) return error_outcome(started.error());
    const auto& decision = started->planned.decision;
    std::string tried;
    for (const auto& a : started->passed_over)
        tried += "passed over " + a.harness + ": " + a.why + "\n";
    if (!decision.runs())
        return {decision_to_text(decision) + tried + parent_line(started->planned) + "\n", true};
    std::string header = "run " + started->id + ": " + decision.harness + "@" + decision.version +
                         " in " + std::string(to_string(decision.effective_mode)) + " mode\n" +
                         parent_line(started->planned) + "\n" + tried;
    for (const auto& warning : decision.warnings)
        header += "warning: " + warning + "\n";
    progress("started run " + started->id);
    return wait_and_tell(started->run_dir, window, progress, stop, header + "\n");
}

ToolOutcome tool_wait(const Args& args, const Context& context, const Progress& progress,
                      const std::atomic<bool>& stop) {
    auto dir = run_dir_of(text_arg(args, "id"), context);
    if (!dir) return error_outcome(dir.error());
    return wait_and_tell(*dir, window_of(args, context), progress, stop, "");
}

ToolOutcome tool_approve(const Args& args, const Context& context, const Progress& progress,
                         const std::atomic<bool>& stop) {
    auto dir = run_dir_of(text_arg(args, "id"), context);
    if (!dir) return error_outcome(dir.error());
    auto receipt = dispatch::approve_run(*dir, text_arg(args, "answer") == "yes", k_approve_window);
    if (!receipt) return error_outcome(receipt.error());
    return wait_and_tell(*dir, window_of(args, context), progress, stop,
                         "answered " + text_arg(args, "answer") + "\n");
}

ToolOutcome tool_status(const Args& args, const Context& context, const Progress&,
                        const std::atomic<bool>&) {
    // No id: the newest run. An id that is there is checked, the empty one included.
    auto dir =
        args.contains("id") ? run_dir_of(text_arg(args, "id"), context) : newest_run_dir(context);
    if (!dir) return error_outcome(dir.error());
    auto receipt = dispatch::run_status(*dir);
    if (!receipt) return error_outcome(receipt.error());
    return {status_line(*receipt) + "\n"};
}

ToolOutcome tool_cancel(const Args& args, const Context& context, const Progress&,
                        const std::atomic<bool>&) {
    auto dir = run_dir_of(text_arg(args, "id"), context);
    if (!dir) return error_outcome(dir.error());
    auto receipt = dispatch::cancel_run(*dir);
    if (!receipt) return error_outcome(receipt.error());
    return {status_line(*receipt) + "\n"};
}

ToolOutcome tool_runs(const Args&, const Context& context, const Progress&,
                      const std::atomic<bool>&) {
    auto root = dispatch::runs_root(context.cwd, context.env);
    if (!root) return error_outcome(root.error());
    std::string text;
    for (const auto& id : dispatch::list_runs(*root)) {
        auto receipt = dispatch::run_status(*root + "/" + id);
        text += (receipt ? status_line(*receipt) : "warning: " + receipt.error().message) + "\n";
    }
    return {text.empty() ? "no runs under " + *root + "\n" : text};
}

ToolOutcome tool_plan(const Args& args, const Context& context, const Progress&,
                      const std::atomic<bool>&) {
    auto config = context.config();
    if (!config) return error_outcome(config.error());
    auto planned = adapters::plan_dispatch(base_request(args, context), *config);
    if (!planned) return error_outcome(planned.error());
    return {decision_to_text(planned->decision) + parent_line(*planned) + "\n",
            !planned->decision.runs()};
}

ToolOutcome tool_harnesses(const Args&, const Context& context, const Progress&,
                           const std::atomic<bool>&) {
    auto config = context.config();
    if (!config) return error_outcome(config.error());
    auto runner = make_system_runner();
    std::string text;
    for (const auto& adapter : adapters::all_adapters()) {
        const auto s = adapters::detect_harness(*adapter, std::string(adapter->id()), *config,
                                                context.env, *runner);
        text += s.id + "  " + (s.installed ? "installed " + s.version : "not installed") +
                (s.note.empty() ? "" : "  (" + s.note + ")") + "\n";
    }
    return {text};
}

json string_prop(const char* description) {
    return {{"type", "string"}, {"description", description}};
}

json schema(json properties, json required = json::array()) {
    return {{"type", "object"},
            {"properties", std::move(properties)},
            {"required", std::move(required)},
            {"additionalProperties", false}};
}

const std::vector<Tool>& tools() {
    static const std::vector<Tool> all = [] {
        const json id = string_prop("The run's id, as dispatch returned it");
        const json window = {{"type", "integer"},
                             {"minimum", 0},
                             {"maximum", 86400},
                             {"description", "Seconds to wait before returning while the run "
                                             "goes on (default: [dispatch] window_seconds)"}};
        const json role = string_prop("read-only, write, review, explore, plan, code, or a role "
                                      "from sonata.toml");
        const json harness = string_prop("Harness id (sonata harnesses lists them); default: the "
                                         "role's harness");
        std::vector<Tool> t;
        t.push_back(
            {"dispatch",
             "Hand a task to another coding agent (a harness) and wait for its report. sonata "
             "runs it no more permissive than this session's mode, or refuses and names the "
             "alternatives. Returns when the run is done, paused at an approval (answer with "
             "approve), stalled, or when window_seconds pass (continue with wait).",
             schema({{"harness", harness},
                     {"role", role},
                     {"task", string_prop("The task, as text")},
                     {"task_file", string_prop("A file holding the task (relative to cwd)")},
                     {"model", string_prop("The model to ask the harness for")},
                     {"max_budget_usd",
                      {{"type", "number"},
                       {"description", "A spending limit in dollars: enforced by the harness "
                                       "where it can (claude), else the run goes ahead with a "
                                       "warning (or is refused under budget = \"strict\")"}}},
                     {"options",
                      {{"type", "object"},
                       {"additionalProperties", {{"type", "string"}}},
                       {"description", "Per-task options (key: value); they may only narrow"}}},
                     {"cwd", string_prop("The workspace (default: this session's directory)")},
                     {"resume", string_prop("A finished run's id: continue its harness session "
                                            "(its harness and role), never wider than that run")},
                     {"window_seconds", window}}),
             false, tool_dispatch});
        t.push_back({"wait", "Wait for a run to finish, pause or stall; returns its report.",
                     schema({{"id", id}, {"window_seconds", window}}, {"id"}), true, tool_wait});
        t.push_back({"approve",
                     "Answer the approval a paused run waits on, then wait for it as wait does.",
                     schema({{"id", id},
                             {"answer",
                              {{"type", "string"},
                               {"enum", {"yes", "no"}},
                               {"description", "yes allows the action once; no declines it"}}},
                             {"window_seconds", window}},
                            {"id", "answer"}),
                     false, tool_approve});
        t.push_back({"status", "One run's state (the newest run without an id).",
                     schema({{"id", id}}), true, tool_status});
        t.push_back({"cancel", "Stop a run; what it did stays.", schema({{"id", id}}, {"id"}),
                     false, tool_cancel});
        t.push_back({"runs", "Every run of this project, newest first.", schema(json::object()),
                     true, tool_runs});
        t.push_back({"plan",
                     "What sonata would run for a dispatch from this session, or why it refuses.",
                     schema({{"harness", harness}, {"role", role}}, {"harness"}), true, tool_plan});
        t.push_back({"harnesses", "Every harness sonata knows: installed or not, and its version.",
                     schema(json::object()), true, tool_harnesses});
        return t;
    }();
    return all;
}

json tool_list() {
    json list = json::array();
    for (const auto& tool : tools()) {
        list.push_back(json({{"name", tool.name},
                             {"description", tool.description},
                             {"inputSchema", tool.schema},
                             {"annotations", {{"readOnlyHint", tool.read_only}}},
                             // Claude Code: offered up front, not behind its tool search; a report
                             // of up to k_inline_report_chars comes back inline.
                             {"_meta",
                              {{"anthropic/alwaysLoad", true},
                               {"anthropic/maxResultSizeChars", k_inline_report_chars + 20000}}}}));
    }
    return {{"tools", list}};
}

} // namespace

struct McpServer::State {
    Context context;
    Send send;
    std::mutex send_mutex;
    std::atomic<bool> initialized{false};
    std::atomic<bool> closing{false};
    std::mutex workers_mutex;
    struct Worker {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    std::vector<Worker> workers;
    std::map<std::string, std::shared_ptr<std::atomic<bool>>> in_flight; ///< By request id.

    void emit(const json& message) {
        const std::string text = dump(message);
        std::lock_guard lock(send_mutex);
        send(text);
    }

    void call_tool(const json& id, const json& params);
    void handle(const json& message);
};

void McpServer::State::call_tool(const json& id, const json& params) {
    const std::string name = params.value("name", json()).is_string()
                                 ? params["name"].get<std::string>()
                                 : std::string();
    const auto tool =
        std::find_if(tools().begin(), tools().end(), [&](const Tool& t) { return name == t.name; });
    if (tool == tools().end()) {
        emit(error_message(id, invalid_params, "unknown tool '" + name + "'"));
        return;
    }
    const json args = params.contains("arguments") ? params["arguments"] : json::object();
    if (auto bad = check_arguments(args, tool->schema); !bad.empty()) {
        emit(error_message(id, invalid_params, std::string(tool->name) + ": " + bad));
        return;
    }
    json token;
    if (const auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
        if (const auto t = meta->find("progressToken");
            t != meta->end() && (t->is_string() || t->is_number_integer())) {
            token = *t;
        }
    }
    auto stop = std::make_shared<std::atomic<bool>>(false);
    const std::string key = id.dump();
    std::lock_guard lock(workers_mutex);
    if (closing) return;
    // Joins the calls that have answered, so a long session does not keep their threads.
    for (auto it = workers.begin(); it != workers.end();) {
        if (*it->done) {
            it->thread.join();
            it = workers.erase(it);
        } else {
            ++it;
        }
    }
    in_flight[key] = stop;
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread thread([this, id, args, token, stop, done, key, run = tool->run] {
        int step = 0;
        const Progress progress = [&](const std::string& message) {
            if (token.is_null()) return;
            emit({{"jsonrpc", "2.0"},
                  {"method", "notifications/progress"},
                  {"params",
                   {{"progressToken", token}, {"progress", ++step}, {"message", message}}}});
        };
        ToolOutcome outcome;
        try {
            outcome = run(args, context, progress, *stop);
        } catch (const std::exception& e) {
            outcome = {std::string("sonata: error: ") + e.what(), true};
        }
        {
            std::lock_guard guard(workers_mutex);
            in_flight.erase(key);
        }
        // A cancelled request gets no answer; neither does one the closing client left.
        if (!*stop)
            emit(result_message(id, {{"content", {{{"type", "text"}, {"text", outcome.text}}}},
                                     {"isError", outcome.is_error}}));
        *done = true;
    });
    workers.push_back({std::move(thread), done});
}

void McpServer::State::handle(const json& message) {
    if (!message.is_object()) {
        emit(error_message(nullptr, invalid_request,
                           message.is_array() ? "batches are not supported"
                                              : "a message must be a JSON object"));
        return;
    }
    const auto id_field = message.find("id");
    const bool is_request = id_field != message.end();
    const json id = is_request ? *id_field : json();
    if (is_request && !id.is_string() && !id.is_number_integer()) {
        emit(error_message(nullptr, invalid_request, "id must be a string or an integer"));
        return;
    }
    const auto method_field = message.find("method");
    if (method_field == message.end() || !method_field->is_string()) {
        // A response to nothing we asked, or garbage: answer requests only.
        if (is_request && !message.contains("result") && !message.contains("error"))
            emit(error_message(id, invalid_request, "method must be a string"));
        return;
    }
    const std::string method = *method_field;
    const json params = message.contains("params") && message["params"].is_object()
                            ? message["params"]
                            : json::object();
    if (!is_request) {
        if (method == "notifications/cancelled") {
            const std::string key =
                params.contains("requestId") ? params["requestId"].dump() : std::string();
            std::lock_guard lock(workers_mutex);
            if (const auto it = in_flight.find(key); it != in_flight.end()) *it->second = true;
        }
        return; // notifications/initialized and the rest need no answer
    }
    if (method == "initialize") {
        const std::string asked = params.value("protocolVersion", json()).is_string()
                                      ? params["protocolVersion"].get<std::string>()
                                      : std::string();
        const bool known =
            std::find(k_protocols.begin(), k_protocols.end(), asked) != k_protocols.end();
        initialized = true;
        emit(result_message(
            id, {{"protocolVersion", known ? asked : std::string(k_latest_protocol)},
                 {"capabilities", {{"tools", {{"listChanged", false}}}}},
                 {"serverInfo", {{"name", "sonata"}, {"version", SONATA_VERSION}}},
                 {"instructions",
                  "sonata hands tasks to other coding agents, never more permissive than this "
                  "session. Use dispatch to run one and get its report; a paused run waits for "
                  "approve; a run still going continues with wait."}}));
        return;
    }
    if (method == "ping") {
        emit(result_message(id, json::object()));
        return;
    }
    const bool ours = method == "tools/list" || method == "tools/call";
    if (!ours) {
        emit(error_message(id, method_not_found, "method not found: " + method));
        return;
    }
    if (!initialized) {
        emit(error_message(id, not_initialized, "initialize first"));
        return;
    }
    if (method == "tools/list") {
        emit(result_message(id, tool_list()));
        return;
    }
    call_tool(id, params);
}

McpServer::McpServer(Context context, Send send) : m_state(std::make_unique<State>()) {
    m_state->context = std::move(context);
    m_state->send = std::move(send);
}

McpServer::~McpServer() { close(); }

void McpServer::handle(std::string_view line) {
    if (line.size() > k_max_mcp_message) {
        m_state->emit(error_message(nullptr, invalid_request, "message larger than 4 MiB"));
        return;
    }
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    auto parsed = parse_json(line);
    if (!parsed && parsed.error().fault == JsonFault::too_deep) {
        m_state->emit(error_message(nullptr, invalid_request, "message nested too deep"));
        return;
    }
    if (!parsed) {
        m_state->emit(error_message(nullptr, parse_error, "parse error"));
        return;
    }
    m_state->handle(*parsed);
}

void McpServer::drain() {
    std::vector<State::Worker> workers;
    {
        std::lock_guard lock(m_state->workers_mutex);
        workers.swap(m_state->workers);
    }
    for (auto& worker : workers)
        if (worker.thread.joinable()) worker.thread.join();
}

void McpServer::close() {
    std::vector<State::Worker> workers;
    {
        std::lock_guard lock(m_state->workers_mutex);
        m_state->closing = true;
        for (auto& [key, stop] : m_state->in_flight)
            *stop = true;
        workers.swap(m_state->workers);
    }
    for (auto& worker : workers)
        if (worker.thread.joinable()) worker.thread.join();
}

int serve_mcp(const Context& context) {
    McpServer server(context, [](const std::string& message) {
        std::cout << message << '\n' << std::flush;
    });
    std::string line;
    bool oversized = false;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; ++i) {
            if (buffer[i] != '\n') {
                if (line.size() <= k_max_mcp_message)
                    line.push_back(buffer[i]);
                else
                    oversized = true;
                continue;
            }
            if (oversized) line.assign(k_max_mcp_message + 1, 'x');
            server.handle(line);
            line.clear();
            oversized = false;
        }
    }
    if (!line.empty()) server.handle(line);
    server.close();
    return 0;
}

} // namespace sonata::cli
