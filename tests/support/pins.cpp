// Reading the pin manifest.
#include "tests/support/pins.hpp"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "tests/support/sonata_run.hpp"

namespace sonata::testing {

void PrintTo(const Pin& pin, std::ostream* os) { *os << pin.id << " " << pin.version; }

std::vector<Pin> pins() {
    const auto doc = nlohmann::json::parse(
        read_text(std::string(SONATA_SOURCE_DIR) + "/tests/conformance/harnesses.json"));
    std::vector<Pin> out;
    for (const auto& h : doc.at("harnesses"))
        out.push_back({h.at("id"), h.at("version"), h.at("binary")});
    return out;
}

std::string missing_harness_skip_reason() {
    const char* required = std::getenv("SONATA_REQUIRE_HARNESSES");
    if (required != nullptr && std::string(required) == "1") return {};
    const char* reason = std::getenv("SONATA_HARNESSES_SKIP_REASON");
    return reason != nullptr && *reason != '\0'
               ? std::string(reason)
               : std::string("scripts/install-harnesses installs the pins");
}

} // namespace sonata::testing
