// Named pi profiles (`pi-<label>`, any kebab-case label), checked against pi 1.6.0: the
// same `pi` executable with curated tool lists — read-only for plan, edit and write added for
// acceptEdits, and the shell only for bypassPermissions.
#include "adapters/support/pi_family.hpp"
#include "core/text.hpp"

namespace sonata::adapters {
namespace {

constexpr std::string_view k_prefix = "pi-";

class PiProfile final : public PiFamily {
public:
    /// The display form: the id every label shares in listings and the registry.
    std::string_view id() const override { return "pi-<label>"; }

    bool matches(std::string_view harness_id) const override {
        return harness_id.substr(0, k_prefix.size()) == k_prefix &&
               is_kebab_name(harness_id.substr(k_prefix.size()));
    }

protected:
    ToolList tool_list(Mode mode) const override {
        switch (mode) {
        case Mode::plan:
        case Mode::default_mode: return {k_pi_read_tools, false};
        case Mode::accept_edits: return {std::string(k_pi_read_tools) + ",edit,write", false};
        case Mode::bypass_permissions: return {"read,bash,edit,write", true};
        }
        return {k_pi_read_tools, false};
    }

    std::optional<Mode> no_bypass_fallback() const override { return Mode::accept_edits; }
};

} // namespace

std::unique_ptr<Adapter> make_pi_profile() { return std::make_unique<PiProfile>(); }

} // namespace sonata::adapters
