// Mode folding, parsing and role forcing.
#include <gtest/gtest.h>

#include "core/mode.hpp"

namespace sonata {

TEST(Mode, FoldsAutoDontAskAndUnknown) {
    EXPECT_EQ(fold_mode("auto"), Mode::accept_edits);
    EXPECT_EQ(fold_mode("dontAsk"), Mode::plan);
    EXPECT_EQ(fold_mode("nonsense"), Mode::default_mode);
    EXPECT_EQ(fold_mode(""), Mode::default_mode);
    EXPECT_EQ(fold_mode("bypassPermissions"), Mode::bypass_permissions);
}

TEST(Mode, ParseRejectsUnknownWithSuggestion) {
    auto bad = parse_mode("acceptEdit");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, ExitCode::usage);
    EXPECT_NE(bad.error().message.find("did you mean 'acceptEdits'"), std::string::npos);
    EXPECT_EQ(*parse_mode("dontAsk"), Mode::plan);
}

TEST(Mode, RoleForcing) {
    for (Mode m : {Mode::plan, Mode::default_mode, Mode::accept_edits, Mode::bypass_permissions}) {
        EXPECT_EQ(effective_mode(m, RoleKind::read_only), Mode::plan);
        EXPECT_EQ(effective_mode(m, RoleKind::write), m);
    }
}

} // namespace sonata
