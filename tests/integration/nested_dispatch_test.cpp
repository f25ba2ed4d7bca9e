// A sonata started inside a run sonata dispatched (the harness's own `sonata mcp`, or `sonata
// dispatch` through its shell) sees $SONATA_RUN_MODE, which the supervisor sets: nothing it plans
// is wider than that run, whatever --mode or the parent's session file say.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

TEST(NestedDispatch, ARunsModeCapsWhatItDispatches) {
    testing::ScratchDir dir;
    Environment env = testing::hermetic_env(dir);
    const std::string project = dir.make_dir("project");
    const std::vector<std::string> args{
        "plan",   "--harness",         "codex",  "--role", "write", "--mode", "acceptEdits",
        "--json", "--harness-version", "0.171.0"};
    auto free = testing::run_sonata(args, env, project);
    auto doc = nlohmann::json::parse(free.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << free.out << free.err;
    EXPECT_EQ(doc["parent_mode"], "acceptEdits");

    env["SONATA_RUN_MODE"] = "plan";
    env["SONATA_RUN_ID"] = "20261202-000000000-abcdef";
    const auto nested = testing::run_sonata(args, env, project);
    doc = nlohmann::json::parse(nested.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << nested.out << nested.err;
    EXPECT_EQ(doc["parent_mode"], "plan");
    EXPECT_EQ(doc["mode_source"], "run 20261202-000000000-abcdef");
    EXPECT_EQ(doc["warnings"][0], "inside run 20261202-000000000-abcdef (plan): acceptEdits from "
                                  "--mode is capped at the run's mode");
    // An unreadable mode caps at the narrowest.
    env["SONATA_RUN_MODE"] = "yolo";
    doc = nlohmann::json::parse(testing::run_sonata(args, env, project).out, nullptr, false);
    EXPECT_EQ(doc["parent_mode"], "plan");
}

} // namespace
} // namespace sonata
