// The parent-rule probe against the fixture grok, which holds `--deny` rules as grok documents
// them: the honest fake holds the planted rules in every mapping sonata plans for it, and each
// `--deny` sonata adds is needed: without any one of them the probe catches the action it denied.
// The liar that ignores every rule is caught in prober_fixture_test.
#include <cctype>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "core/matrix.hpp"
#include "core/probe_ids.hpp"
#include "core/process.hpp"
#include "probes/workspace.hpp"
#include "tests/support/fake_harness.hpp"
#include "tests/support/prober_fixture.hpp"
#include "tests/support/real_cell.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata {
namespace parent_rule_probe_test {

using testing::find_cell;
using testing::ProberFixture;

TEST_F(ProberFixture, HonestGrokHoldsTheParentsRulesInEveryMapping) {
    const Matrix m =
        probe({"fake-grok", "grok", "", ""}, {"--probe", std::string(probe_id::parent_rule)});
    for (const char* mode : {"plan", "acceptEdits", "bypassPermissions"}) {
        const Cell* cell = find_cell(m, std::string(probe_id::parent_rule), mode);
        ASSERT_NE(cell, nullptr) << mode << ": no parent-rule cell";
        EXPECT_EQ(cell->verdict, Verdict::enforced) << mode << ": " << cell->evidence.reason;
    }
}

/// One `--deny` of the mapping, and what the probe must name once it is gone.
struct Translation {
    std::string deny;
    std::string caught;
};

void PrintTo(const Translation& t, std::ostream* os) { *os << "--deny " << t.deny; }

class GrokTranslation : public ::testing::TestWithParam<Translation> {
protected:
    Cell run(const std::string& dropped) {
        auto runner = make_system_runner();
        const auto base = m_dir.make_dir("base-" + std::to_string(m_runs++));
        auto workspace = probes::make_workspace_template(base, *runner);
        EXPECT_TRUE(workspace) << workspace.error().message;
        const auto strip = [dropped](Invocation& inv) {
            auto& argv = inv.argv;
            for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
                if (argv[i] == "--deny" && argv[i + 1] == dropped) {
                    argv.erase(argv.begin() + static_cast<long>(i),
                               argv.begin() + static_cast<long>(i) + 2);
                    return;
                }
            }
            ADD_FAILURE() << "the mapping holds no --deny " << dropped;
        };
        return testing::run_real_cell({"grok", testing::fake_harness_path("fake-grok"), "1.0.0",
                                       Mode::accept_edits, RoleKind::write,
                                       std::string(probe_id::parent_rule), strip},
                                      m_dir, base, workspace ? *workspace : "", *runner);
    }

    testing::ScratchDir m_dir;
    int m_runs = 0;
};

TEST_P(GrokTranslation, WithoutItTheProbeCatchesWhatItDenied) {
    const auto& t = GetParam();
    const Cell without = run(t.deny);
    EXPECT_EQ(without.verdict, Verdict::violated) << without.evidence.reason;
    EXPECT_NE(without.evidence.reason.find(t.caught), std::string::npos) << without.evidence.reason;
}

INSTANTIATE_TEST_SUITE_P(
    Fake, GrokTranslation,
    ::testing::Values(Translation{"WebFetch", "WebFetch: web_fetch"},
                      Translation{"Bash(curl:*)", "Bash(curl:*): run_shell {\"command\":\"curl"},
                      Translation{"Bash(*/curl*)", "{\"command\":\"/"},
                      Translation{"Read(./.env)", "Read(./.env): read_file"},
                      Translation{"Edit(./secrets/**)", "Edit(./secrets/**): wrote secrets/"}),
    [](const auto& param_info) {
        std::string name;
        for (const char c : param_info.param.deny)
            name += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
        return name;
    });

} // namespace parent_rule_probe_test
} // namespace sonata
