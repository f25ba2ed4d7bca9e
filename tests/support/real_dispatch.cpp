#include "tests/support/real_dispatch.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "adapters/support/planner.hpp"
#include "core/node_runtime.hpp"
#include "core/process.hpp"
#include "dispatch/caller/run.hpp"
#include "probes/model_server.hpp"
#include "probes/workspace.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::testing {

Result<Decision> decide_real(const RealDispatch& what) {
    adapters::PlanRequest request;
    request.harness_id = what.harness;
    request.parent_mode = what.mode;
    request.role = Role{what.kind == RoleKind::write ? "code" : "review", what.kind, {}, {}};
    request.executable = what.executable;
    request.version = what.version;
    if (const auto need = node_need(what.executable)) {
        auto runner = make_system_runner();
        request.path_first = choose_node(*need, current_environment(), *runner).path_first;
    }
    request.host = adapters::detect_host();
    request.support_dir = what.support_dir;
    request.write_support_files = true;
    request.max_budget_usd = what.budget;
    request.resume_session = what.resume;
    return adapters::decide(request);
}

Result<Decision> aimed_at(const Decision& decision, const probes::ModelServer& server,
                          const probes::Scratch& scratch, const std::string& workspace) {
    auto adapter = adapters::find_adapter(decision.harness);
    SONATA_TRY(adapter);
    adapters::EndpointSpec endpoint;
    endpoint.base_url = server.base_url();
    endpoint.home = scratch.home();
    endpoint.workspace = workspace;
    auto injected = (*adapter)->inject_endpoint(decision.invocation(), endpoint);
    SONATA_TRY(injected);
    SONATA_TRY(scratch.write_files(injected->files));
    Decision aimed = decision;
    aimed.outcome = injected->invocation;
    return aimed;
}

std::string text_or_empty(const std::string& path) {
    std::error_code ec;
    return std::filesystem::exists(path, ec) ? read_text(path) : std::string();
}

std::string run_logs(const std::string& dir) {
    return "harness.log:\n" + text_or_empty(dir + "/harness.log") + "\nsupervisor.log:\n" +
           text_or_empty(dir + "/supervisor.log") + "\nreceipt:\n" +
           text_or_empty(dir + "/receipt.json");
}

dispatch::Receipt wait_for_run(const std::string& dir, dispatch::RunState expected,
                               std::chrono::seconds window) {
    auto done = dispatch::wait_run(dir, window);
    EXPECT_TRUE(done) << done.error().message;
    if (!done) return {};
    if (done->state != expected) {
        ADD_FAILURE() << "the run ended " << to_string(done->state) << ", not "
                      << to_string(expected) << "\n"
                      << run_logs(dir);
    }
    return *done;
}

} // namespace sonata::testing
