// The adapters' refusal texts against what the pinned real harnesses told the model
// (fixtures/captured/<harness>/<version>/refusals.json): a call refused for its arguments reads as
// one, a call the harness's permissions refused never does, every text an adapter lists matches
// something its harness really said in one of the captured versions, and every pin has a capture.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "adapters/support/probe_convention.hpp"
#include "probes/script.hpp"
#include "tests/support/pins.hpp"

namespace sonata::probes {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> texts(const nlohmann::json& doc, const char* key) {
    return doc.at(key).get<std::vector<std::string>>();
}

/// Every text one harness's captures hold, over all its versions.
struct Captured {
    std::vector<std::string> bad_arguments;
    std::vector<std::string> not_permitted;
};

/// Checks each captured text of `file` against the adapter's refusals, and adds it to `all`.
void check_file(const fs::path& file, const std::string& where,
                const adapters::RefusalTexts& refusals, Captured& all) {
    std::ifstream in(file);
    const auto doc = nlohmann::json::parse(in);
    for (const auto& text : texts(doc, "bad_arguments")) {
        EXPECT_TRUE(refused_for_arguments(text, refusals)) << where << ": " << text;
        all.bad_arguments.push_back(text);
    }
    for (const auto& text : texts(doc, "not_permitted")) {
        EXPECT_FALSE(refused_for_arguments(text, refusals)) << where << ": " << text;
        EXPECT_TRUE(refused_for_permission(text, refusals)) << where << ": " << text;
        all.not_permitted.push_back(text);
    }
}

/// No pattern stands without evidence: each matches a text of its kind that some captured version
/// of the harness said (the fixture harnesses' own texts, which reasonix's adapter also lists,
/// are theirs).
void check_evidence(const std::string& harness, const adapters::RefusalTexts& refusals,
                    const Captured& all) {
    EXPECT_FALSE(all.bad_arguments.empty()) << harness;
    const auto fixture = adapters::convention::refusal_texts();
    const auto ours = [](const std::vector<std::string>& fixture_texts,
                         const std::string& pattern) {
        return std::find(fixture_texts.begin(), fixture_texts.end(), pattern) ==
               fixture_texts.end();
    };
    for (const auto& pattern : refusals.bad_arguments) {
        if (!ours(fixture.bad_arguments, pattern)) continue;
        const adapters::RefusalTexts one{{pattern}, {}};
        EXPECT_TRUE(
            std::any_of(all.bad_arguments.begin(), all.bad_arguments.end(),
                        [&](const std::string& t) { return refused_for_arguments(t, one); }))
            << harness << ": nothing captured reads \"" << pattern << "\"";
    }
    for (const auto& pattern : refusals.not_permitted) {
        if (!ours(fixture.not_permitted, pattern)) continue;
        const adapters::RefusalTexts one{{}, {pattern}};
        EXPECT_TRUE(
            std::any_of(all.not_permitted.begin(), all.not_permitted.end(),
                        [&](const std::string& t) { return refused_for_permission(t, one); }))
            << harness << ": nothing captured reads \"" << pattern << "\"";
    }
}

TEST(CapturedRefusals, EachAdapterTellsBadArgumentsFromPermissions) {
    const fs::path root = fs::path(SONATA_SOURCE_DIR) / "fixtures/captured";
    for (const auto& harness : fs::directory_iterator(root)) {
        if (!harness.is_directory()) continue;
        const std::string id = harness.path().filename().string();
        auto adapter = adapters::find_adapter(id);
        ASSERT_TRUE(adapter) << harness.path();
        const auto refusals = (*adapter)->refusal_texts();
        Captured all;
        for (const auto& version : fs::directory_iterator(harness.path())) {
            const fs::path file = version.path() / "refusals.json";
            if (fs::exists(file))
                check_file(file, file.lexically_relative(root).string(), refusals, all);
        }
        if (!all.bad_arguments.empty() || !all.not_permitted.empty())
            check_evidence(id, refusals, all);
    }
    for (const auto& pin : testing::pins()) {
        EXPECT_TRUE(fs::exists(root / pin.id / pin.version / "refusals.json"))
            << "no refusals captured from the pin " << pin.id << " " << pin.version;
    }
}

} // namespace
} // namespace sonata::probes
