// The tasks extension of MCP 2026-07-28 on a connection: a tools/call answered with a task, and
// tasks/get, tasks/update, tasks/cancel and task notifications on a subscriptions/listen stream.
// Each request must declare the extension itself (else -32021); an unknown task is -32602. The
// store is asked every time, so any server process serves a task another one started.
#include <chrono>
#include <map>
#include <thread>

#include "cli/mcp_connection.hpp"

namespace sonata::mcp {
namespace {

using namespace wire;

/// How often a subscription looks at its tasks, and in what steps it watches for its end.
constexpr std::chrono::milliseconds k_watch_every{1000};
constexpr std::chrono::milliseconds k_watch_step{100};

/// The task ids a subscriptions/listen asks for; an error message when they are malformed.
std::string listen_ids(const json& filter, std::vector<std::string>& ids) {
    const auto asked = filter.find("taskIds");
    if (asked == filter.end()) return {};
    if (!asked->is_array()) return "notifications.taskIds must be an array of strings";
    for (const auto& id : *asked) {
        if (!id.is_string() || id.get<std::string>().empty())
            return "notifications.taskIds must be an array of strings";
        ids.push_back(id.get<std::string>());
    }
    return {};
}

} // namespace

json Connection::State::task_started(const json& id, const TaskStart& start,
                                     const json& capabilities) const {
    if (start.task_id.empty()) return result_message(id, stamped(call_result(start.answer), info));
    auto task = info.tasks->get(start.task_id, capabilities);
    if (!task) {
        return error_message(id, internal_error,
                             "task " + start.task_id +
                                 " started but cannot be read: " + task.error().message);
    }
    json result = task_json(*task, info);
    result["resultType"] = "task";
    result["_meta"] = start.meta;
    result["_meta"][k_meta_server] = {{"name", info.name}, {"version", info.version}};
    return result_message(id, result);
}

void Connection::State::task_request(const json& id, const std::string& method,
                                     const json& params) {
    if (!info.tasks)
        return emit(error_message(id, method_not_found, "method not found: " + method));
    const json capabilities = client_capabilities(params);
    if (!takes_tasks(capabilities)) return emit(missing_tasks_error(id));
    const std::string task_id = string_field(params, "taskId");
    if (task_id.empty())
        return emit(error_message(id, invalid_params, "taskId must be a non-empty string"));
    const auto responses = params.find("inputResponses");
    if (method == "tasks/update" && (responses == params.end() || !responses->is_object()))
        return emit(error_message(id, invalid_params, "inputResponses must be an object"));
    const json answers = method == "tasks/update" ? *responses : json();
    spawn(id, nullptr,
          [this, id, method, task_id, capabilities, answers](const Progress&, const Stop&) {
              auto& store = *info.tasks;
              if (method == "tasks/get") {
                  auto task = store.get(task_id, capabilities);
                  if (!task)
                      return error_message(id, invalid_params,
                                           "Failed to retrieve task: " + task.error().message);
                  return result_message(id, stamped(task_json(*task, info), info));
              }
              auto done =
                  method == "tasks/update" ? store.update(task_id, answers) : store.cancel(task_id);
              if (!done)
                  return error_message(id, invalid_params, method + ": " + done.error().message);
              return result_message(id, stamped(json::object(), info));
          });
}

void Connection::State::listen(const json& id, const json& params) {
    const auto filter = params.find("notifications");
    if (filter == params.end() || !filter->is_object())
        return emit(error_message(id, invalid_params, "notifications must be an object"));
    std::vector<std::string> asked;
    if (auto bad = listen_ids(*filter, asked); !bad.empty())
        return emit(error_message(id, invalid_params, bad));
    const json capabilities = client_capabilities(params);
    if (!asked.empty() && !takes_tasks(capabilities)) return emit(missing_tasks_error(id));
    if (!info.tasks) asked.clear();
    spawn(id, nullptr, [this, id, asked, capabilities](const Progress&, const Stop& stop) {
        std::vector<std::string> taken;
        for (const auto& task : asked)
            if (info.tasks->get(task, capabilities)) taken.push_back(task);
        json ack_params = {{"notifications", json::object()},
                           {"_meta", {{k_meta_subscription, id}}}};
        if (!asked.empty()) ack_params["notifications"]["taskIds"] = taken;
        emit({{"jsonrpc", "2.0"},
              {"method", "notifications/subscriptions/acknowledged"},
              {"params", ack_params}});
        // Nothing to watch: the stream ends at once, with its answer.
        if (taken.empty())
            return result_message(id, stamped({{"_meta", {{k_meta_subscription, id}}}}, info));
        std::map<std::string, json> last;
        while (!stop) {
            for (const auto& task : taken) {
                auto now = info.tasks->get(task, capabilities);
                if (!now) continue;
                json seen = task_json(*now, info);
                if (last[task] == seen) continue;
                last[task] = seen;
                seen["_meta"] = {{k_meta_subscription, id}};
                emit({{"jsonrpc", "2.0"}, {"method", "notifications/tasks"}, {"params", seen}});
            }
            for (auto waited = std::chrono::milliseconds(0); waited < k_watch_every && !stop;
                 waited += k_watch_step)
                std::this_thread::sleep_for(k_watch_step);
        }
        // Ended by the client's cancel or its going away: the stream ends without an answer.
        return json();
    });
}

} // namespace sonata::mcp
