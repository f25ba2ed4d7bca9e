// The rules a dispatch's arguments follow, for every front end (see dispatch_ask.hpp).
#include "dispatch/caller/dispatch_ask.hpp"

#include <filesystem>

#include "core/text.hpp"
#include "dispatch/caller/dispatcher.hpp"
#include "dispatch/caller/fanout.hpp"

namespace sonata::dispatch {
namespace {

/// Why the ask's arguments do not go together; empty when they do.
std::string inconsistency(const DispatchAsk& ask) {
    if (!ask.fanout.empty()) {
        if (!ask.request.harness.empty() || !ask.resume.empty())
            return "a fan-out names its own harnesses: drop the harness and resume";
        if (ask.role.empty()) return "a fan-out needs a role";
        return {};
    }
    if (!ask.resume.empty()) {
        if (!ask.role.empty()) return "resume continues the run's own role: drop the role";
        return {};
    }
    if (ask.request.harness.empty() && ask.role.empty())
        return "give a harness or a role (or resume, a finished run's id)";
    return {};
}

/// The fan-out an ask makes: its own, or its role's when it names no harness and resumes nothing.
std::string fanout_of(const DispatchAsk& ask, const adapters::DispatchRequest& request,
                      const Config& config) {
    if (!ask.fanout.empty()) return ask.fanout;
    if (!request.harness.empty() || !ask.resume.empty()) return {};
    const auto role = config.find_role(request.role);
    return role ? join(role->fanout, ",") : std::string();
}

} // namespace

std::string workspace_path(const std::string& given, const std::string& from) {
    if (given.empty()) return from;
    return std::filesystem::absolute(std::filesystem::path(from) / given)
        .lexically_normal()
        .string();
}

Result<DispatchOrder> decide_dispatch(const DispatchAsk& ask, const Config& config) {
    if (auto why = inconsistency(ask); !why.empty()) return fail(ExitCode::usage, why);
    DispatchOrder order{ask.request, {}, false};
    order.request.workspace = ask.workspace;
    if (!ask.role.empty()) order.request.role = ask.role;
    if (!ask.resume.empty()) SONATA_TRY(resume_run(order.request, ask.resume));
    const std::string fanout = fanout_of(ask, order.request, config);
    if (fanout.empty()) return order;
    auto harnesses = fanout_harnesses(fanout, config, order.request.env);
    SONATA_TRY(harnesses);
    order.fanout = std::move(*harnesses);
    order.only_runnable = fanout == "all";
    return order;
}

} // namespace sonata::dispatch
