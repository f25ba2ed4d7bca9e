// plan.json: the run plan as a flat record of the file's own fields, written and read through its
// one field table, then checked as a whole (a command to run, absolute paths, bounded limits).
#include "dispatch/run_plan.hpp"

#include "core/json_parse.hpp"
#include "core/json_record.hpp"

namespace sonata::dispatch {
namespace run_plan_file {

constexpr long k_max_seconds = 10L * 365 * 24 * 3600;

/// plan.json as it is on disk, field for field.
struct PlanFile {
    std::vector<std::string> argv;
    long completion_timeout_s = 0;
    std::string cwd;
    std::map<std::string, std::string> env;
    std::vector<std::string> env_unset;
    std::string harness;
    bool interactive = false;
    long long log_cap = 0;
    int max_concurrent = 0;
    std::string path_first; ///< Empty: the PATH as sonata found it.
    bool prompt_stdin = false;
    ReportSource report = ReportSource::stdout_text;
    std::string slots_dir;
    long stall_s = 0;
    long timeout_s = 0;
};

PlanFile file_of(const RunPlan& plan) {
    const Invocation& inv = plan.invocation;
    const RunLimits& limits = plan.limits;
    return {.argv = inv.argv,
            .completion_timeout_s = limits.completion_timeout.count(),
            .cwd = plan.cwd,
            .env = inv.env,
            .env_unset = inv.env_unset,
            .harness = plan.harness,
            .interactive = inv.interactive,
            .log_cap = static_cast<long long>(limits.log_cap),
            .max_concurrent = limits.max_concurrent,
            .path_first = inv.path_first,
            .prompt_stdin = inv.prompt == PromptChannel::stdin_pipe,
            .report = inv.report,
            .slots_dir = limits.slots_dir,
            .stall_s = limits.stall.count(),
            .timeout_s = limits.timeout.count()};
}

void check_within(long long value, long long low, long long high, const char* key) {
    if (value < low || value > high)
        throw record::BadField("'" + std::string(key) + "' is out of range");
}

void check_absolute(const std::string& path, const char* key) {
    if (!path.empty() && path.front() != '/')
        throw record::BadField("'" + std::string(key) + "' is not an absolute path");
}

/// The plan a file holds, once what its fields' types cannot say holds too.
RunPlan plan_of(const PlanFile& f) {
    if (f.argv.empty() || f.argv.front().empty()) throw record::BadField("'argv' names no command");
    if (f.cwd.empty()) throw record::BadField("'cwd' is empty");
    check_absolute(f.cwd, "cwd");
    check_absolute(f.path_first, "path_first");
    check_within(f.timeout_s, 0, k_max_seconds, "timeout_s");
    check_within(f.stall_s, 0, k_max_seconds, "stall_s");
    check_within(f.completion_timeout_s, 0, k_max_seconds, "completion_timeout_s");
    check_within(f.log_cap, 0, 1LL << 40, "log_cap");
    check_within(f.max_concurrent, 0, 1LL << 16, "max_concurrent");
    RunPlan plan;
    plan.harness = f.harness;
    plan.cwd = f.cwd;
    Invocation& inv = plan.invocation;
    inv.argv = f.argv;
    inv.env = f.env;
    inv.env_unset = f.env_unset;
    inv.path_first = f.path_first;
    inv.interactive = f.interactive;
    inv.prompt = f.interactive    ? PromptChannel::tmux_keys
                 : f.prompt_stdin ? PromptChannel::stdin_pipe
                                  : PromptChannel::argument;
    inv.report = f.report;
    plan.limits = {.timeout = std::chrono::seconds(f.timeout_s),
                   .stall = std::chrono::seconds(f.stall_s),
                   .log_cap = static_cast<std::size_t>(f.log_cap),
                   .max_concurrent = f.max_concurrent,
                   .slots_dir = f.slots_dir,
                   .completion_timeout = std::chrono::seconds(f.completion_timeout_s)};
    return plan;
}

} // namespace run_plan_file
} // namespace sonata::dispatch

namespace sonata::record {

template <> struct Codec<ReportSource> {
    static json write(const ReportSource& source) { return json(std::string(to_string(source))); }
    static ReportSource read(const json& j, const std::string& key) {
        const auto source = value_of(k_report_sources, Codec<std::string>::read(j, key));
        if (!source) throw BadField("'" + key + "' is not a report source");
        return *source;
    }
};

template <> struct Fields<dispatch::run_plan_file::PlanFile> {
    using F = dispatch::run_plan_file::PlanFile;
    static constexpr auto list = std::make_tuple(
        field("argv", &F::argv), field("completion_timeout_s", &F::completion_timeout_s),
        field("cwd", &F::cwd), field("env", &F::env), field("env_unset", &F::env_unset),
        field("harness", &F::harness), field("interactive", &F::interactive),
        field("log_cap", &F::log_cap), field("max_concurrent", &F::max_concurrent),
        field("path_first", &F::path_first, Presence::added),
        field("prompt_stdin", &F::prompt_stdin), field("report", &F::report),
        field("slots_dir", &F::slots_dir), field("stall_s", &F::stall_s),
        field("timeout_s", &F::timeout_s));
};

} // namespace sonata::record

namespace sonata::dispatch {

std::string plan_to_json(const RunPlan& plan) {
    return record::write_record(run_plan_file::file_of(plan))
               .dump(2, ' ', false, record::json::error_handler_t::replace) +
           "\n";
}

Result<RunPlan> parse_plan(std::string_view text, const std::string& source) {
    const auto parsed = parse_ordered_json(text);
    if (!parsed)
        return fail(ExitCode::bad_data,
                    source + ": not a run plan (" + parsed.error().message + ")");
    try {
        return run_plan_file::plan_of(
            record::read_record<run_plan_file::PlanFile>(*parsed, "plan"));
    } catch (const record::BadField& bad) {
        return fail(ExitCode::bad_data, source + ": not a run plan (" + bad.what() + ")");
    }
}

} // namespace sonata::dispatch
