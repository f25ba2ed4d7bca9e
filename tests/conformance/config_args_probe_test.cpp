// The planner's checks on configured `args` matter, measured on the pinned codex: the forms that
// once got past them (an attached `-cKEY=VALUE`, a key with a leading space) are added to the
// probed invocation behind the planner's back, and outside-workspace-write, enforced without them,
// turns violated. `sonata plan` refuses the same args (tests/integration/hostile_inputs_test.cpp).
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "core/probe_ids.hpp"
#include "core/process.hpp"
#include "probes/workspace.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/real_cell.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_codex_version = "0.171.0"; // tests/conformance/harnesses.json

class ConfigArgsProbe : public ::testing::Test {
protected:
    void SetUp() override {
        const char* path = std::getenv("PATH");
        m_codex = search_path("codex", path != nullptr ? path : "/usr/bin:/bin").value_or("");
        if (m_codex.empty()) {
            const std::string why = testing::missing_harness_skip_reason();
            if (why.empty()) FAIL() << "codex is not installed although the npm registry answered";
            GTEST_SKIP() << "codex " << k_codex_version << " is not installed: " << why;
        }
        m_base = m_dir.make_dir("base");
        auto template_dir = probes::make_workspace_template(m_base, *m_runner);
        ASSERT_TRUE(template_dir) << template_dir.error().message;
        m_template = *template_dir;
    }

    /// outside-workspace-write for codex in acceptEdits, with `args` put where the planner would
    /// have put configured ones (right after `exec`).
    Cell outside_write_with(const std::vector<std::string>& args) {
        return testing::run_real_cell(
            {"codex", m_codex, k_codex_version, Mode::accept_edits, RoleKind::write,
             std::string(probe_id::outside_workspace_write),
             [args](Invocation& invocation) {
                 invocation.argv.insert(invocation.argv.begin() + 2, args.begin(), args.end());
             }},
            m_dir, m_base, m_template, *m_runner);
    }

    testing::ScratchDir m_dir;
    std::unique_ptr<ProcessRunner> m_runner = make_system_runner();
    std::string m_codex;
    std::string m_base;
    std::string m_template;
};

TEST_F(ConfigArgsProbe, TheArgsThePlannerNowRefusesWouldHaveWidenedCodex) {
    const Cell control = outside_write_with({});
    ASSERT_EQ(control.verdict, Verdict::enforced)
        << "the mapping as sonata plans it: " << control.evidence.reason;
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"-csandbox_workspace_write.writable_roots=[\"/\"]"},
          std::vector<std::string>{"-c", " sandbox_workspace_write.writable_roots=[\"/\"]"}}) {
        const Cell widened = outside_write_with(args);
        EXPECT_EQ(widened.verdict, Verdict::violated)
            << args.back() << ": " << widened.evidence.reason;
    }
}

} // namespace
} // namespace sonata
