// Dispatch on the pinned real harnesses, hermetic: for every headless mapping sonata runs for a
// pinned harness, a run started by the dispatcher (run directory, detached `sonata supervise`,
// receipt) against the scripted model server, whose model answers with a token as its final
// message, reaches `done` with the token in its report, from the expected source, undegraded.
// The invocation is the planner's, with the adapter's endpoint injection (as a probe cell has it).
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "adapters/support/planner.hpp"
#include "core/process.hpp"
#include "dispatch/run.hpp"
#include "probes/model_server.hpp"
#include "probes/script.hpp"
#include "probes/workspace.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

using json = nlohmann::json;

using testing::Pin;
using testing::pins;


constexpr std::pair<Mode, RoleKind> k_mappings[] = {{Mode::plan, RoleKind::read_only},
                                                    {Mode::default_mode, RoleKind::write},
                                                    {Mode::accept_edits, RoleKind::write},
                                                    {Mode::bypass_permissions, RoleKind::write}};

class DispatchConformance : public ::testing::TestWithParam<Pin> {
protected:
    void SetUp() override {
        const char* path = std::getenv("PATH");
        m_bin =
            search_path(GetParam().binary, path != nullptr ? path : "/usr/bin:/bin").value_or("");
        if (m_bin.empty())
            GTEST_SKIP() << GetParam().id << " " << GetParam().version
                         << " is not installed: scripts/install-harnesses";
    }

    /// One dispatch of `decision` against a scripted model that answers `token`; the final receipt.
    dispatch::Receipt run(const Decision& decision, const std::string& token, std::string& report) {
        auto runner = make_system_runner();
        auto scratch = probes::Scratch::create(m_dir.path(), "", *runner);
        EXPECT_TRUE(scratch) << scratch.error().message;
        auto script = probes::parse_script(json{{"steps", json::array()}, {"final", token}}.dump());
        EXPECT_TRUE(script);
        const auto& adapter = **adapters::find_adapter(decision.harness);
        probes::ModelServer server(*script, adapter.tools(), scratch->workspace());
        EXPECT_TRUE(server.start());
        adapters::EndpointSpec endpoint;
        endpoint.base_url = server.base_url();
        endpoint.home = scratch->home();
        endpoint.workspace = scratch->workspace();
        auto injected = adapter.inject_endpoint(decision.invocation(), endpoint);
        EXPECT_TRUE(injected) << injected.error().message;
        EXPECT_TRUE(scratch->write_files(injected->files));
        Decision probed = decision;
        probed.outcome = injected->invocation;
        dispatch::Receipt receipt;
        receipt.harness = decision.harness;
        receipt.version = decision.version;
        receipt.mode = std::string(to_string(decision.effective_mode));
        receipt.role = decision.role.name;
        receipt.role_kind = std::string(to_string(decision.role.kind));
        const dispatch::StartRequest start{
            probed,
            receipt,
            "Answer with your final message.",
            scratch->workspace(),
            scratch->environment(current_environment()),
            scratch->root() + "/runs",
            SONATA_BIN,
            dispatch::RunLimits{std::chrono::seconds(180), std::chrono::seconds(180), 1U << 20U}};
        auto dir = dispatch::start_run(start);
        EXPECT_TRUE(dir) << dir.error().message;
        auto done = dispatch::wait_run(*dir, std::chrono::seconds(200));
        EXPECT_TRUE(done) << done.error().message;
        report = std::filesystem::exists(*dir + "/report.md")
                     ? testing::read_text(*dir + "/report.md")
                     : "";
        if (done->state != dispatch::RunState::done) {
            ADD_FAILURE() << "harness.log:\n"
                          << testing::read_text(*dir + "/harness.log") << "\nreceipt:\n"
                          << dispatch::receipt_to_json(*done);
        }
        return *done;
    }

    testing::ScratchDir m_dir;
    std::string m_bin;
};

TEST_P(DispatchConformance, EveryHeadlessMappingReachesDoneWithTheModelsReport) {
    const Pin& pin = GetParam();
    int dispatched = 0;
    for (const auto& [mode, kind] : k_mappings) {
        adapters::PlanRequest request;
        request.harness_id = pin.id;
        request.parent_mode = mode;
        request.role = Role{kind == RoleKind::write ? "code" : "review", kind, {}, {}};
        request.executable = m_bin;
        request.version = pin.version;
        request.host = adapters::detect_host(); // as root, claude's bypass is refused
        request.support_dir = m_dir.path() + "/support";
        request.write_support_files = true;
        auto decision = adapters::decide(request);
        ASSERT_TRUE(decision) << decision.error().message;
        if (!decision->runs() || decision->invocation().interactive)
            continue; // refused, or a TUI mapping
        const std::string token = "sonata-token-" + pin.id + "-" + std::string(to_string(mode));
        std::string report;
        const auto receipt = run(*decision, token, report);
        EXPECT_EQ(receipt.state, dispatch::RunState::done)
            << to_string(mode) << ": " << receipt.degraded_reason;
        EXPECT_FALSE(receipt.degraded) << to_string(mode) << ": " << receipt.degraded_reason;
        EXPECT_EQ(receipt.report_source,
                  kind == RoleKind::read_only ? "terminal-output" : "final-message")
            << to_string(mode);
        EXPECT_NE(report.find(token), std::string::npos) << to_string(mode) << ": " << report;
        ++dispatched;
    }
    EXPECT_GT(dispatched, 0) << "sonata runs no headless mapping of " << pin.id;
    RecordProperty("dispatched_mappings", dispatched);
    std::cout << "[ dispatched ] " << pin.id << ": " << dispatched
              << " headless mapping(s) reached done\n";
}

INSTANTIATE_TEST_SUITE_P(Pinned, DispatchConformance, ::testing::ValuesIn(pins()),
                         [](const auto& param_info) { return param_info.param.id; });

} // namespace
} // namespace sonata
