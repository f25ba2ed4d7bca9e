// core/text: the small string helpers shared across sonata.
#include <gtest/gtest.h>

#include "core/text.hpp"

namespace sonata {
namespace {

TEST(ReplaceAll, ReplacesEveryOccurrenceLeftToRight) {
    EXPECT_EQ(replace_all("/s/a and /s/b", "/s", "<scratch>"), "<scratch>/a and <scratch>/b");
    EXPECT_EQ(replace_all("xvisibility.txtyvisibility.txt", "visibility.txt", ""), "xy");
    EXPECT_EQ(replace_all("aaa", "aa", "b"), "ba");
}

TEST(ReplaceAll, NeverRescansWhatItPutIn) {
    EXPECT_EQ(replace_all("ab", "a", "aa"), "aab");
    EXPECT_EQ(replace_all("/s", "/s", "/s/s"), "/s/s");
}

TEST(ReplaceAll, AnEmptyPatternChangesNothing) {
    EXPECT_EQ(replace_all("text", "", "x"), "text");
    EXPECT_EQ(replace_all("", "a", "b"), "");
}

TEST(TailLines, KeepsTheLastLines) {
    EXPECT_EQ(tail_lines("1\n2\n3\n", 2), "2\n3\n");
    EXPECT_EQ(tail_lines("1\n2", 5), "1\n2");
}

} // namespace
} // namespace sonata
