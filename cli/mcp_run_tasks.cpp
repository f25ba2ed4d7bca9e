// sonata's runs as MCP tasks (see mcp_run_tasks.hpp).
#include "cli/mcp_run_tasks.hpp"

#include <chrono>
#include <ctime>

#include <sys/stat.h>

#include "cli/mcp_run_results.hpp"
#include "cli/mcp_tool_support.hpp"
#include "cli/run_output.hpp"
#include "dispatch/caller/dispatcher.hpp"
#include "dispatch/caller/run.hpp"

namespace sonata::cli {
namespace {

using mcp::json;
using mcp::TaskStatus;

constexpr long long k_poll_ms = 2000;

/// When `path` last changed, ISO 8601 UTC; now when it cannot be read.
std::string changed_at(const std::string& path) {
    struct stat st {};
    std::time_t when = ::stat(path.c_str(), &st) == 0 ? st.st_mtim.tv_sec : std::time(nullptr);
    std::tm utc{};
    ::gmtime_r(&when, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

/// Whether the client takes elicitation forms (an empty elicitation capability means forms).
bool takes_forms(const json& client) {
    const auto it = client.find("elicitation");
    if (it == client.end() || !it->is_object()) return false;
    return it->empty() || it->contains("form");
}

/// The key of the card a paused run shows: one per card over the run's life, never reused.
std::string card_key(const dispatch::Receipt& r) {
    return "approval-" + std::to_string(r.approvals.size() + 1);
}

json card_request(const dispatch::Receipt& r) {
    const json answer = {{"type", "string"},
                         {"title", "Allow it?"},
                         {"enum", {"yes", "no"}},
                         {"description", "yes allows the action once; no declines it"}};
    return {
        {"method", "elicitation/create"},
        {"params",
         {{"mode", "form"},
          {"message", "sonata run " + r.id + " (" + r.harness + ") asks:\n" + r.prompt},
          {"requestedSchema",
           {{"type", "object"}, {"properties", {{"answer", answer}}}, {"required", {"answer"}}}}}}};
}

/// The state a run is in as a task, and what goes with it.
void describe(mcp::TaskView& task, const std::string& dir, const dispatch::Receipt& r,
              const json& client) {
    using dispatch::RunState;
    if (r.state == RunState::paused && takes_forms(client)) {
        task.status = TaskStatus::input_required;
        task.message = "paused: the harness asks for approval";
        task.input_requests = {{card_key(r), card_request(r)}};
    } else if (r.state == RunState::paused) {
        task.message = "paused: " + r.prompt + "\nAnswer with the approve tool: {\"id\": \"" +
                       r.id + "\", \"answer\": \"yes\"} (or \"no\")";
    } else if (r.state == RunState::cancelled) {
        task.status = TaskStatus::cancelled;
        task.message = "cancelled";
    } else if (dispatch::is_final(r.state)) {
        task.status = TaskStatus::completed;
        task.result = tell(dir, r, run_header(r));
    } else {
        const auto line = last_output_line(dir);
        task.message = std::string(to_string(r.state)) + (line.empty() ? "" : ": " + line);
    }
}

} // namespace

Result<mcp::TaskView> RunTasks::get(const std::string& id, const json& client) {
    auto dir = dispatch::run_dir_of(id, m_context.cwd, m_context.env);
    SONATA_TRY(dir);
    auto receipt = dispatch::run_status(*dir);
    SONATA_TRY(receipt);
    mcp::TaskView task;
    task.id = id;
    task.created_at = changed_at(*dir + "/plan.json");
    task.updated_at = changed_at(*dir + "/receipt.json");
    task.poll_ms = k_poll_ms;
    describe(task, *dir, *receipt, client);
    return task;
}

Result<void> RunTasks::update(const std::string& id, const json& responses) {
    auto dir = dispatch::run_dir_of(id, m_context.cwd, m_context.env);
    SONATA_TRY(dir);
    auto receipt = dispatch::run_status(*dir);
    SONATA_TRY(receipt);
    if (receipt->state != dispatch::RunState::paused) return {}; // answered or ended meanwhile
    const auto answer = responses.find(card_key(*receipt));
    if (answer == responses.end() || !answer->is_object()) return {}; // not the card it shows
    const auto action = answer->find("action");
    const auto content = answer->find("content");
    const bool yes = action != answer->end() && *action == "accept" && content != answer->end() &&
                     content->is_object() && content->value("answer", json()) == "yes";
    auto approved = dispatch::approve_run(*dir, yes, k_approve_window);
    SONATA_TRY(approved);
    return {};
}

Result<void> RunTasks::cancel(const std::string& id) {
    auto dir = dispatch::run_dir_of(id, m_context.cwd, m_context.env);
    SONATA_TRY(dir);
    auto receipt = dispatch::cancel_run(*dir);
    SONATA_TRY(receipt);
    return {};
}

} // namespace sonata::cli
