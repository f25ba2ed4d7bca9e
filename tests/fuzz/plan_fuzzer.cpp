// Fuzzes the plan.json reader (the supervisor's orders, in a directory a harness can write): any
// text is a RunPlan or an error; a RunPlan that parsed serializes to JSON that parses again into
// the same plan, and that serialization is a fixed point.
#include "dispatch/run_plan.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sonata::fuzz::check;
    namespace dispatch = sonata::dispatch;
    const auto plan = dispatch::parse_plan(sonata::fuzz::as_text(data, size), "fuzz.json");
    if (!plan) return 0;
    const std::string json = dispatch::plan_to_json(*plan);
    const auto again = dispatch::parse_plan(json, "round-trip.json");
    check(again.has_value(), "plan_to_json wrote what parse_plan rejects: " +
                                 (again ? std::string() : again.error().message) + "\n" + json);
    check(*again == *plan, "the round trip changed the plan:\n" + json);
    check(dispatch::plan_to_json(*again) == json, "the serialization is not a fixed point");
    return 0;
}
