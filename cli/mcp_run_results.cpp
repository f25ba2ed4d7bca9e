// What the model reads about a run (see mcp_run_results.hpp).
#include "cli/mcp_run_results.hpp"

#include "cli/run_output.hpp"

namespace sonata::cli {
namespace {

using mcp::json;

/// What the model does next with a run in this state.
std::string_view next_step(dispatch::RunState state) {
    if (state == dispatch::RunState::paused) return "approve";
    return dispatch::is_final(state) ? "none" : "wait";
}

} // namespace

json run_facts(const dispatch::Receipt& r) {
    json data = {{"run_id", r.id},
                 {"state", to_string(r.state)},
                 {"harness", r.harness},
                 {"version", r.version},
                 {"mode", r.mode},
                 {"role", r.role},
                 {"parent_mode", r.parent_mode},
                 {"next", next_step(r.state)}};
    if (dispatch::is_final(r.state))
        data["report_source"] = r.report_source == dispatch::ReportOrigin::pending
                                    ? std::string_view("none")
                                    : to_string(r.report_source);
    if (r.cost.usd) data["cost_usd"] = *r.cost.usd;
    if (r.state == dispatch::RunState::paused) data["approval"] = r.prompt;
    return data;
}

namespace {

json run_data(const dispatch::Receipt& r, const std::string& text) {
    json data = run_facts(r);
    data["text"] = text;
    return data;
}

} // namespace

mcp::ToolResult told(const dispatch::Receipt& receipt, std::string text) {
    json data = run_data(receipt, text);
    return {std::move(text), false, std::move(data)};
}

std::string parent_line(std::string_view mode, const std::string& source,
                        const std::string& session_id) {
    if (source == "session-file") {
        return "parent mode: " + std::string(mode) + " (session " + session_id +
               ", recorded by the hook)";
    }
    if (source == "default" && session_id.empty()) {
        return "parent mode: default (assumed: sonata could not tell this session's mode; `sonata "
               "init` installs the hook that records it)";
    }
    return "parent mode: " + std::string(mode) + " (" + source + ")";
}

std::string run_header(const dispatch::Receipt& r) {
    std::string header = "run " + r.id + ": " + r.harness + "@" + r.version + " in " + r.mode +
                         " mode\n" +
                         parent_line(r.parent_mode, r.parent_mode_source, r.session_id) + "\n";
    for (const auto& attempt : r.attempts)
        header += "passed over " + attempt.harness + ": " + attempt.why + "\n";
    for (const auto& warning : r.warnings)
        header += "warning: " + warning + "\n";
    return header + "\n";
}

mcp::ToolResult tell(const std::string& run_dir, const dispatch::Receipt& r,
                     const std::string& header) {
    std::string text = header + run_text(run_dir, r, k_inline_report_chars);
    const bool failed = r.state == dispatch::RunState::failed ||
                        r.state == dispatch::RunState::timed_out ||
                        r.state == dispatch::RunState::lost;
    if (failed) {
        text += "\nRun " + r.id + " ended " + std::string(to_string(r.state)) +
                (r.degraded_reason.empty() ? "" : ": " + r.degraded_reason) + "\n";
    } else if (r.state == dispatch::RunState::paused) {
        text += "\nThe harness asks:\n" + r.prompt + "\nAnswer with the approve tool: {\"id\": \"" +
                r.id + "\", \"answer\": \"yes\"} (or \"no\").\n";
    } else if (!dispatch::is_final(r.state)) {
        text += "\nRun " + r.id + " goes on; continue with the wait tool: {\"id\": \"" + r.id +
                "\"}.\n";
    } else if (r.degraded) {
        text += "\nThe run is degraded: " + r.degraded_reason + "\n";
    }
    return {text, failed, run_data(r, text)};
}

mcp::ToolResult untold(std::string text, std::string_view state) {
    json data = {{"state", state}, {"next", "none"}, {"text", text}};
    return {std::move(text), true, std::move(data)};
}

json run_output_schema() {
    const auto text = [](const char* description) {
        return json{{"type", "string"}, {"description", description}};
    };
    return {{"type", "object"},
            {"properties",
             {{"run_id", text("The run's id: wait, approve, status and cancel take it")},
              {"state", text("The run's state (starting, queued, running, paused, stalled, done, "
                             "failed, timed-out, cancelled, lost), or refused, or error")},
              {"harness", text("The harness that ran")},
              {"version", text("Its version")},
              {"mode", text("The mode it ran in")},
              {"role", text("The role")},
              {"parent_mode", text("This session's mode, as sonata found it")},
              {"next", {{"type", "string"}, {"enum", {"wait", "approve", "none"}}}},
              {"report_source", text("Where the report came from")},
              {"cost_usd", {{"type", "number"}, {"description", "What the run cost, when known"}}},
              {"approval", text("A paused run: the approval card's text")},
              {"text", text("Everything above for a reader, with the report")}}},
            {"required", {"state", "next", "text"}}};
}

} // namespace sonata::cli
