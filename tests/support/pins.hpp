// The real harness CLIs the conformance tier runs against (tests/conformance/harnesses.json).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sonata::testing {

/// One pinned harness: its id, exact version and binary name.
struct Pin {
    std::string id;
    std::string version;
    std::string binary;
};

/// "id version", so parametrized tests read as the pin they run.
void PrintTo(const Pin& pin, std::ostream* os);

/// Every pin of tests/conformance/harnesses.json, in its order.
std::vector<Pin> pins();

/// Why a pinned harness that is not installed may be skipped, or empty when it must fail the test:
/// scripts/setup.sh sets SONATA_REQUIRE_HARNESSES=1 when the npm registry answered (so a pin it
/// could not install is an error), and SONATA_HARNESSES_SKIP_REASON when it did not.
std::string missing_harness_skip_reason();

} // namespace sonata::testing
