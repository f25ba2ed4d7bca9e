// What `sonata mcp`'s tools share (see mcp_tool_support.hpp).
#include "cli/mcp_tool_support.hpp"

#include <algorithm>
#include <filesystem>

#include "cli/mcp_run_results.hpp"
#include "cli/run_output.hpp"
#include "core/session.hpp"
#include "dispatch/caller/dispatch_ask.hpp"
#include "dispatch/caller/dispatcher.hpp"
#include "dispatch/caller/run.hpp"

namespace sonata::cli {
namespace {

using mcp::json;

/// A session file the PreToolUse hook wrote this recently is the session calling (the hook runs
/// for the MCP tool call itself, just before it reaches this server).
constexpr Seconds k_fresh_session{120};
constexpr Seconds k_progress_every{5};

/// A run that still works towards its end: starting, queued or running.
bool going(dispatch::RunState state) {
    return state == dispatch::RunState::running || state == dispatch::RunState::starting ||
           state == dispatch::RunState::queued;
}

} // namespace

mcp::ToolResult error_result(const Error& error) {
    return {"sonata: error: " + error.message, true};
}

std::string text_arg(const json& args, const char* key) {
    const auto it = args.find(key);
    return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// --- Schemas -------------------------------------------------------------------------------------

json string_prop(const char* description) {
    return {{"type", "string"}, {"description", description}};
}

json schema(json properties, json required) {
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
                            "[dispatch] window_seconds, at most 100)"}};
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
    request.cwd = dispatch::workspace_path(text_arg(args, "cwd"), context.cwd);
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

Result<dispatch::Receipt>
watch(const std::string& run_dir, Seconds window, const mcp::Progress& progress,
      const mcp::Stop& stop, const std::function<std::string(const dispatch::Receipt&)>& describe) {
    const auto deadline = std::chrono::steady_clock::now() + window;
    for (;;) {
        const auto left =
            std::chrono::duration_cast<Seconds>(deadline - std::chrono::steady_clock::now());
        auto receipt = dispatch::wait_run(run_dir, std::clamp(left, Seconds(0), k_progress_every));
        if (!receipt || !going(receipt->state) || left.count() <= 0 || stop) return receipt;
        progress(describe(*receipt));
    }
}

mcp::ToolResult wait_and_tell(const std::string& run_dir, Seconds window,
                              const mcp::Progress& progress, const mcp::Stop& stop,
                              const std::string& prefix) {
    auto receipt = watch(run_dir, window, progress, stop, [&](const dispatch::Receipt& r) {
        const auto line = last_output_line(run_dir);
        return std::string(to_string(r.state)) + (line.empty() ? "" : ": " + line);
    });
    if (!receipt) {
        const auto id = std::filesystem::path(run_dir).filename().string();
        return error_result({receipt.error().code, "run " + id + ": " + receipt.error().message});
    }
    return tell(run_dir, *receipt, prefix + run_header(*receipt));
}

Result<std::string> named_run(const json& args, const Context& context) {
    return dispatch::run_dir_of(text_arg(args, "id"), context.cwd, context.env);
}

Seconds window_of(const json& args, const Context& context) {
    if (const auto it = args.find("window_seconds"); it != args.end())
        return Seconds(it->get<long long>());
    auto config = context.config();
    return config ? std::min(config->dispatch_window, k_mcp_window) : k_mcp_window;
}

} // namespace sonata::cli
