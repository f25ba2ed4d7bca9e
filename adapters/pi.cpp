// pi (`pi`, npm @earendil-works/pi-coding-agent; until 0.73.1 @mariozechner/pi-coding-agent),
// checked against 1.6.0: a real tool allowlist (`--tools`), but no approval system and
// no sandbox: default is refused, and acceptEdits and bypassPermissions both get every built-in
// tool.
#include "adapters/support/pi_family.hpp"

namespace sonata::adapters {
namespace {

const PiToolList k_read_only{k_pi_read_tools, false};
/// Every built-in tool, named rather than left to pi's default set, so a tool a later pi enables
/// by default is not granted unseen.
const PiToolList k_all_tools{"read,bash,edit,write,grep,find,ls", true};

class Pi final : public PiFamily {
public:
    Pi() : PiFamily("pi", {{k_read_only, k_all_tools, k_all_tools, k_all_tools}, std::nullopt}) {}
};

} // namespace

std::unique_ptr<Adapter> make_pi() { return std::make_unique<Pi>(); }

} // namespace sonata::adapters
