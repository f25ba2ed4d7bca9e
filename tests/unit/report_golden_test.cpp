// Golden files for every renderer, over one machine's matrix and over two machines merged, for the
// markup writers over hostile text, and for the diff. SONATA_UPDATE_GOLDEN=1 rewrites
// fixtures/golden/report/ and fails, so the diff is read.
#include <gtest/gtest.h>

#include "reports/diff.hpp"
#include "reports/merge.hpp"
#include "reports/report.hpp"
#include "tests/support/report_fixtures.hpp"

namespace sonata::reports {
namespace report_golden_test {

using sonata::testing::expect_golden;
using sonata::testing::load_fixture;

struct GoldenCase {
    ReportFormat format;
    std::string extension;
};

class ReportGolden : public ::testing::TestWithParam<GoldenCase> {};

Matrix two_machines() {
    return merge_machines({{"linux-ci.json", load_fixture("linux-ci.json")},
                           {"macos-ci.json", load_fixture("macos-ci.json")}});
}

TEST_P(ReportGolden, OneMachine) {
    expect_golden("linux-ci." + GetParam().extension,
                  render_report(load_fixture("linux-ci.json"), GetParam().format));
}

TEST_P(ReportGolden, TwoMachinesMerged) {
    expect_golden("merged." + GetParam().extension,
                  render_report(two_machines(), GetParam().format));
}

INSTANTIATE_TEST_SUITE_P(Formats, ReportGolden,
                         ::testing::Values(GoldenCase{ReportFormat::markdown, "md"},
                                           GoldenCase{ReportFormat::junit, "junit.xml"},
                                           GoldenCase{ReportFormat::html, "html"},
                                           GoldenCase{ReportFormat::json, "json"}),
                         [](const auto& case_info) {
                             return std::string(to_string(case_info.param.format));
                         });

// Quotes of both kinds, characters HTML 4 names and ones it does not, control characters, CR LF and
// tabs, in every place text reaches: the files were written by the report writer sonata used before
// its own serializers, so these pin them byte for byte.
class MarkupGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(MarkupGolden, HostileText) {
    expect_golden("hostile-text." + GetParam().extension,
                  render_report(load_fixture("hostile-text.json"), GetParam().format));
}

INSTANTIATE_TEST_SUITE_P(Markup, MarkupGolden,
                         ::testing::Values(GoldenCase{ReportFormat::junit, "junit.xml"},
                                           GoldenCase{ReportFormat::html, "html"}),
                         [](const auto& case_info) {
                             return std::string(to_string(case_info.param.format));
                         });

TEST(ReportGoldenDiff, LastWeekToToday) {
    const auto changes =
        diff_matrices(load_fixture("linux-ci-last-week.json"), load_fixture("linux-ci.json"));
    expect_golden("diff-last-week.md",
                  render_diff_markdown(changes, "linux-ci-last-week.json", "linux-ci.json"));
}

TEST(ReportGoldenDiff, TwoMachines) {
    const auto changes =
        diff_matrices(load_fixture("macos-ci.json"), load_fixture("linux-ci.json"));
    expect_golden("diff-machines.md",
                  render_diff_markdown(changes, "macos-ci.json", "linux-ci.json"));
}

} // namespace report_golden_test
} // namespace sonata::reports
