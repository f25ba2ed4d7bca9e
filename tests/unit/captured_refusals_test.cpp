// The adapters' refusal texts against what the pinned real harnesses told the model
// (fixtures/captured/<harness>/<version>/refusals.json): a call refused for its arguments reads as
// one, a call the harness's permissions refused never does, and every text an adapter lists
// matches something its harness really said.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "adapters/support/probe_convention.hpp"
#include "probes/script.hpp"

namespace sonata::probes {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> texts(const nlohmann::json& doc, const char* key) {
    return doc.at(key).get<std::vector<std::string>>();
}

TEST(CapturedRefusals, EachAdapterTellsBadArgumentsFromPermissions) {
    const fs::path root = fs::path(SONATA_SOURCE_DIR) / "fixtures/captured";
    std::size_t files = 0;
    for (const auto& harness : fs::directory_iterator(root)) {
        if (!harness.is_directory()) continue;
        auto adapter = adapters::find_adapter(harness.path().filename().string());
        ASSERT_TRUE(adapter) << harness.path();
        const auto refusals = (*adapter)->refusal_texts();
        for (const auto& version : fs::directory_iterator(harness.path())) {
            const fs::path file = version.path() / "refusals.json";
            if (!fs::exists(file)) continue;
            ++files;
            std::ifstream in(file);
            const auto doc = nlohmann::json::parse(in);
            const std::string where = file.lexically_relative(root).string();
            const auto bad = texts(doc, "bad_arguments");
            const auto denied = texts(doc, "not_permitted");
            EXPECT_FALSE(bad.empty()) << where;
            for (const auto& text : bad) {
                EXPECT_TRUE(refused_for_arguments(text, refusals)) << where << ": " << text;
            }
            for (const auto& text : denied) {
                EXPECT_FALSE(refused_for_arguments(text, refusals)) << where << ": " << text;
                EXPECT_TRUE(refused_for_permission(text, refusals)) << where << ": " << text;
            }
            // No pattern stands without evidence: each matches a captured text of its kind (the
            // fixture harnesses' own texts, which reasonix's adapter also lists, are theirs).
            const auto fixture = adapters::convention::refusal_texts();
            const auto ours = [](const std::vector<std::string>& fixture_texts,
                                 const std::string& pattern) {
                return std::find(fixture_texts.begin(), fixture_texts.end(), pattern) ==
                       fixture_texts.end();
            };
            for (const auto& pattern : refusals.bad_arguments) {
                if (!ours(fixture.bad_arguments, pattern)) continue;
                const adapters::RefusalTexts one{{pattern}, {}};
                EXPECT_TRUE(std::any_of(
                    bad.begin(), bad.end(),
                    [&](const std::string& t) { return refused_for_arguments(t, one); }))
                    << where << ": nothing captured reads \"" << pattern << "\"";
            }
            for (const auto& pattern : refusals.not_permitted) {
                if (!ours(fixture.not_permitted, pattern)) continue;
                const adapters::RefusalTexts one{{}, {pattern}};
                EXPECT_TRUE(std::any_of(
                    denied.begin(), denied.end(),
                    [&](const std::string& t) { return refused_for_permission(t, one); }))
                    << where << ": nothing captured reads \"" << pattern << "\"";
            }
        }
    }
    EXPECT_EQ(files, 10U) << "one refusals.json per pinned harness";
}

} // namespace
} // namespace sonata::probes
