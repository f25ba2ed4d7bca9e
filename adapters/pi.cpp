// pi (`pi`, npm @earendil-works/pi-coding-agent; until 0.73.1 @mariozechner/pi-coding-agent),
// checked against 1.6.0: a real tool allowlist (`--tools`), but no approval system and
// no sandbox: default is refused, and acceptEdits and bypassPermissions both get every built-in
// tool.
#include "adapters/support/pi_family.hpp"

namespace sonata::adapters {
namespace {

class Pi final : public PiFamily {
public:
    std::string_view id() const override { return "pi"; }

protected:
    ToolList tool_list(Mode mode) const override {
        if (mode == Mode::plan) return {k_pi_read_tools, false};
        // Named rather than left to pi's default set, so a tool a later pi enables by default
        // is not granted unseen.
        return {"read,bash,edit,write,grep,find,ls", true};
    }

    std::optional<Mode> no_bypass_fallback() const override { return std::nullopt; }
};

} // namespace

std::unique_ptr<Adapter> make_pi() { return std::make_unique<Pi>(); }

} // namespace sonata::adapters
