// A dispatch request from start to a running run (see dispatcher.hpp).
#include "dispatch/caller/dispatcher.hpp"

#include "adapters/registry.hpp"
#include "core/fs.hpp"
#include "dispatch/caller/run.hpp"
#include "dispatch/caller/worktree_dispatch.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::dispatch {
namespace {

/// The receipt's fields that the decision, the parent's mode and the gate fill.
Receipt receipt_of(const adapters::Planned& planned) {
    const Decision& d = planned.decision;
    Receipt r = receipt_for(d);
    r.parent_mode_source = planned.parent.source;
    r.session_id = planned.parent.session_id;
    const std::string role_key = matrix_role(d.effective_mode, d.role.kind);
    for (const auto& check : planned.gate) {
        r.relied_on.push_back(
            {check.probe, check.verdict ? std::string(to_string(*check.verdict)) : "unmeasured",
             d.harness + "@" + d.version + " " + check.probe + " " + r.mode + " " + role_key});
    }
    return r;
}

} // namespace

Result<std::string> run_dir_of(const std::string& id, const std::string& cwd,
                               const Environment& env) {
    auto roots = runs_roots(cwd, env);
    SONATA_TRY(roots);
    auto first = run_dir(roots->front(), id);
    for (std::size_t i = 1; !first && first.error().code == ExitCode::bad_data && i < roots->size();
         ++i) {
        if (auto found = run_dir((*roots)[i], id)) return found;
    }
    return first;
}

Result<std::string> newest_run_dir(const std::string& cwd, const Environment& env) {
    auto dirs = all_run_dirs(cwd, env);
    SONATA_TRY(dirs);
    if (dirs->empty()) return fail(ExitCode::bad_data, "no runs under " + *runs_root(cwd, env));
    return dirs->front();
}

Result<void> resume_run(adapters::DispatchRequest& request, const std::string& run_id) {
    auto dir = run_dir_of(run_id, request.cwd, request.env);
    SONATA_TRY(dir);
    auto old = run_status(*dir);
    SONATA_TRY(old);
    if (!is_final(old->state)) {
        return fail(ExitCode::usage, "run " + old->id + " is still " +
                                         std::string(to_string(old->state)) +
                                         ": wait for it (or cancel it) before resuming it");
    }
    if (!request.harness.empty() && request.harness != old->harness) {
        return fail(ExitCode::usage, "run " + old->id + " ran " + old->harness + ": --harness " +
                                         request.harness + " cannot continue its session");
    }
    if (old->harness_session.empty()) {
        return fail(ExitCode::usage,
                    "run " + old->id + " recorded no " + old->harness +
                        " session id (sonata could not read one from the run), so it cannot be "
                        "resumed: dispatch a new run");
    }
    auto mode = parse_mode(old->mode);
    SONATA_TRY(mode);
    request.harness = old->harness;
    request.role = old->role;
    request.resume = old->harness_session;
    request.ceiling = *mode;
    request.ceiling_source = "resuming run " + old->id + " (" + old->mode + ")";
    request.resumed_run = old->id;
    return {};
}

namespace {

/// The limits a run of `harness` gets: the configured timeouts and log cap, and its concurrency
/// slots (config's `max_concurrent`, else the adapter's default) in the machine's state.
Result<RunLimits> run_limits(const std::string& harness, const Config& config,
                             const Environment& env, std::optional<std::chrono::seconds> timeout) {
    RunLimits limits{timeout.value_or(config.dispatch_timeout), config.dispatch_stall,
                     config.dispatch_log_cap};
    auto adapter = adapters::find_adapter(harness);
    SONATA_TRY(adapter);
    const auto* configured = config.harness(harness);
    limits.max_concurrent = configured && configured->max_concurrent
                                ? *configured->max_concurrent
                                : (*adapter)->default_max_concurrent();
    if (limits.max_concurrent > 0) {
        auto dir = machine_dir_checked(env);
        SONATA_TRY(dir);
        // Machine-wide, per harness id: opencode's runs share one database whatever the project.
        limits.slots_dir = *dir + "/slots/" + harness;
    }
    return limits;
}

/// The receipt and limits of a planned run, and its start.
Result<std::string> start_planned(const DispatchStarted& out,
                                  const adapters::DispatchRequest& request, const std::string& task,
                                  const Config& config, std::optional<std::chrono::seconds> timeout,
                                  const std::string& root, const ReservedWorktree* reserved) {
    auto self = this_executable();
    SONATA_TRY(self);
    auto receipt = receipt_of(out.planned);
    receipt.resumed_from = request.resumed_run;
    receipt.attempts = out.passed_over;
    receipt.max_budget_usd = request.budget;
    if (auto adapter = adapters::find_adapter(out.planned.decision.harness); adapter)
        receipt.budget_enforced = request.budget && (*adapter)->enforces_budget();
    if (reserved != nullptr) receipt.worktree = record_of(reserved->worktree);
    auto limits = run_limits(out.planned.decision.harness, config, request.env, timeout);
    SONATA_TRY(limits);
    StartRequest start{out.planned.decision, receipt, task,  request.cwd,
                       request.env,          root,    *self, *limits};
    if (reserved != nullptr) start.id = reserved->id;
    return start_run(start);
}

/// One harness: plan and, when it runs, start. A worktree run gets its worktree first, and loses
/// it again when it does not start.
Result<DispatchStarted> start_one(adapters::DispatchRequest request, const std::string& task,
                                  const Config& config, std::optional<std::chrono::seconds> timeout,
                                  const std::vector<Attempt>& passed_over) {
    std::optional<ReservedWorktree> reserved;
    if (request.workspace == adapters::Workspace::worktree) {
        auto made = reserve_worktree(request);
        SONATA_TRY(made);
        reserved = std::move(*made);
    }
    auto root =
        reserved ? Result<std::string>(reserved->runs_root) : runs_root(request.cwd, request.env);
    SONATA_TRY(root);
    const auto release = [&] {
        if (reserved) release_worktree(*reserved, request.env);
    };
    auto planned = adapters::plan_dispatch(request, config);
    if (!planned) release();
    SONATA_TRY(planned);
    DispatchStarted out{std::move(*planned), {}, {}, passed_over};
    if (!out.planned.decision.runs()) {
        release();
        return out;
    }
    // Refused before a run directory or a supervisor exists: a run could only fail.
    if (!out.planned.not_installed.empty()) {
        release();
        return fail(ExitCode::not_installed,
                    out.planned.decision.harness + " is not installed here (" +
                        out.planned.not_installed + "); `sonata harnesses` lists what is");
    }
    auto dir =
        start_planned(out, request, task, config, timeout, *root, reserved ? &*reserved : nullptr);
    if (!dir) release();
    SONATA_TRY(dir);
    out.run_dir = *dir;
    out.id = dir->substr(dir->rfind('/') + 1);
    return out;
}

} // namespace

bool falls_through(const Receipt& r) {
    // A run its harness stopped at its budget spent what the user allowed: the next harness would
    // spend more.
    const bool over_budget =
        r.budget_enforced && r.max_budget_usd && r.cost.usd && *r.cost.usd >= *r.max_budget_usd;
    return r.state == RunState::failed && r.report_source == ReportOrigin::none && !over_budget;
}

Result<DispatchStarted> start_dispatch(const adapters::DispatchRequest& asked,
                                       const std::string& task, const Config& config,
                                       std::optional<std::chrono::seconds> timeout,
                                       const Settle& settle) {
    adapters::DispatchRequest request = asked;
    if (auto role = config.find_role(request.role); role && role->worktree)
        request.workspace = adapters::Workspace::worktree;
    std::vector<std::string> ranked;
    if (request.harness.empty() && request.resume.empty()) {
        if (auto role = config.find_role(request.role); role && role->ranked.size() > 1)
            ranked = role->ranked;
    }
    if (ranked.empty()) return start_one(request, task, config, timeout, {});
    std::vector<Attempt> passed_over;
    Result<DispatchStarted> last = fail(ExitCode::config, "no harness to try");
    for (const auto& harness : ranked) {
        adapters::DispatchRequest one = request;
        one.harness = harness;
        last = start_one(one, task, config, timeout, passed_over);
        if (last && last->planned.decision.runs()) {
            if (!settle || harness == ranked.back()) return last;
            const auto end = settle(last->run_dir);
            if (!end || !falls_through(*end)) return last;
            passed_over.push_back(
                {harness,
                 "ran and failed with no report (" + end->degraded_reason +
                     (end->files_changed.empty()
                          ? ")"
                          : "; it changed " + std::to_string(end->files_changed.size()) +
                                " file(s), kept)"),
                 last->id});
            continue;
        }
        passed_over.push_back({harness, last ? "refused: " + last->planned.decision.refusal().reason
                                             : "could not start: " + last.error().message});
    }
    return last; // the last one's own refusal is the decision; the others are passed_over
}

} // namespace sonata::dispatch
