// Reading and writing plan.json.
#include "dispatch/run_plan.hpp"

#include <nlohmann/json.hpp>

#include "core/json_parse.hpp"

namespace sonata::dispatch {
namespace {

using json = nlohmann::json;

constexpr long k_max_seconds = 10L * 365 * 24 * 3600;

/// A field of the wrong shape, named.
struct BadPlanField {
    std::string field;
};

const json& field(const json& j, const char* name) {
    const auto it = j.find(name);
    if (it == j.end()) throw BadPlanField{name};
    return *it;
}

std::string text_of(const json& j, const char* name) {
    const json& v = field(j, name);
    if (!v.is_string()) throw BadPlanField{name};
    return v.get<std::string>();
}

bool flag_of(const json& j, const char* name) {
    const json& v = field(j, name);
    if (!v.is_boolean()) throw BadPlanField{name};
    return v.get<bool>();
}

long number_of(const json& j, const char* name, long low, long high) {
    const json& v = field(j, name);
    if (!v.is_number_integer() || v.get<long long>() < low || v.get<long long>() > high)
        throw BadPlanField{name};
    return static_cast<long>(v.get<long long>());
}

std::vector<std::string> texts_of(const json& j, const char* name) {
    const json& v = field(j, name);
    if (!v.is_array()) throw BadPlanField{name};
    std::vector<std::string> out;
    for (const auto& item : v) {
        if (!item.is_string()) throw BadPlanField{name};
        out.push_back(item.get<std::string>());
    }
    return out;
}

std::map<std::string, std::string> variables_of(const json& j, const char* name) {
    const json& v = field(j, name);
    if (!v.is_object()) throw BadPlanField{name};
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : v.items()) {
        if (!value.is_string()) throw BadPlanField{name};
        out[key] = value.get<std::string>();
    }
    return out;
}

ReportSource report_of(const json& j) {
    const auto source = value_of(k_report_sources, text_of(j, "report"));
    if (!source) throw BadPlanField{"report"};
    return *source;
}

RunPlan plan_of(const json& j) {
    RunPlan plan;
    plan.harness = text_of(j, "harness");
    Invocation& inv = plan.invocation;
    inv.argv = texts_of(j, "argv");
    if (inv.argv.empty() || inv.argv.front().empty()) throw BadPlanField{"argv"};
    inv.env = variables_of(j, "env");
    inv.env_unset = texts_of(j, "env_unset");
    if (j.contains("path_first")) {
        inv.path_first = text_of(j, "path_first");
        if (!inv.path_first.empty() && inv.path_first.front() != '/')
            throw BadPlanField{"path_first"};
    }
    inv.interactive = flag_of(j, "interactive");
    const bool stdin_prompt = flag_of(j, "prompt_stdin");
    inv.prompt = inv.interactive ? PromptChannel::tmux_keys
                 : stdin_prompt  ? PromptChannel::stdin_pipe
                                 : PromptChannel::argument;
    inv.report = report_of(j);
    plan.cwd = text_of(j, "cwd");
    if (plan.cwd.empty() || plan.cwd.front() != '/') throw BadPlanField{"cwd"};
    RunLimits& limits = plan.limits;
    limits.timeout = std::chrono::seconds(number_of(j, "timeout_s", 0, k_max_seconds));
    limits.stall = std::chrono::seconds(number_of(j, "stall_s", 0, k_max_seconds));
    limits.log_cap = static_cast<std::size_t>(number_of(j, "log_cap", 0, 1L << 40));
    limits.max_concurrent = static_cast<int>(number_of(j, "max_concurrent", 0, 1 << 16));
    limits.slots_dir = text_of(j, "slots_dir");
    limits.completion_timeout =
        std::chrono::seconds(number_of(j, "completion_timeout_s", 0, k_max_seconds));
    return plan;
}

} // namespace

std::string plan_to_json(const RunPlan& plan) {
    const Invocation& inv = plan.invocation;
    json j = {{"harness", plan.harness},
              {"argv", inv.argv},
              {"env", inv.env},
              {"env_unset", inv.env_unset},
              {"cwd", plan.cwd},
              {"prompt_stdin", inv.prompt == PromptChannel::stdin_pipe},
              {"interactive", inv.interactive},
              {"report", to_string(inv.report)},
              {"timeout_s", plan.limits.timeout.count()},
              {"stall_s", plan.limits.stall.count()},
              {"log_cap", plan.limits.log_cap},
              {"max_concurrent", plan.limits.max_concurrent},
              {"slots_dir", plan.limits.slots_dir},
              {"completion_timeout_s", plan.limits.completion_timeout.count()}};
    if (!inv.path_first.empty()) j["path_first"] = inv.path_first;
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<RunPlan> parse_plan(std::string_view text, const std::string& source) {
    const auto parsed = parse_json(text);
    if (!parsed)
        return fail(ExitCode::bad_data,
                    source + ": not a run plan (" + parsed.error().message + ")");
    const json& j = *parsed;
    if (!j.is_object())
        return fail(ExitCode::bad_data, source + ": not a run plan (not a JSON object)");
    try {
        return plan_of(j);
    } catch (const BadPlanField& bad) {
        return fail(ExitCode::bad_data,
                    source + ": '" + bad.field + "' is missing or not what a run plan holds");
    }
}

} // namespace sonata::dispatch
