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

} // namespace sonata::testing
