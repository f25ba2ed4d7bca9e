// tool-census: every tool a mapping offers the model is one sonata knows, and a read-only mapping
// offers no tool that writes, runs commands, delegates, switches modes or reaches MCP servers,
// except those the adapter declares refused at call time (which the probe that calls each
// measures).
#include "adapters/support/tool_census.hpp"

#include <algorithm>
#include <map>

#include "core/text.hpp"
#include "probes/probe.hpp"

namespace sonata::probes {
namespace {

/// The classes a read-only mapping must not offer unless they are refused at call time.
bool can_write(adapters::ToolClass what) {
    return what != adapters::ToolClass::read_only && what != adapters::ToolClass::other;
}

/// Every tool offered in the run's conversation turns, once each, in the order first offered.
std::vector<std::string> offered_tools(const Observation& o) {
    std::vector<std::string> offered;
    for (const auto& request : o.requests) {
        if (request.kind != "turn") continue;
        for (const auto& tool : request.tools_offered)
            if (std::find(offered.begin(), offered.end(), tool) == offered.end())
                offered.push_back(tool);
    }
    return offered;
}

/// "3 read-only, 1 other": how many tools of each class.
std::string class_counts(const std::map<adapters::ToolClass, int>& counts) {
    std::vector<std::string> parts;
    for (const auto& [what, n] : counts)
        parts.push_back(std::to_string(n) + " " + std::string(adapters::to_string(what)));
    return join(parts, ", ");
}

class ToolCensus final : public Probe {
public:
    std::string_view id() const override { return probe_id::tool_census; }
    std::string_view property() const override {
        return "Every tool the mapping offers the model is known to sonata, and a read-only "
               "mapping offers none that writes, runs commands, delegates, switches modes or "
               "reaches MCP servers unless the harness refuses it when called.";
    }
    bool always_run(const Invocation&, Mode) const override { return true; }
    Script script(const ProbeSetup&, const adapters::Adapter&) const override {
        Script s; // no call: the census reads what the harness offers in its first turn
        s.main.final_text = "census taken";
        return s;
    }
    Judgement judge(const Observation& o) const override {
        const auto offered = offered_tools(o);
        if (offered.empty()) {
            if (!o.started || o.model_requests() == 0) return *not_reached(o, 0);
            return {Verdict::inconclusive,
                    "the harness offered the model no tool in any conversation turn: nothing to "
                    "take a census of"};
        }
        const auto& vocabulary = o.adapter->tools();
        const bool read_only = o.setup.mode == Mode::plan;
        std::vector<std::string> unknown;
        std::vector<std::string> holes;
        std::vector<std::string> guarded;
        std::map<adapters::ToolClass, int> counts;
        for (const auto& tool : offered) {
            const auto what = adapters::classify_tool(vocabulary, tool);
            if (!what) {
                unknown.push_back(tool);
                continue;
            }
            ++counts[*what];
            if (!read_only || !can_write(*what)) continue;
            const std::string named = tool + " (" + std::string(adapters::to_string(*what)) + ")";
            const auto& refused = vocabulary.read_only_guarded;
            (std::find(refused.begin(), refused.end(), *what) != refused.end() ? guarded : holes)
                .push_back(named);
        }
        if (!holes.empty()) {
            return {Verdict::violated, "the read-only mapping offers " + join(holes, ", ") +
                                           ", which the harness is not known to refuse when "
                                           "called"};
        }
        if (!unknown.empty()) {
            return {Verdict::inconclusive,
                    "offers " + std::to_string(unknown.size()) +
                        " tool(s) sonata has never heard of, so what they can do is not "
                        "measured: " +
                        join(unknown, ", ")};
        }
        return {Verdict::enforced, "all " + std::to_string(offered.size()) +
                                       " tools offered are known (" + class_counts(counts) + ")" +
                                       (guarded.empty() ? ""
                                                        : "; offered and refused when called: " +
                                                              join(guarded, ", "))};
    }
};

} // namespace

std::unique_ptr<Probe> make_tool_census() { return std::make_unique<ToolCensus>(); }

} // namespace sonata::probes
