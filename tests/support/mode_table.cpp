// Checking one mode-table cell against the planner, and the errors a dispatch may end in.
#include "tests/support/mode_table.hpp"

namespace sonata::testing {

void expect_cell(const TableCell& cell) {
    auto decision = decide_case(cell.plan);
    ASSERT_TRUE(decision) << decision.error().message;
    EXPECT_EQ(decision->effective_mode, cell.effective);
    if (const auto* invocation = std::get_if<Invocation>(&cell.expected)) {
        ASSERT_TRUE(decision->runs()) << show(decision->refusal());
        EXPECT_EQ(decision->invocation(), *invocation) << "got:\n"
                                                       << show(decision->invocation()) << "want:\n"
                                                       << show(*invocation);
    } else {
        const auto& refusal = std::get<Refusal>(cell.expected);
        ASSERT_FALSE(decision->runs()) << show(decision->invocation());
        EXPECT_EQ(decision->refusal(), refusal) << "got:\n"
                                                << show(decision->refusal()) << "want:\n"
                                                << show(refusal);
    }
}

std::string cell_name(const ::testing::TestParamInfo<TableCell>& info) { return info.param.name; }

Error decide_error(const PlanCase& plan_case) {
    auto decision = decide_case(plan_case);
    EXPECT_FALSE(decision) << "decided instead of failing";
    return decision ? Error{} : decision.error();
}

Error extra_args_error(const PlanCase& plan_case, const std::vector<std::string>& extra_args) {
    PlanCase with_args = plan_case;
    with_args.extra_args = extra_args;
    auto decision = decide_case(with_args);
    EXPECT_FALSE(decision) << "decided instead of rejecting the extra arguments";
    return decision ? Error{} : decision.error();
}

std::vector<std::pair<std::string, std::string>>
files_of(const adapters::EndpointInjection& injection) {
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& file : injection.files)
        files.emplace_back(file.path, file.content);
    return files;
}

std::vector<std::string> guarded(std::vector<std::string> relies) {
    relies.emplace_back("protected-path-write");
    return relies;
}

} // namespace sonata::testing
