// adapters/support/flag_value: setting or replacing a flag's value in an argv.
#include <gtest/gtest.h>

#include "adapters/support/flag_value.hpp"

namespace sonata::adapters {
namespace {

using Argv = std::vector<std::string>;

TEST(SetFlagValue, AddsAnAbsentFlagAtTheEnd) {
    Argv argv{"tool", "run"};
    EXPECT_EQ(set_flag_value(argv, "--model", "m1"), 2U);
    EXPECT_EQ(argv, (Argv{"tool", "run", "--model", "m1"}));
}

TEST(SetFlagValue, AddsAnAbsentFlagWhereAsked) {
    Argv argv{"tool", "run", "--"};
    EXPECT_EQ(set_flag_value(argv, "--model", "m1", 2), 2U);
    EXPECT_EQ(argv, (Argv{"tool", "run", "--model", "m1", "--"}));
    Argv joined{"tool", "run"};
    set_flag_value(joined, "--resume", "s1", k_argv_end, FlagForm::joined);
    EXPECT_EQ(joined, (Argv{"tool", "run", "--resume=s1"}));
}

TEST(SetFlagValue, ReplacesTheValueAfterTheFlag) {
    Argv argv{"tool", "--model", "old", "-p"};
    EXPECT_EQ(set_flag_value(argv, "--model", "new", 1), 1U);
    EXPECT_EQ(argv, (Argv{"tool", "--model", "new", "-p"}));
}

TEST(SetFlagValue, ReplacesAnAttachedValueInItsOwnForm) {
    Argv argv{"tool", "--model=old", "-p"};
    EXPECT_EQ(set_flag_value(argv, "--model", "new"), 1U);
    EXPECT_EQ(argv, (Argv{"tool", "--model=new", "-p"}));
}

TEST(SetFlagValue, ReplacesAShortFlagAsSpelled) {
    Argv argv{"codex", "exec", "-m", "old", "--model-provider", "x"};
    set_flag_value(argv, "-m", "new");
    EXPECT_EQ(argv, (Argv{"codex", "exec", "-m", "new", "--model-provider", "x"}));
    // A long spelling is another flag here: it is added, the short one is left alone.
    set_flag_value(argv, "--model", "long");
    EXPECT_EQ(argv,
              (Argv{"codex", "exec", "-m", "new", "--model-provider", "x", "--model", "long"}));
}

TEST(SetFlagValue, AnEmptyValueChangesNothing) {
    Argv argv{"tool", "--model", "old"};
    EXPECT_EQ(set_flag_value(argv, "--model", ""), k_argv_end);
    EXPECT_EQ(set_flag_value(argv, "--resume", ""), k_argv_end);
    EXPECT_EQ(argv, (Argv{"tool", "--model", "old"}));
}

TEST(SetFlagValue, AFlagWithoutAValueIsTreatedAsAbsent) {
    Argv argv{"tool", "--model"};
    set_flag_value(argv, "--model", "m1", 1);
    EXPECT_EQ(argv, (Argv{"tool", "--model", "m1", "--model"}));
}

TEST(ReplaceFlagValue, ReplacesOnlyWhatIsThere) {
    Argv argv{"tool", "--model", "old"};
    EXPECT_TRUE(replace_flag_value(argv, "--model", "new"));
    EXPECT_EQ(argv, (Argv{"tool", "--model", "new"}));
    Argv attached{"tool", "--model=old"};
    EXPECT_TRUE(replace_flag_value(attached, "--model", "new"));
    EXPECT_EQ(attached, (Argv{"tool", "--model=new"}));
    Argv absent{"tool", "--models", "x", "--model-name=y"};
    EXPECT_FALSE(replace_flag_value(absent, "--model", "new"));
    EXPECT_EQ(absent, (Argv{"tool", "--models", "x", "--model-name=y"}));
    Argv dangling{"tool", "--model"};
    EXPECT_FALSE(replace_flag_value(dangling, "--model", "new"));
    EXPECT_EQ(dangling, (Argv{"tool", "--model"}));
}

} // namespace
} // namespace sonata::adapters
