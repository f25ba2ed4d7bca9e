// plan.json, the supervisor's orders: every field reads back as written, and a file someone edited
// is bad data naming the field (its type, or what its type cannot say: a command, an absolute
// path, a bound).
#include <gtest/gtest.h>

#include "dispatch/run_plan.hpp"

namespace sonata::dispatch {
namespace run_plan_test {

RunPlan every_field_set() {
    RunPlan plan;
    plan.harness = "reasonix";
    plan.cwd = "/work/p";
    Invocation& inv = plan.invocation;
    inv.argv = {"reasonix", "--permission-mode", "ask"};
    inv.env = {{"A", "1"}, {"B", "two words"}};
    inv.env_unset = {"C"};
    inv.path_first = "/opt/node/bin";
    inv.prompt = PromptChannel::stdin_pipe;
    inv.report = ReportSource::structured_stdout;
    plan.limits = {std::chrono::seconds(61), std::chrono::seconds(62), 1024, 3, "/s/reasonix",
                   std::chrono::seconds(7)};
    return plan;
}

TEST(RunPlan, EveryFieldReadsBackAsItWasWritten) {
    const RunPlan written = every_field_set();
    const auto read = parse_plan(plan_to_json(written), "plan.json");
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(*read, written);
    RunPlan tui = written;
    tui.invocation.interactive = true;
    tui.invocation.prompt = PromptChannel::tmux_keys;
    EXPECT_EQ(parse_plan(plan_to_json(tui), "plan.json").value(), tui);
}

TEST(RunPlan, AnEditedFileIsBadDataNamingTheField) {
    const std::string good = plan_to_json(every_field_set());
    const auto edited = [&](const std::string& from, const std::string& to) {
        std::string text = good;
        const auto at = text.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        return parse_plan(text.replace(at, from.size(), to), "plan.json");
    };
    for (const auto& [from, to, says] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"\"timeout_s\": 61", "\"timeout_s\": \"61\"", "'timeout_s' is not an integer"},
             {"\"timeout_s\": 61", "\"timeout_s\": -1", "'timeout_s' is out of range"},
             {"\"log_cap\": 1024", "\"log_cap\": 2199023255553", "'log_cap' is out of range"},
             {"\"cwd\": \"/work/p\"", "\"cwd\": \"work/p\"", "'cwd' is not an absolute path"},
             {"\"path_first\": \"/opt/node/bin\"", "\"path_first\": \"bin\"",
              "'path_first' is not an absolute path"},
             {"\"report\": \"structured-stdout\"", "\"report\": \"mail\"",
              "'report' is not a report source"},
             {"\"harness\": \"reasonix\"", "\"harnesses\": \"reasonix\"", "'harness' is missing"},
             {"\"A\": \"1\"", "\"A\": 1", "'env' is not an object of strings"}}) {
        const auto read = edited(from, to);
        ASSERT_FALSE(read) << to;
        EXPECT_EQ(read.error().code, ExitCode::bad_data);
        EXPECT_NE(read.error().message.find(says), std::string::npos) << read.error().message;
        EXPECT_EQ(read.error().message.rfind("plan.json: not a run plan (", 0), 0U);
    }
}

} // namespace run_plan_test
} // namespace sonata::dispatch
