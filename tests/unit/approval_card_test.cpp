// The approval card a paused dispatch reports and remembers once answered: the card's own lines,
// without the spinner a harness animates under it, so two frames of one card are one card.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "dispatch/tui_driver.hpp"

namespace sonata::dispatch {
namespace {

std::string captured(const std::string& relative) {
    std::ifstream in(std::string(SONATA_SOURCE_DIR) + "/fixtures/captured/" + relative);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string replace_first(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

TEST(ApprovalCard, TwoFramesOfOneCardAreOneCard) {
    const auto patterns = (*adapters::find_adapter("reasonix"))->screen_patterns();
    const std::string frame = captured("reasonix/1.38.11/screens/rm-prompt-default-approval.txt");
    const std::string next = replace_first(frame, "checking · 0s", "checking · 1s");
    const std::string card = approval_card(frame, patterns);
    EXPECT_NE(card.find("Will call tool bash rm victim."), std::string::npos) << card;
    EXPECT_EQ(card.find("checking"), std::string::npos) << card;
    EXPECT_EQ(approval_card(next, patterns), card);
    // Another command is another card.
    EXPECT_NE(approval_card(replace_first(frame, "rm victim.", "rm -rf /."), patterns), card);
}

} // namespace
} // namespace sonata::dispatch
