// One cell of an adapter's mode table as a test states it: the dispatch and the whole decision it
// must produce, for parameterised tests whose instances are named by cell.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "adapters/adapter.hpp"
#include "tests/support/plan_helpers.hpp"

namespace sonata::testing {

/// A dispatch and the decision expected for it.
struct TableCell {
    std::string name; ///< Instance name: letters, digits and underscores only.
    PlanCase plan;
    Mode effective = Mode::plan;                ///< The mode after folding and role forcing.
    std::variant<Invocation, Refusal> expected; ///< Compared whole: argv, env, notes, relies…
};

/// `relies` with what an acceptEdits mapping relies on besides its own properties: the parent's
/// guard of the paths Claude Code asks before it writes (protected-path-write), last.
std::vector<std::string> guarded(std::vector<std::string> relies);

/// Decides `cell.plan` and compares the effective mode and the whole outcome with the cell's.
void expect_cell(const TableCell& cell);

/// Names instances by cell, for INSTANTIATE_TEST_SUITE_P.
std::string cell_name(const ::testing::TestParamInfo<TableCell>& info);

/// The error `decide` returns for `plan_case`; fails the test (and returns an empty error) when it
/// decides instead.
Error decide_error(const PlanCase& plan_case);

/// The error `decide` returns when config adds `extra_args` to `plan_case`.
Error extra_args_error(const PlanCase& plan_case, const std::vector<std::string>& extra_args);

/// A file an endpoint injection writes, as a comparable pair (path, content).
std::vector<std::pair<std::string, std::string>>
files_of(const adapters::EndpointInjection& injection);

} // namespace sonata::testing
