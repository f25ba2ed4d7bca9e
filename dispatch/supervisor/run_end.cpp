// The end of a supervised run on record: report rules, final state, notes and completion check.
#include "dispatch/supervisor/run_end.hpp"

#include <fmt/format.h>

#include "core/text.hpp"
#include "dispatch/launch.hpp"
#include "dispatch/run_processes.hpp"
#include "dispatch/worktree_record.hpp"

namespace sonata::dispatch {
namespace {

constexpr std::size_t k_max_report_bytes = 256U << 10U; ///< A report from the output keeps its end.

/// Where the report comes from: report.md when the harness wrote one, else the end of its output
/// (a read-only run cannot write report.md: its terminal output is its report; all of it, to the
/// cap, is in harness.log), written to report.md; none when there is neither.
ReportOrigin take_report(const Receipt& r, const HarnessEnd& end, const RunDirectory& dir) {
    auto written = dir.read("report.md", k_max_read_report_bytes);
    if (written && !trimmed(*written).empty()) return ReportOrigin::report_file;
    std::string final_text = trimmed(end.result.out);
    if (final_text.empty()) return ReportOrigin::none;
    if (final_text.size() > k_max_report_bytes) {
        final_text = "[sonata: the output's first " +
                     std::to_string(final_text.size() - k_max_report_bytes) +
                     " bytes are in harness.log (`sonata log " + r.id + "`)]\n" +
                     final_text.substr(final_text.size() - k_max_report_bytes);
    }
    (void)dir.write("report.md", final_text + "\n");
    if (end.tui) return ReportOrigin::pane_text;
    return r.role_kind == RoleKind::read_only ? ReportOrigin::terminal_output
                                              : ReportOrigin::final_message;
}

/// The final state, and why it is degraded, from how the harness ended.
void judge_end(Receipt& r, const HarnessEnd& end, bool cancelled, const std::string& abandoned) {
    const ProcessResult& result = end.result;
    const auto degrade = [&](RunState state, std::string why) {
        r.state = state;
        r.degraded = true;
        r.degraded_reason = std::move(why);
    };
    r.state = RunState::done;
    if (!abandoned.empty())
        degrade(RunState::failed, abandoned);
    else if (cancelled)
        degrade(RunState::cancelled, "cancelled");
    else if (result.timed_out)
        degrade(RunState::timed_out, "timed out; the harness's process group was killed");
    else if (end.ended_by_sonata) {
        if (r.report_source == ReportOrigin::none)
            degrade(RunState::failed, "the TUI showed no report");
    } else if (result.term_signal != 0)
        degrade(RunState::failed,
                "crashed: killed by signal " + std::to_string(result.term_signal));
    else if (result.exit_code != 0)
        degrade(RunState::failed, "exited " + std::to_string(result.exit_code));
    else if (r.report_source == ReportOrigin::none) {
        degrade(RunState::failed,
                "exited 0 without a report or any output: the model may never have been reached");
    }
}

/// A worktree run: the worktree's HEAD now, and its changes' stat at the end of the report (the
/// parent reads what it would apply before it applies it).
void record_worktree(Receipt& r, const RunDirectory& dir) {
    auto runner = make_system_runner();
    const Git git(*runner, current_environment());
    const RunWorktree worktree = worktree_of(*r.worktree);
    if (auto head = git.run_head(worktree)) r.worktree->head = *head;
    auto stat = git.diff(worktree, true);
    const std::string changes = "\n---\nchanges in worktree " + worktree.path + " (branch " +
                                worktree.branch + "; `sonata diff " + r.id + "`, `sonata apply " +
                                r.id + "`):\n" +
                                (!stat ? "(could not read them: " + stat.error().message + ")\n"
                                 : stat->empty() ? "(none)\n"
                                                 : *stat);
    auto report = dir.read("report.md", k_max_read_report_bytes);
    if (report) (void)dir.write("report.md", *report + changes);
}

/// Signs the report with the run it came from.
void add_provenance(const Receipt& r, const RunDirectory& dir) {
    const std::string exit = r.exit_code ? std::to_string(*r.exit_code) : "- (quit by sonata)";
    const std::string provenance = "\n---\nsonata run " + r.id + " · role " + r.role + " · " +
                                   r.harness + "@" + r.version + " · mode " + r.mode + " · exit " +
                                   exit + "\n";
    auto report = dir.read("report.md", k_max_read_report_bytes);
    if (report) (void)dir.write("report.md", *report + provenance);
}

/// The adapter's completion check of a run that ended `done`: its export of the recorded session,
/// run bounded in time with the harness's own environment.
Completion check_completion(const adapters::Adapter& adapter, const RunPlan& plan,
                            const std::string& task, const Receipt& r, ProcessRunner& runner) {
    const auto args = adapter.completion_export_args(r.harness_session, r.version);
    const auto failed = [](std::string why) {
        return Completion{CompletionCheck::failed, std::move(why)};
    };
    if (args.empty()) return {};
    if (r.harness_session.empty()) return failed("sonata found no session id to check");
    const Invocation& inv = plan.invocation;
    ProcessRequest request;
    request.argv = {inv.argv.front()};
    request.argv.insert(request.argv.end(), args.begin(), args.end());
    request.env = child_environment(marked(current_environment(), r), inv);
    request.cwd = plan.cwd;
    request.timeout = plan.limits.completion_timeout;
    request.max_output_bytes = 16U << 20U;
    auto exported = runner.run(request);
    if (!exported) return failed("the session export could not start: " + exported.error().message);
    if (exported->timed_out) return failed("the session export did not finish in time");
    if (exported->exit_code != 0)
        return failed("the session export exited " + std::to_string(exported->exit_code));
    std::string why = adapter.check_completion(exported->out, r.harness_session, task, r.version);
    return why.empty() ? Completion{CompletionCheck::verified} : failed(std::move(why));
}

/// The notes on the run's end: an unfingerprinted workspace, a write role that changed nothing,
/// processes killed outside the harness's group, a run stopped at its budget.
void add_notes(Receipt& r, const Fingerprint& after, int leftovers) {
    if (after.truncated) r.note = "the workspace has too many files to fingerprint them all";
    if (r.role_kind == RoleKind::write && r.files_changed.empty() && r.state == RunState::done)
        r.note = "a write role whose run changed nothing in the workspace";
    if (leftovers > 0) {
        r.note += std::string(r.note.empty() ? "" : "; ") + "killed " + std::to_string(leftovers) +
                  " process(es) the harness left running outside its process group";
    }
    if (r.state == RunState::failed && r.budget_enforced && r.max_budget_usd && r.cost.usd &&
        *r.cost.usd >= *r.max_budget_usd) {
        r.degraded_reason = fmt::format("stopped at its budget: it spent ${:.4f} ({}) of the "
                                        "${:.2f} allowed; {}",
                                        *r.cost.usd, to_string(r.cost.source), *r.max_budget_usd,
                                        r.degraded_reason);
    }
}

} // namespace

void conclude(Receipt& r, const HarnessEnd& end, bool cancelled, const std::string& abandoned,
              const RunDirectory& dir) {
    const ProcessResult& result = end.result;
    if (!end.ended_by_sonata || result.exit_code >= 0) r.exit_code = result.exit_code;
    r.term_signal = result.term_signal;
    r.timed_out = result.timed_out;
    r.report_source = take_report(r, end, dir);
    judge_end(r, end, cancelled, abandoned);
    if (r.worktree && r.report_source != ReportOrigin::none) record_worktree(r, dir);
    if (r.report_source != ReportOrigin::none) add_provenance(r, dir);
}

void record_end(Receipt& r, const Ran& ran, const SharedReceipt& shared, const Fingerprint& after,
                int leftovers) {
    r.ended_at = utc_now();
    if (!ran.result) {
        r.state = RunState::failed;
        r.degraded = true;
        r.degraded_reason = ran.result.error().message;
        r.report_source = ReportOrigin::none;
        return;
    }
    conclude(r, *ran.result, shared.cancel.load(), shared.abandoned, shared.dir);
    if (r.started_at.empty()) r.exit_code.reset(); // cancelled while queued: nothing ran
    if (!r.started_at.empty()) r.files_changed = changes(ran.before, after);
    add_notes(r, after, leftovers);
}

void record_completion(SharedReceipt& shared, const adapters::Adapter* adapter, const RunPlan& plan,
                       const std::string& task, ProcessRunner& runner) {
    if (adapter == nullptr || shared.receipt.state != RunState::done) return;
    const Completion verdict = check_completion(*adapter, plan, task, shared.receipt, runner);
    shared.update([&](Receipt& r) {
        r.completion = verdict;
        if (verdict.check == CompletionCheck::failed) {
            r.state = RunState::failed;
            r.degraded = true;
            r.degraded_reason = r.harness +
                                " exited 0 but its own record of the session says the run did "
                                "not complete: " +
                                verdict.why;
        }
    });
}

} // namespace sonata::dispatch
