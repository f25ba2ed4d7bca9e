// The adapters' prompt detection against the screens the pinned real harnesses really showed
// (fixtures/captured/<harness>/<version>/screens/, written by scripts/capture-screens): a trust
// card is recognised as one and not as the ready task box, a ready screen as ready and nothing
// else, an approval card as an approval, a question sonata declines (codex's hooks review) as that
// alone.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"

namespace sonata::adapters {
namespace {

namespace fs = std::filesystem;

bool shows(const std::string& screen, const std::vector<std::string>& needles) {
    for (const auto& needle : needles) {
        if (!needle.empty() && screen.find(needle) != std::string::npos) return true;
    }
    return false;
}

std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Ends with "-<kind>.txt": trust, ready, approval, decline, submitted (just after the task was
/// typed), final (the last screen) or stdout.
std::string kind_of(const fs::path& file) {
    const std::string name = file.filename().string();
    const auto dash = name.rfind('-');
    return dash == std::string::npos ? "" : name.substr(dash + 1, name.size() - dash - 1 - 4);
}

TEST(CapturedScreens, EachAdapterRecognisesWhatItsHarnessShowed) {
    const fs::path root = fs::path(SONATA_SOURCE_DIR) / "fixtures/captured";
    std::map<std::string, int> checked;
    for (const auto& harness : fs::directory_iterator(root)) {
        if (!harness.is_directory()) continue;
        auto adapter = find_adapter(harness.path().filename().string());
        ASSERT_TRUE(adapter) << harness.path();
        const auto patterns = (*adapter)->screen_patterns();
        for (const auto& version : fs::directory_iterator(harness.path())) {
            const fs::path screens = version.path() / "screens";
            if (!fs::is_directory(screens)) continue;
            for (const auto& file : fs::directory_iterator(screens)) {
                const std::string screen = read(file.path());
                const std::string kind = kind_of(file.path());
                const std::string where = file.path().lexically_relative(root).string();
                if (kind == "trust") {
                    EXPECT_TRUE(shows(screen, patterns.trust))
                        << where << ": trust card not recognised";
                    EXPECT_FALSE(shows(screen, patterns.ready))
                        << where << ": trust card taken for the task box";
                    EXPECT_FALSE(shows(screen, patterns.approval))
                        << where << ": trust card taken for an approval";
                } else if (kind == "ready") {
                    EXPECT_TRUE(shows(screen, patterns.ready))
                        << where << ": task box not recognised";
                    EXPECT_FALSE(shows(screen, patterns.trust))
                        << where << ": task box taken for a trust card";
                    EXPECT_FALSE(shows(screen, patterns.approval))
                        << where << ": task box taken for an approval";
                } else if (kind == "approval") {
                    EXPECT_TRUE(shows(screen, patterns.approval))
                        << where << ": approval card not recognised";
                } else if (kind == "decline") {
                    EXPECT_TRUE(shows(screen, patterns.decline))
                        << where << ": question to decline not recognised";
                    EXPECT_FALSE(shows(screen, patterns.trust))
                        << where << ": question taken for a trust card";
                    EXPECT_FALSE(shows(screen, patterns.ready))
                        << where << ": question taken for the task box";
                    EXPECT_FALSE(shows(screen, patterns.approval))
                        << where << ": question taken for an approval";
                } else if (kind == "submitted") {
                    // Just after the task was typed: the model is at work, nothing to answer.
                    EXPECT_FALSE(shows(screen, patterns.trust))
                        << where << ": a working screen taken for a trust card";
                    EXPECT_FALSE(shows(screen, patterns.approval))
                        << where << ": a working screen taken for an approval";
                } else {
                    EXPECT_TRUE(kind == "stdout" || kind == "final")
                        << where << ": unknown capture kind";
                    continue;
                }
                ++checked[kind];
            }
        }
    }
    // The pinned codex has a TUI mapping: its trust card and task box must be among the captures.
    EXPECT_GE(checked["trust"], 1) << "no captured trust card: run scripts/capture-screens";
    EXPECT_GE(checked["ready"], 1) << "no captured task box: run scripts/capture-screens";
    EXPECT_GE(checked["decline"], 1) << "no captured hooks review: run scripts/capture-screens";
}

} // namespace
} // namespace sonata::adapters
