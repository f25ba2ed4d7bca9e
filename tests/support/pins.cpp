// Reading the pin manifest.
#include "tests/support/pins.hpp"

#include <cstdlib>
#include <map>

#include <nlohmann/json.hpp>

#include "tests/support/sonata_run.hpp"

namespace sonata::testing {

void PrintTo(const Pin& pin, std::ostream* os) { *os << pin.id << " " << pin.version; }

std::vector<Pin> pins() {
    const auto doc = nlohmann::json::parse(
        read_text(std::string(SONATA_SOURCE_DIR) + "/tests/conformance/harnesses.json"));
    std::vector<Pin> out;
    std::map<std::string, int> lines;
    for (const auto& h : doc.at("harnesses")) {
        out.push_back({h.at("id"), h.at("version"), h.at("binary")});
        ++lines[out.back().id];
    }
    for (auto& pin : out) {
        pin.label = pin.id;
        if (lines[pin.id] > 1) pin.label += "_v" + pin.version.substr(0, pin.version.find('.'));
    }
    return out;
}

std::vector<Pin> pins_of(const std::string& id) {
    std::vector<Pin> out;
    for (auto& pin : pins()) {
        if (pin.id == id) out.push_back(std::move(pin));
    }
    return out;
}

std::string pin_name(const ::testing::TestParamInfo<Pin>& info) { return info.param.label; }

std::string missing_harness_skip_reason() {
    const char* required = std::getenv("SONATA_REQUIRE_HARNESSES");
    if (required != nullptr && std::string(required) == "1") return {};
    const char* reason = std::getenv("SONATA_HARNESSES_SKIP_REASON");
    return reason != nullptr && *reason != '\0'
               ? std::string(reason)
               : std::string("scripts/install-harnesses installs the pins");
}

} // namespace sonata::testing
