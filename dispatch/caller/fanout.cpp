// One task on several harnesses at once (see fanout.hpp).
#include "dispatch/caller/fanout.hpp"

#include <algorithm>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "adapters/support/pipeline.hpp"
#include "core/text.hpp"
#include "dispatch/caller/run.hpp"

namespace sonata::dispatch {
namespace {

std::vector<std::string> comma_separated(const std::string& list) {
    std::vector<std::string> out;
    for (std::size_t at = 0;;) {
        const auto comma = list.find(',', at);
        out.push_back(trimmed(list.substr(at, comma == std::string::npos ? comma : comma - at)));
        if (comma == std::string::npos) return out;
        at = comma + 1;
    }
}

} // namespace

Result<std::vector<std::string>> fanout_harnesses(const std::string& list, const Config& config,
                                                  const Environment& env) {
    std::vector<std::string> out;
    if (list == "all") {
        auto runner = make_system_runner();
        for (const auto& adapter : adapters::all_adapters()) {
            const std::string id(adapter->id());
            if (adapters::detect_harness(*adapter, id, config, env, *runner).installed)
                out.push_back(id);
        }
        if (out.empty())
            return fail(ExitCode::not_installed, "--fanout all: no harness is installed");
        return out;
    }
    for (const auto& name : comma_separated(list)) {
        if (!adapters::find_adapter(name))
            return fail(ExitCode::usage, "--fanout: unknown harness '" + name + "'");
        if (std::find(out.begin(), out.end(), name) != out.end())
            return fail(ExitCode::usage, "--fanout: " + name + " is named twice");
        out.push_back(name);
    }
    if (out.size() < 2)
        return fail(ExitCode::usage, "--fanout names two harnesses or more (or all)");
    return out;
}

std::vector<FanoutMember> start_fanout(const adapters::DispatchRequest& request,
                                       const std::vector<std::string>& harnesses,
                                       const std::string& task, const Config& config,
                                       std::optional<std::chrono::seconds> timeout,
                                       bool only_runnable) {
    std::vector<FanoutMember> members;
    const auto role = config.find_role(request.role);
    // Several writers at once: each in a worktree of its own, never in the same files. A parent in
    // plan mode narrows a write role to plan: its runs write nothing, as a single dispatch's.
    const auto parent = adapters::parent_mode(request, config);
    const bool writers =
        role && role->kind == RoleKind::write && !(parent && parent->mode == Mode::plan);
    for (const auto& harness : harnesses) {
        adapters::DispatchRequest one = request;
        one.harness = harness;
        if (writers) one.workspace = adapters::Workspace::worktree;
        FanoutMember member{harness, {}, {}, {}, {}};
        auto started = start_dispatch(one, task, config, timeout);
        if (!started) {
            if (only_runnable && started.error().code == ExitCode::not_installed) continue;
            member.error = started.error().message;
        } else if (!started->planned.decision.runs()) {
            if (only_runnable) continue; // "all": the harnesses whose cells hold here
            member.refused = started->planned.decision.refusal().reason;
        } else {
            member.run_dir = started->run_dir;
            member.id = started->id;
        }
        members.push_back(std::move(member));
    }
    return members;
}

bool any_done(const std::vector<FanoutMember>& members) {
    return std::any_of(members.begin(), members.end(), [](const FanoutMember& m) {
        if (m.run_dir.empty()) return false;
        auto receipt = run_status(m.run_dir);
        return receipt && receipt->state == RunState::done;
    });
}

} // namespace sonata::dispatch
