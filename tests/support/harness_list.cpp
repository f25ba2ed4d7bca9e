// listed_harness: one harness out of `sonata harnesses --json`.
#include "tests/support/harness_list.hpp"

#include <gtest/gtest.h>

#include "tests/support/sonata_run.hpp"

namespace sonata::testing {

nlohmann::json listed_harness(const std::string& id, const Environment& env,
                              const std::string& cwd) {
    const auto run = run_sonata({"harnesses", "--json"}, env, cwd);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    for (const auto& h : nlohmann::json::parse(run.out)) {
        if (h.at("id") == id) return h;
    }
    ADD_FAILURE() << "no " << id << " in " << run.out;
    return nlohmann::json::object();
}

} // namespace sonata::testing
