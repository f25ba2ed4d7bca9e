// Defaults shared by every adapter.
#include "adapters/adapter.hpp"

#include <cctype>
#include <regex>
#include <vector>

#include "core/text.hpp"

namespace sonata::adapters {

std::string_view to_string(WireProtocol protocol) {
    switch (protocol) {
    case WireProtocol::anthropic_messages: return "anthropic-messages";
    case WireProtocol::openai_responses: return "openai-responses";
    case WireProtocol::openai_chat: return "openai-chat";
    case WireProtocol::gemini: return "gemini";
    case WireProtocol::unknown: return "unknown";
    }
    return "unknown";
}

std::vector<std::string> usual_install_dirs(std::vector<std::string> first) {
    first.insert(first.end(), {"~/.local/bin", "~/.npm-global/bin", "/usr/local/bin", "~/bin"});
    return first;
}

bool version_within(std::string_view version, const VersionRange& range) {
    const auto v = version_numbers(version);
    const auto lo = version_numbers(range.lowest);
    const auto hi = version_numbers(range.highest);
    if (v.empty() || lo.empty() || hi.empty()) return false;
    return !(v < lo) && !(hi < v);
}

std::string Adapter::parse_version(std::string_view output) const {
    static const std::regex k_version(R"((\d+)\.(\d+)\.(\d+)([-+.][0-9A-Za-z.-]+)?)");
    std::match_results<std::string_view::const_iterator> match;
    if (std::regex_search(output.begin(), output.end(), match, k_version)) return match.str(0);
    return {};
}

Result<EndpointInjection> Adapter::inject_endpoint(const Invocation& /*invocation*/,
                                                   const EndpointSpec& /*endpoint*/) const {
    return fail(ExitCode::failure,
                "harness '" + std::string(id()) +
                    "' has no known wire protocol; it cannot be probed hermetically");
}

Refusal refuse(std::string reason, std::vector<std::string> alternatives) {
    return Refusal{std::move(reason), std::move(alternatives)};
}

} // namespace sonata::adapters
