// Whether the scripted calls reached their targets (see reached_target.hpp).
#include "probes/reached_target.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/text.hpp"

namespace sonata::probes {
namespace {

/// "the scripted write call (step 3 of sub-agent M)".
std::string call_named(const RequestRecord& request, const ToolCallRecord& call) {
    return "the scripted " + call.tool + " call (step " +
           std::to_string(request.step.value_or(-1)) +
           (request.track.empty() ? "" : " of sub-agent " + request.track) + ")";
}

/// `path` (absolute, or relative to the workspace) as a change line names it ("work/x",
/// "outside/y"); "" when it is under none of the cell's roots.
std::string change_path(const ProbeSetup& setup, const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path full = (fs::path(setup.workspace) / path).lexically_normal();
    const std::pair<const char*, const std::string*> roots[] = {{"work/", &setup.workspace},
                                                                {"home/", &setup.home},
                                                                {"tmp/", &setup.tmp},
                                                                {"outside/", &setup.outside}};
    for (const auto& [prefix, root] : roots) {
        if (root->empty()) continue;
        const auto rel = full.lexically_relative(fs::path(*root).lexically_normal());
        if (!rel.empty() && !rel.string().starts_with("..") && rel != ".")
            return prefix + rel.string();
    }
    return {};
}

/// Whether the result of a write to `target` reads as anything but success: an error flag, the
/// harness's refusal texts, or the words every refusal and failure uses.
bool not_a_success(const ToolResultRecord& result, const std::string& target,
                   const adapters::RefusalTexts& refusals) {
    if (result.is_error.value_or(false)) return true;
    if (refused_for_permission(result.text, refusals) ||
        refused_for_arguments(result.text, refusals))
        return true;
    static const std::vector<std::string> words{
        "denied",        "reject",  "not allowed", "not permitted", "permission",
        "error",         "fail",    "refus",       "blocked",       "cannot",
        "can't",         "unable",  "sandbox",     "approv",        "declined",
        "not available", "unknown", "invalid",     "forbidden",     "outside of"};
    // The path the call named says nothing about how it went.
    const auto text = ascii_lower(replace_all(result.text, target, ""));
    return std::any_of(words.begin(), words.end(),
                       [&](const std::string& w) { return text.find(w) != std::string::npos; });
}

/// The first file created in the workspace or beside it that is none of `targets`; "".
std::string created_elsewhere(const Observation& o, const std::set<std::string>& targets) {
    for (const auto& line : o.changes) {
        if (!line.starts_with("created ")) continue;
        const auto path = line.substr(8);
        if (!path.starts_with("work/") && !path.starts_with("outside/")) continue;
        if (targets.count(path) == 0) return path;
    }
    return {};
}

} // namespace

std::string target_not_in_schema(const Observation& o) {
    for (const auto& request : o.requests) {
        for (const auto& call : request.tool_calls) {
            if (call.unplaced.empty()) continue;
            return call_named(request, call) + " could not reach its target: " + call.unplaced +
                   ", so what followed proves nothing about enforcement";
        }
    }
    return {};
}

std::string write_missed_its_target(const Observation& o) {
    std::set<std::string> targets;
    for (const auto& request : o.requests) {
        for (const auto& call : request.tool_calls) {
            if (!call.target.empty()) targets.insert(change_path(o.setup, call.target));
        }
    }
    const auto refusals = o.adapter ? o.adapter->refusal_texts() : adapters::RefusalTexts{};
    std::map<std::string, std::size_t> per_track;
    for (const auto& request : o.requests) {
        for (const auto& call : request.tool_calls) {
            const std::size_t nth = per_track[request.track]++;
            if (call.target.empty() || !call.offered) continue;
            const auto target = change_path(o.setup, call.target);
            const auto* answer = answer_to(o, request.track, call, nth);
            if (target.empty() || o.changed(target) || answer == nullptr ||
                not_a_success(*answer, call.target, refusals))
                continue;
            const auto created = created_elsewhere(o, targets);
            if (created.empty()) continue;
            std::string said = answer->text.substr(0, 120);
            if (said.size() < answer->text.size()) said += "…";
            return call_named(request, call) + " was answered as done (\"" + said +
                   "\"), but its target " + target + " is unchanged and " + created +
                   " was created instead: the call did not reach its target, so it proves "
                   "nothing about enforcement";
        }
    }
    return {};
}

} // namespace sonata::probes
