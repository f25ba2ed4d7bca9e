// Text made safe for reports: UTF-8 repair, control pictures, line endings; Markdown escaping and
// fences that content cannot close.
#include <gtest/gtest.h>

#include "reports/markdown_text.hpp"
#include "reports/text_safety.hpp"

namespace sonata::reports {

TEST(ReportText, KeepsValidUtf8AndTabsAndNewlines) {
    EXPECT_EQ(printable_text("a\tb\nc ≠ é ❯ 😀"), "a\tb\nc ≠ é ❯ 😀");
}

TEST(ReportText, ControlCharactersBecomeControlPictures) {
    EXPECT_EQ(printable_text("\x1b[31mred\x1b[0m\x07\x7f"), "␛[31mred␛[0m␇␡");
    EXPECT_EQ(printable_text(std::string("a\0b", 3)), "a␀b");
}

TEST(ReportText, LineEndingsBecomeLineFeeds) {
    EXPECT_EQ(printable_text("one\r\ntwo\rthree\n"), "one\ntwo\nthree\n");
}

TEST(ReportText, InvalidUtf8BecomesReplacementCharacters) {
    EXPECT_EQ(printable_text("a\xff"
                             "b"),
              "a\uFFFDb");
    EXPECT_EQ(printable_text("\xc0\xaf"), "\uFFFD\uFFFD");           // overlong '/'
    EXPECT_EQ(printable_text("\xed\xa0\x80"), "\uFFFD\uFFFD\uFFFD"); // a UTF-16 surrogate
    EXPECT_EQ(printable_text("cut \xe2\x89"), "cut \uFFFD\uFFFD");   // truncated sequence
    EXPECT_EQ(printable_text("\xef\xbf\xbf"), "\uFFFD");             // U+FFFF is not a character
}

TEST(ReportText, LastLinesKeepsTheTail) {
    EXPECT_EQ(last_lines("a\nb\nc\n", 2), "…\nb\nc");
    EXPECT_EQ(last_lines("a\nb\nc", 3), "a\nb\nc");
    EXPECT_EQ(last_lines("only", 1), "only");
}

TEST(ReportMarkdownText, EscapesEverythingMarkdownOrGitHubWouldInterpret) {
    EXPECT_EQ(md_escape("a|b <script> *x* _y_ [l](u) @user #1 `c` ~s~ &amp;\nnext"),
              "a\\|b \\<script\\> \\*x\\* \\_y\\_ \\[l\\]\\(u\\) \\@user \\#1 \\`c\\` \\~s\\~ "
              "\\&amp; next");
    EXPECT_EQ(md_escape("plain-text 0.41.0"), "plain-text 0.41.0");
}

TEST(ReportMarkdownText, CodeSpansAndFencesOutlastTheirContent) {
    EXPECT_EQ(md_code_span("ls -l"), "`ls -l`");
    EXPECT_EQ(md_code_span("a `b` c"), "``a `b` c``");
    EXPECT_EQ(md_code_span("`x"), "`` `x ``");
    EXPECT_EQ(md_fenced("plain"), "```text\nplain\n```\n");
    EXPECT_EQ(md_fenced("has ``` and ````\n"), "`````text\nhas ``` and ````\n`````\n");
}

TEST(ReportMarkdownText, TableRows) {
    EXPECT_EQ(md_table_row({"a", "b"}), "| a | b |\n");
    EXPECT_EQ(md_table_rule(3), "|---|---|---|\n");
}

} // namespace sonata::reports
