// Named pi profiles (`pi-<label>`, any kebab-case label), checked against pi 1.6.0: the
// same `pi` executable with curated tool lists — read-only for plan, edit and write added for
// acceptEdits, and the shell only for bypassPermissions.
#include "adapters/support/pi_family.hpp"
#include "core/text.hpp"

namespace sonata::adapters {
namespace {

constexpr std::string_view k_prefix = "pi-";

/// Read-only for plan (and default, which is refused), edit and write added for acceptEdits, and
/// the shell only for bypassPermissions.
const std::array<PiToolList, 4> k_tool_lists{{{k_pi_read_tools, false},
                                              {k_pi_read_tools, false},
                                              {std::string(k_pi_read_tools) + ",edit,write", false},
                                              {"read,bash,edit,write", true}}};

class PiProfile final : public PiFamily {
public:
    /// "pi-<label>", the display form: the id every label shares in listings and the registry.
    PiProfile() : PiFamily("pi-<label>", {k_tool_lists, Mode::accept_edits}) {}

    bool matches(std::string_view harness_id) const override {
        return harness_id.substr(0, k_prefix.size()) == k_prefix &&
               is_kebab_name(harness_id.substr(k_prefix.size()));
    }
};

} // namespace

std::unique_ptr<Adapter> make_pi_profile() { return std::make_unique<PiProfile>(); }

} // namespace sonata::adapters
