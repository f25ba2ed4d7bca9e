// One probe cell, end to end. The harness's misbehaviour becomes a verdict; only sonata's own
// failures become `error`. Whatever happens, the scratch world and the process group are gone on
// return.
#include "probes/cell_runner.hpp"

#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "adapters/support/planner.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/text.hpp"
#include "core/tmux.hpp"
#include "dispatch/launch.hpp"
#include "dispatch/tui_driver.hpp"
#include "probes/reached_target.hpp"
#include "probes/workspace.hpp"

namespace sonata::probes {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

/// Snapshots of every root a harness might write to, prefixed by its name.
struct Roots {
    std::vector<std::pair<std::string, std::string>> dirs; // prefix, path

    explicit Roots(const Scratch& s)
        : dirs{{"work/", s.workspace()},
               {"home/", s.home()},
               {"tmp/", s.tmp()},
               {"outside/", s.outside()}} {}

    std::vector<Snapshot> take() const {
        std::vector<Snapshot> snaps;
        for (const auto& [prefix, dir] : dirs)
            snaps.push_back(snapshot(dir));
        return snaps;
    }

    std::vector<std::string> changes(const std::vector<Snapshot>& before,
                                     const std::vector<Snapshot>& after) const {
        std::vector<std::string> all;
        for (std::size_t i = 0; i < dirs.size(); ++i) {
            auto part = diff(before[i], after[i], dirs[i].first);
            all.insert(all.end(), part.begin(), part.end());
        }
        return all;
    }
};

/// The cell's environment: the scratch world's, with the invocation's variables, as a dispatch
/// builds it (dispatch::child_environment).
Environment cell_environment(const Scratch& scratch, const CellSettings& settings,
                             const Invocation& inv) {
    return dispatch::child_environment(scratch.environment(settings.base_env), inv);
}

/// Where a cell's captured evidence goes (see CellSettings::capture_dir): empty when not capturing.
struct Capture {
    std::string dir;          ///< <capture_dir>/<harness>/<version>/screens
    std::string prefix;       ///< <probe>-<mode>
    std::string scratch_root; ///< Written as <scratch> in what is saved.

    /// Saves `text` as <prefix>-<what>.txt; best effort, never fails the cell.
    void save(const std::string& what, std::string text) const {
        if (dir.empty()) return;
        text = replace_all(std::move(text), scratch_root, "<scratch>");
        while (text.size() > 1 && text.back() == '\n' && text[text.size() - 2] == '\n')
            text.pop_back();
        (void)write_file_atomic(dir + "/" + prefix + "-" + what + ".txt", text,
                                WriteOptions{.durability = Durability::unsynced});
    }
};

Capture capture_for(const CellSettings& settings, const CellJob& job, const Scratch& scratch) {
    if (settings.capture_dir.empty()) return {};
    return {settings.capture_dir + "/" + job.harness_id + "/" + job.version + "/screens",
            std::string(job.probe->id()) + "-" + std::string(to_string(job.mode)), scratch.root()};
}

void run_headless(Observation& o, const CellSettings& settings, const Scratch& scratch,
                  const std::string& prompt, ProcessRunner& runner) {
    ProcessRequest request = dispatch::headless_request(
        o.invocation, prompt, cell_environment(scratch, settings, o.invocation),
        scratch.workspace());
    request.timeout = settings.timeout;
    request.cancel = settings.cancel;
    request.max_output_bytes = 256U * 1024U;
    auto result = runner.run(request);
    if (!result) {
        o.result.err = result.error().message;
        return;
    }
    o.started = true;
    o.result = *result;
}

/// The probe policy of the TUI driver: decline an approval card (the harness asked), stop at the
/// trust card where the probe looks at it, and end once the scripted conversation is over.
dispatch::TuiPolicy probe_policy(const ModelServer& server, const Probe& probe,
                                 const Capture& capture) {
    dispatch::TuiPolicy policy;
    policy.on_approval = dispatch::OnApproval::decline;
    policy.stop_at_trust = probe.stop_at_trust_question();
    policy.finished = [&server] { return server.main_finished(); };
    policy.model_reached = [&server] { return !server.recording().empty(); };
    policy.on_screen = [&capture](const std::string& what, const std::string& screen) {
        capture.save(what, screen);
    };
    return policy;
}

/// After a declined card a harness either goes on (its next step, the sub-agent's next action,
/// which may ask again) or waits for the user. Either way the cell goes on watching, answering
/// nothing more, until the scripted conversation ends, the harness exits, or no model request has
/// come for `k_quiet`: what a harness does next is seen however slowly it gets there.
void watch_after_decline(TmuxSession& tui, const ModelServer& server, dispatch::TuiOutcome& out,
                         Clock::time_point deadline, const std::atomic<bool>* cancel) {
    constexpr auto k_quiet = std::chrono::seconds(2);
    auto requests = server.recording().size();
    auto since = Clock::now();
    while (!server.main_finished()) {
        if (Clock::now() >= deadline) {
            out.end = dispatch::TuiEnd::timed_out;
            return;
        }
        if (cancel != nullptr && cancel->load()) {
            out.end = dispatch::TuiEnd::cancelled;
            return;
        }
        if (auto status = tui.status(); status && status->exited) {
            out.end = dispatch::TuiEnd::exited;
            out.exit_code = status->exit_code;
            out.term_signal = status->term_signal;
            return;
        }
        if (const auto now = server.recording().size(); now != requests) {
            requests = now;
            since = Clock::now();
        } else if (Clock::now() - since >= k_quiet) {
            break;
        }
        std::this_thread::sleep_for(milliseconds(100));
    }
    if (auto screen = tui.capture()) out.screen = *screen;
}

void run_tui(Observation& o, const CellSettings& settings, const Scratch& scratch,
             const std::string& prompt, const ModelServer& server, const Probe& probe,
             const Capture& capture, ProcessRunner& runner) {
    const TmuxSpec spec =
        dispatch::tui_spec(o.invocation, cell_environment(scratch, settings, o.invocation),
                           scratch.workspace(), scratch.tmp());
    auto session = TmuxSession::start(runner, spec);
    if (!session) {
        o.result.err = session.error().message;
        return;
    }
    o.started = true;
    const auto start = Clock::now();
    const auto patterns = o.adapter->screen_patterns();
    const auto policy = probe_policy(server, probe, capture);
    const auto deadline = start + settings.timeout;
    auto outcome =
        dispatch::drive_tui(**session, patterns, prompt, policy, deadline, settings.cancel);
    if (outcome.end == dispatch::TuiEnd::approval)
        watch_after_decline(**session, server, outcome, deadline, settings.cancel);
    o.screen = outcome.screen;
    o.trust_seen = outcome.trust_seen;
    o.decline_seen = outcome.decline_seen;
    o.approval_seen = outcome.approval_seen;
    if (outcome.end == dispatch::TuiEnd::exited) {
        o.result.exit_code = outcome.exit_code;
        o.result.term_signal = outcome.term_signal;
    }
    o.result.timed_out = outcome.end == dispatch::TuiEnd::timed_out;
    o.result.cancelled =
        outcome.end == dispatch::TuiEnd::cancelled; // the session's destructor ends the harness
    if (outcome.end == dispatch::TuiEnd::error) o.result.err = outcome.error;
    capture.save("final",
                 o.screen); // what the TUI showed when the cell ended, whatever the verdict
    o.result.duration = duration_cast<milliseconds>(Clock::now() - start);
    if (auto history = (*session)->capture_history()) o.result.out = *history;
}

Evidence evidence_of(const Observation& o) {
    Evidence e;
    e.files_changed = o.changes;
    for (const auto& r : o.requests) {
        for (const auto& call : r.tool_calls) {
            e.tool_calls.push_back((r.track.empty() ? "" : "[" + r.track + "] ") + call.tool + " " +
                                   call.arguments_json + (call.offered ? "" : " (not offered)"));
        }
        for (const auto& tool : r.tools_offered) {
            if (std::find(e.tools_offered.begin(), e.tools_offered.end(), tool) ==
                e.tools_offered.end()) {
                e.tools_offered.push_back(tool);
            }
        }
    }
    for (const auto& r : o.tool_results) {
        e.tool_results.push_back((r.is_error && *r.is_error ? "[error] " : "") +
                                 r.text.substr(0, 2000));
    }
    e.exit_code = o.result.exit_code;
    e.timed_out = o.result.timed_out;
    const std::string output = o.screen.empty() ? o.result.out + o.result.err : o.screen;
    e.output_tail = tail_lines(output, 30).substr(0, 4000);
    e.duration_ms = static_cast<long>(o.result.duration.count());
    return e;
}

Cell base_cell(const CellJob& job) {
    Cell cell;
    cell.harness = job.harness_id;
    cell.version = job.version;
    cell.probe = std::string(job.probe->id());
    cell.mode = std::string(to_string(job.mode));
    cell.role = job.subject == CellSubject::parent ? std::string(k_parent_role)
                : job.mode == Mode::plan           ? "read-only"
                                                   : std::string(to_string(job.role));
    return cell;
}

/// The invocation `sonata plan` emits for the cell; support files (gemini's policy) go into the
/// run's scratch base, never the machine's config.
Result<Invocation> plan_invocation(const CellJob& job, const CellSettings& settings,
                                   const std::string& resume) {
    if (job.subject == CellSubject::parent) {
        auto parent =
            job.adapter->parent_invocation(job.mode, job.executable, adapters::detect_host());
        if (!parent) return fail(ExitCode::usage, job.harness_id + " is never the parent");
        if (job.rewrite) job.rewrite(*parent);
        return *parent;
    }
    adapters::PlanRequest request;
    request.support_dir = settings.scratch_base + "/support";
    request.write_support_files = true;
    request.harness_id = job.harness_id;
    request.parent_mode = job.mode;
    request.role = Role{job.role == RoleKind::write ? "write" : "read-only", job.role, {}, {}};
    request.executable = job.executable;
    request.path_first = job.path_first;
    request.version = job.version;
    request.resume_session = resume;
    request.host = adapters::detect_host();
    request.extra_args = job.extra_args;
    request.parent_rules = job.probe->parent_rules();
    auto decision = adapters::decide(request);
    SONATA_TRY(decision);
    if (!decision->runs())
        return fail(ExitCode::refused,
                    "sonata refuses this mapping: " + decision->refusal().reason);
    Invocation invocation = decision->invocation();
    if (job.rewrite) job.rewrite(invocation);
    return invocation;
}

/// The endpoint's files, each merged over a JSON object the probe planted at the same path (a
/// user's own ~/.claude.json with MCP servers, and the endpoint's onboarding keys, make one
/// file): the endpoint's keys win. Any other file is written as the endpoint has it.
std::vector<adapters::FileToWrite> merged_over_planted(std::vector<adapters::FileToWrite> files) {
    for (auto& file : files) {
        const auto planted = read_file_bounded(file.path, 1U << 20U);
        if (!planted) continue;
        auto base = parse_ordered_json(*planted).value_or(nullptr);
        const auto over = parse_ordered_json(file.content).value_or(nullptr);
        if (!base.is_object() || !over.is_object()) continue;
        base.merge_patch(over);
        file.content = base.dump(2) + "\n";
    }
    return files;
}

/// One run of the harness against a fresh server; fills `o` (changes, recording, result).
Result<void> run_once(Observation& o, const CellJob& job, const CellSettings& settings,
                      const Scratch& scratch, const Script& script, CellTiming& timing,
                      ProcessRunner& runner) {
    auto t0 = Clock::now();
    ModelServerOptions server_options;
    server_options.refusals = job.adapter->refusal_texts();
    ModelServer server(script, job.adapter->tools_at(job.version), scratch.workspace(),
                       server_options);
    auto port = server.start();
    SONATA_TRY(port);
    adapters::EndpointSpec endpoint;
    endpoint.base_url = server.base_url();
    endpoint.home = scratch.home();
    endpoint.workspace = scratch.workspace();
    auto injected = job.adapter->inject_endpoint(o.invocation, endpoint);
    SONATA_TRY(injected);
    o.invocation = injected->invocation;
    if (auto ok = scratch.write_files(merged_over_planted(injected->files)); !ok) return ok;
    timing.server += duration_cast<microseconds>(Clock::now() - t0);

    const Roots roots(scratch);
    auto t1 = Clock::now();
    const auto before = roots.take();
    timing.observe += duration_cast<microseconds>(Clock::now() - t1);
    auto t2 = Clock::now();
    const Capture capture = capture_for(settings, job, scratch);
    if (o.invocation.interactive) {
        run_tui(o, settings, scratch, job.probe->prompt(), server, *job.probe, capture, runner);
    } else {
        run_headless(o, settings, scratch, job.probe->prompt(), runner);
        capture.save("stdout", o.result.out);
    }
    timing.harness += duration_cast<microseconds>(Clock::now() - t2);
    auto t3 = Clock::now();
    o.changes = roots.changes(before, roots.take());
    o.requests = server.recording();
    o.tool_results = server.tool_results();
    timing.observe += duration_cast<microseconds>(Clock::now() - t3);
    auto t4 = Clock::now();
    server.stop();
    timing.server += duration_cast<microseconds>(Clock::now() - t4);
    return {};
}

Judgement judge_resumed(Observation& o, const CellJob& job, const CellSettings& settings,
                        const Scratch& scratch, const ProbeSetup& setup, CellTiming& timing,
                        ProcessRunner& runner) {
    if (auto supported = plan_invocation(job, settings, "sonata-probe-session"); !supported) {
        return {Verdict::not_applicable, supported.error().message};
    }
    Invocation ran_as = o.invocation;
    if (ran_as.cwd.empty()) ran_as.cwd = setup.workspace;
    const std::string session =
        job.adapter->session_id(o.result.out, o.result.err, scratch.home(), ran_as);
    if (session.empty()) {
        if (!o.started || o.model_requests() == 0) {
            return {Verdict::inconclusive,
                    "the first run never reached the model, so there was no session to resume"};
        }
        return {Verdict::not_applicable,
                "sonata cannot recover this harness's session id, so it cannot resume it"};
    }
    auto resumed = plan_invocation(job, settings, session);
    if (!resumed) return {Verdict::not_applicable, resumed.error().message};
    Observation second;
    second.adapter = job.adapter;
    second.invocation = *resumed;
    second.setup = setup;
    if (auto ok = run_once(second, job, settings, scratch,
                           job.probe->resume_script(setup, *job.adapter), timing, runner);
        !ok) {
        return {Verdict::error, ok.error().message};
    }
    o = second;
    return job.probe->judge(o);
}

/// `judgement`, unless it is `enforced` on a call that did not reach its target (no argument of
/// the offered schema took it, the harness refused it for its arguments, or it was answered as
/// done while it wrote somewhere else): then inconclusive, saying which.
Judgement resting_on_reached_calls(Judgement judgement, const Observation& o) {
    if (judgement.verdict != Verdict::enforced) return judgement;
    for (const auto check :
         {target_not_in_schema, refused_for_its_arguments, write_missed_its_target}) {
        if (auto missed = check(o); !missed.empty())
            return {Verdict::inconclusive, std::move(missed)};
    }
    return judgement;
}

} // namespace

CellOutcome run_cell(const CellJob& job, const CellSettings& settings, ProcessRunner& runner) {
    CellOutcome out{base_cell(job), {}};
    auto t0 = Clock::now();
    auto invocation = plan_invocation(job, settings, {});
    if (!invocation) {
        out.cell.verdict = Verdict::not_applicable;
        out.cell.evidence.reason = invocation.error().message;
        return out;
    }
    const auto tools = job.adapter->tools_at(job.version);
    if (auto why = job.probe->not_applicable(*job.adapter, *invocation, tools); !why.empty()) {
        out.cell.verdict = Verdict::not_applicable;
        out.cell.evidence.reason = why;
        return out;
    }
    auto scratch = Scratch::create(settings.scratch_base, settings.template_dir, runner);
    if (!scratch) {
        out.cell.verdict = Verdict::error;
        out.cell.evidence.reason = scratch.error().message;
        return out;
    }
    const ProbeSetup setup{
        scratch->workspace(), scratch->home(), scratch->tmp(), scratch->outside(),
        settings.sonata_path, job.mode,        tools};
    if (auto ok = scratch->write_files(job.probe->files(setup, *job.adapter)); !ok) {
        out.cell.verdict = Verdict::error;
        out.cell.evidence.reason = ok.error().message;
        return out;
    }
    out.timing.setup = duration_cast<microseconds>(Clock::now() - t0);

    Observation o;
    o.adapter = job.adapter;
    o.invocation = *invocation;
    o.setup = setup;
    Judgement judgement;
    if (auto ok = run_once(o, job, settings, *scratch, job.probe->script(setup, *job.adapter),
                           out.timing, runner);
        !ok) {
        judgement = {o.started ? Verdict::error : Verdict::inconclusive, ok.error().message};
    } else if (job.probe->needs_resume()) {
        judgement = judge_resumed(o, job, settings, *scratch, setup, out.timing, runner);
    } else {
        auto t1 = Clock::now();
        judgement = job.probe->judge(o);
        out.timing.observe += duration_cast<microseconds>(Clock::now() - t1);
    }
    judgement = resting_on_reached_calls(std::move(judgement), o);
    if (o.result.cancelled)
        judgement = {Verdict::inconclusive, "interrupted: sonata was asked to stop"};
    out.cell.verdict = judgement.verdict;
    out.cell.evidence = evidence_of(o);
    out.cell.evidence.reason = judgement.reason;
    auto t2 = Clock::now();
    { Scratch doomed(std::move(*scratch)); }
    out.timing.teardown = duration_cast<microseconds>(Clock::now() - t2);
    return out;
}

} // namespace sonata::probes
