// The approval card a paused dispatch reports and remembers once answered: the card's own lines,
// without the spinner a harness animates under it, so two frames of one card are one card. And a
// task still waiting in the TUI's task box, which tells a submit the TUI lost.
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

// codex 0.171 lost the Enter of a dispatch's task in a fresh-clone run: the task stayed in the box
// while a late "⚠ 2 warnings" banner changed the screen, which read as a turn that had begun, so
// the task was never submitted again. The box's line tells the two apart.
TEST(TypedTextWaits, TheTaskStillInCodexsBoxIsASubmitTheTuiLost) {
    const auto codex = (*adapters::find_adapter("codex"))->screen_patterns();
    const std::string task = "Please look at this repository and follow the steps you are given.";
    const std::string lost = "  >_ OpenAI Codex (v0.171.0)\n     <scratch>/work\n\n› " + task +
                             "\n\n  sonata-probe-model default · <scratch>/work\n"
                             "                                  ⚠ 2 warnings · f2 to view\n";
    EXPECT_TRUE(typed_text_waits(lost, codex, task));
    // Submitted: the task moved up into the history, the box below shows its placeholder.
    EXPECT_FALSE(typed_text_waits(captured("codex/0.171.0/screens/rm-prompt-default-ready.txt"),
                                  codex, task));
    EXPECT_FALSE(typed_text_waits(
        captured("codex/0.171.0/screens/hostile-workspace-default-final.txt"), codex, task));
    // An empty box, and a harness whose screen names no box: nothing waits.
    EXPECT_FALSE(
        typed_text_waits("› " + task + "\n• Working (0s • esc to interrupt)\n›\n", codex, task));
    const auto reasonix = (*adapters::find_adapter("reasonix"))->screen_patterns();
    EXPECT_FALSE(typed_text_waits(lost, reasonix, task));
}

// Under load codex 0.171 lost a dispatch's Enter again while a screen captured between two
// redraws had already read as a turn: the task waited in its box for the run's whole time limit.
// What the box shows now decides, whatever the screens before it showed.
TEST(SubmitLost, IsWhatTheBoxShowsNowWhereTheTuiHasABox) {
    const auto codex = (*adapters::find_adapter("codex"))->screen_patterns();
    const std::string task = "Read the file instructions.md and do the task it describes.";
    const std::string waiting =
        "  >_ OpenAI Codex (v0.171.0)\n\n› " + task + "\n\n  sonata-probe-model default\n";
    EXPECT_TRUE(submit_lost(waiting, codex, task, true));
    EXPECT_TRUE(submit_lost(waiting, codex, task, false));
    // Working on it, or the task moved up into the history: not lost.
    EXPECT_FALSE(
        submit_lost("› " + task + "\n• Working (0s • esc to interrupt)\n›\n", codex, task, false));
    EXPECT_FALSE(submit_lost(captured("codex/0.171.0/screens/hostile-workspace-default-final.txt"),
                             codex, task, false));
    // A screen caught mid-redraw shows no box: wait for the next one.
    EXPECT_FALSE(submit_lost("\n\n\n", codex, task, false));
    // A TUI whose box sonata cannot read: lost while no sign of a turn showed.
    const auto reasonix = (*adapters::find_adapter("reasonix"))->screen_patterns();
    EXPECT_TRUE(submit_lost(waiting, reasonix, task, false));
    EXPECT_FALSE(submit_lost(waiting, reasonix, task, true));
}

} // namespace
} // namespace sonata::dispatch
