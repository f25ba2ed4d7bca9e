// The probe registry and the judgement helpers the catalogue shares.
#include "probes/probe.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "adapters/support/tool_census.hpp"
#include "core/text.hpp"

namespace sonata::probes {

std::vector<std::unique_ptr<Probe>> make_all(); // generated from probes/catalogue/

const std::vector<std::unique_ptr<Probe>>& all_probes() {
    static const auto probes = [] {
        auto all = make_all();
        const auto rank = [](const std::unique_ptr<Probe>& p) {
            const auto it = std::find(probe_id::all.begin(), probe_id::all.end(), p->id());
            return std::distance(probe_id::all.begin(), it);
        };
        std::sort(all.begin(), all.end(),
                  [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
        return all;
    }();
    return probes;
}

Result<const Probe*> find_probe(std::string_view id) {
    std::vector<std::string> ids;
    for (const auto& probe : all_probes()) {
        if (probe->id() == id) return probe.get();
        ids.emplace_back(probe->id());
    }
    return fail(ExitCode::usage, "unknown probe '" + std::string(id) + "'" + did_you_mean(id, ids) +
                                     "; known probes: " + join(ids, ", "));
}

namespace {

/// The path a change line ("<kind> <path>") names; empty for a line without one.
std::string_view path_of(std::string_view line) {
    const auto space = line.find(' ');
    return space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
}

} // namespace

bool Observation::changed(const std::string& path) const {
    return std::any_of(changes.begin(), changes.end(),
                       [&](const std::string& line) { return path_of(line) == path; });
}

std::string Observation::changed_beside(std::string_view prefix) const {
    for (const auto& line : changes) {
        const auto path = path_of(line);
        if (path.starts_with(prefix) && path != prefix) return std::string(path);
    }
    return {};
}

bool Observation::reached_step(int step, const std::string& track) const {
    return std::any_of(requests.begin(), requests.end(), [&](const RequestRecord& r) {
        return r.track == track && r.step == step && !r.tool_calls.empty();
    });
}

std::size_t Observation::model_requests() const {
    return static_cast<std::size_t>(
        std::count_if(requests.begin(), requests.end(),
                      [](const RequestRecord& r) { return !r.protocol.empty(); }));
}

std::optional<Judgement> not_reached(const Observation& o, int step, const std::string& track) {
    if (o.reached_step(step, track)) return std::nullopt;
    if (!o.started) {
        const std::string why = o.result.err.empty() ? "" : ": " + tail_lines(o.result.err, 3);
        return Judgement{Verdict::refused_to_start, "the harness could not be started" + why};
    }
    if (o.model_requests() == 0) {
        if (o.result.timed_out)
            return Judgement{Verdict::inconclusive,
                             "the harness never called the model before the timeout"};
        if (o.result.exit_code != 0) {
            return Judgement{Verdict::refused_to_start, "the harness exited " +
                                                            std::to_string(o.result.exit_code) +
                                                            " without calling the model"};
        }
        return Judgement{Verdict::inconclusive, "the harness never called the model"};
    }
    return Judgement{Verdict::inconclusive,
                     "the harness called the model but never reached scripted step " +
                         std::to_string(step) + (track.empty() ? "" : " of sub-agent " + track) +
                         (o.result.timed_out ? " (timed out)" : "")};
}

std::string tool_result_text(const Observation& o) {
    std::string all;
    for (const auto& r : o.tool_results)
        all += r.text + "\n";
    return all;
}

const ToolResultRecord* answer_to(const Observation& o, const std::string& track,
                                  const ToolCallRecord& call, std::size_t nth) {
    std::size_t anonymous = 0; // Results without a call id answer the track's calls in order.
    for (const auto& result : o.tool_results) {
        if (result.track != track) continue;
        if (!result.call_id.empty() ? result.call_id == call.call_id : anonymous++ == nth)
            return &result;
    }
    return nullptr;
}

std::string refused_for_its_arguments(const Observation& o) {
    struct Attempt {
        const RequestRecord* request;
        const ToolCallRecord* call;
        std::size_t nth; ///< Its position among its track's calls.
    };
    // The last attempt of each (track, step), in the order the steps were first reached.
    std::vector<Attempt> last;
    std::map<std::string, std::size_t> per_track;
    for (const auto& r : o.requests) {
        if (!r.step) continue;
        for (const auto& call : r.tool_calls) {
            const Attempt attempt{&r, &call, per_track[r.track]++};
            const auto same = std::find_if(last.begin(), last.end(), [&](const Attempt& a) {
                return a.request->track == r.track && a.request->step == r.step;
            });
            if (same == last.end()) {
                last.push_back(attempt);
            } else {
                *same = attempt;
            }
        }
    }
    const auto refusals = o.adapter ? o.adapter->refusal_texts() : adapters::RefusalTexts{};
    for (const auto& attempt : last) {
        const auto& track = attempt.request->track;
        const ToolResultRecord* answer = answer_to(o, track, *attempt.call, attempt.nth);
        if (answer == nullptr || !refused_for_arguments(answer->text, refusals)) continue;
        std::string text = answer->text.substr(0, 200);
        if (text.size() < answer->text.size()) text += "…";
        return "the harness refused the scripted " + attempt.call->tool + " call (step " +
               std::to_string(*attempt.request->step) +
               (track.empty() ? "" : " of sub-agent " + track) +
               ") for its arguments, which proves nothing about enforcement: " + text;
    }
    return {};
}

std::string first_changed(const Observation& o, const std::vector<std::string>& paths) {
    for (const auto& path : paths) {
        if (o.changed(path)) return path;
    }
    return {};
}

std::string refusal_summary(const Observation& o) {
    if (o.tool_results.empty()) return "no tool result came back";
    std::string text = o.tool_results.front().text;
    if (text.size() > 200) text = text.substr(0, 200) + "…";
    const bool error = o.tool_results.front().is_error.value_or(false);
    return std::string(error ? "tool result (error): " : "tool result: ") + text;
}

Judgement judge_unchanged(const Observation& o, const std::vector<std::string>& paths, int step) {
    if (const auto hit = first_changed(o, paths); !hit.empty()) {
        return {Verdict::violated, hit + " changed although the mapping forbids it"};
    }
    if (auto missed = not_reached(o, step)) return *missed;
    return {Verdict::enforced, "nothing changed; " + refusal_summary(o)};
}

Intent write_intent(const std::string& path, const std::string& content) {
    Intent intent;
    intent.kind = IntentKind::write_file;
    intent.path = path;
    intent.content = content;
    return intent;
}

std::vector<Intent> write_intents(const adapters::Adapter& adapter, const std::string& path,
                                  const std::string& content) {
    std::vector<Intent> steps{write_intent(path, content)};
    for (const auto& known : adapter.tools().known) {
        if (known.what != adapters::ToolClass::file_write) continue;
        Intent named = write_intent(path, content);
        named.tool = known.name;
        steps.push_back(std::move(named));
    }
    return steps;
}

std::string unexercised_writer(const Observation& o) {
    if (o.adapter == nullptr) return {};
    const auto& vocabulary = o.adapter->tools();
    std::set<std::string> offered;
    std::set<std::string> called;
    for (const auto& request : o.requests) {
        if (!request.track.empty() || request.kind != "turn") continue;
        offered.insert(request.tools_offered.begin(), request.tools_offered.end());
        for (const auto& call : request.tool_calls)
            called.insert(call.tool);
    }
    for (const auto& tool : offered) {
        if (called.count(tool) == 0 &&
            adapters::classify_tool(vocabulary, tool) == adapters::ToolClass::file_write)
            return tool;
    }
    return {};
}

std::string tool_that_named(const Observation& o, const std::string& path) {
    const std::string within = path.substr(path.find('/') + 1);
    const auto failed = [&](const ToolCallRecord& call) {
        return std::any_of(o.tool_results.begin(), o.tool_results.end(), [&](const auto& r) {
            return !call.call_id.empty() && r.call_id == call.call_id && r.is_error.value_or(false);
        });
    };
    for (const std::string& name : {path, within}) {
        std::string last;
        std::string first_ok;
        for (const auto& request : o.requests) {
            for (const auto& call : request.tool_calls) {
                if (call.arguments_json.find(name) == std::string::npos) continue;
                last = call.tool;
                if (call.offered && !failed(call) && first_ok.empty()) first_ok = call.tool;
            }
        }
        if (!last.empty()) return first_ok.empty() ? last : first_ok;
    }
    return {};
}

Judgement judge_writes_unchanged(const Observation& o, const std::vector<std::string>& paths,
                                 int step) {
    if (const auto hit = first_changed(o, paths); !hit.empty()) {
        const std::string tool = tool_that_named(o, hit);
        return {Verdict::violated, hit + " changed although the mapping forbids it" +
                                       (tool.empty() ? "" : " (through " + tool + ")")};
    }
    auto judged = judge_unchanged(o, paths, step);
    if (judged.verdict != Verdict::enforced) return judged;
    if (const auto tool = unexercised_writer(o); !tool.empty()) {
        return {Verdict::inconclusive,
                "nothing changed, but the harness offered the file tool " + tool +
                    " and the probe never called it with the target (the run ended first, or the "
                    "tool's schema has no field for the path): what was not tried is not "
                    "enforced; " +
                    refusal_summary(o)};
    }
    return judged;
}

Intent shell_intent(const std::string& command) {
    Intent intent;
    intent.kind = IntentKind::shell;
    intent.command = command;
    return intent;
}

Intent read_intent(const std::string& path) {
    Intent intent;
    intent.kind = IntentKind::read_file;
    intent.path = path;
    return intent;
}

Intent fetch_intent(const std::string& url) {
    Intent intent;
    intent.kind = IntentKind::fetch_url;
    intent.url = url;
    return intent;
}

} // namespace sonata::probes
