// The real harness CLIs the conformance tier runs against (tests/conformance/harnesses.json).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sonata::testing {

/// One pinned harness: its id, exact version and binary name.
struct Pin {
    std::string id;
    std::string version;
    std::string binary;
    /// The pin's name in test names: its id, or with its major version ("opencode_v2") where the
    /// id has a pin per line.
    std::string label = {};
};

/// "id version", so parametrized tests read as the pin they run.
void PrintTo(const Pin& pin, std::ostream* os);

/// Every pin of tests/conformance/harnesses.json, in its order.
std::vector<Pin> pins();

/// The pins of harness `id`, in manifest order (one per line it supports).
std::vector<Pin> pins_of(const std::string& id);

/// The parametrized tests' name for a pin: its label.
std::string pin_name(const ::testing::TestParamInfo<Pin>& info);

/// Why a pinned harness that is not installed may be skipped, or empty when it must fail the test:
/// scripts/setup.sh sets SONATA_REQUIRE_HARNESSES=1 when the npm registry answered (so a pin it
/// could not install is an error), and SONATA_HARNESSES_SKIP_REASON when it did not.
std::string missing_harness_skip_reason();

} // namespace sonata::testing
