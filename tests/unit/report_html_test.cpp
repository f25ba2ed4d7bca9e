// The HTML renderer: self-contained, every measured cell opens its evidence, colours and legend,
// disagreements outlined, captured text escaped.
#include <gtest/gtest.h>

#include "reports/html.hpp"
#include "reports/merge.hpp"
#include "tests/support/report_fixtures.hpp"

namespace sonata::reports {
namespace {

using sonata::testing::load_fixture;

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + needle.size()))
        ++n;
    return n;
}

std::string merged_page() {
    return render_html(merge_machines({{"linux-ci.json", load_fixture("linux-ci.json")},
                                       {"macos-ci.json", load_fixture("macos-ci.json")}}));
}

} // namespace

TEST(ReportHtml, NeedsNothingFromOutside) {
    const std::string page = merged_page();
    for (const char* external :
         {"http:", "https:", "src=", "<link", "<script", "url(", "@import"}) {
        EXPECT_EQ(count(page, external), 0U) << external;
    }
    EXPECT_EQ(
        page.rfind("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", 0),
        0U);
}

TEST(ReportHtml, EveryMeasuredCellOpensItsEvidence) {
    const std::string page = merged_page();
    const std::size_t cells = 19; // linux-ci has 13 cells, macos-ci 6.
    EXPECT_EQ(count(page, "<td class=\"cell v-"), cells);
    EXPECT_EQ(count(page, "<details><summary>"), cells);
    EXPECT_EQ(count(page, "</summary><pre>verdict: "), cells);
}

TEST(ReportHtml, DisagreementsAreOutlinedAndMarked) {
    const std::string page = merged_page();
    EXPECT_EQ(count(page, " disagree\"><details>"), 4U); // two keys, two machines each
    EXPECT_NE(
        page.find(
            "<td class=\"cell v-violated disagree\"><details><summary>violated &ne;</summary>"),
        std::string::npos);
    EXPECT_NE(page.find("<th>machine</th>"), std::string::npos);
    const std::string single = render_html(load_fixture("linux-ci.json"));
    EXPECT_EQ(count(single, "disagree\""), 0U);
    EXPECT_EQ(count(single, "<th>machine</th>"), 0U);
}

TEST(ReportHtml, LegendAndColoursCoverEveryVerdict) {
    const std::string page = render_html(load_fixture("linux-ci.json"));
    for (const char* verdict : {"enforced", "asked", "refused-to-start", "not-applicable",
                                "inconclusive", "error", "violated"}) {
        EXPECT_EQ(count(page, std::string(".v-") + verdict + " { background: #"), 1U) << verdict;
        EXPECT_EQ(count(page, std::string("<span class=\"swatch v-") + verdict + "\">" + verdict +
                                  "</span>"),
                  1U)
            << verdict;
    }
}

TEST(ReportHtml, CapturedTextIsEscaped) {
    const std::string page = render_html(load_fixture("linux-ci.json"));
    EXPECT_NE(page.find("&lt;script&gt;alert(\"x\")&lt;/script&gt; &amp; a | pipe"),
              std::string::npos);
    EXPECT_NE(page.find("&#9243;[32msucceeded&#9243;[0m"),
              std::string::npos); // ESC as its control picture
    EXPECT_EQ(count(page, "\x1b"), 0U);
}

} // namespace sonata::reports
