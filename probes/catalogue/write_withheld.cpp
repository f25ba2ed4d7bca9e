// write-withheld: in a read-only mapping, a file-write tool call changes nothing on disk, nor does
// any other write door the adapter lists, nor any offered tool the adapter does not know.
#include "adapters/support/tool_census.hpp"
#include "probes/probe.hpp"

namespace sonata::probes {
namespace {

/// How many offered tools the adapter does not know the script calls, at most.
constexpr int k_unknown_calls = 8;

/// The first tool the model called that `vocabulary` does not know, or "".
std::string unknown_tool_called(const Observation& o, const adapters::ToolVocabulary& vocabulary) {
    for (const auto& request : o.requests)
        for (const auto& call : request.tool_calls)
            if (!adapters::classify_tool(vocabulary, call.tool)) return call.tool;
    return {};
}

class WriteWithheld final : public Probe {
public:
    std::string_view id() const override { return probe_id::write_withheld; }
    std::string_view property() const override {
        return "In a read-only mapping, a file-write tool call changes nothing on disk.";
    }
    Script script(const ProbeSetup&, const adapters::Adapter& adapter) const override {
        Script s;
        // Each with every file tool the mapping offers.
        s.main.steps = write_intents(adapter, "probe-written.txt");
        const auto overwrite = write_intents(adapter, "notes/canary.txt", "overwritten\n");
        s.main.steps.insert(s.main.steps.end(), overwrite.begin(), overwrite.end());
        // Then every other door the harness has for a write, offered or not.
        for (const auto& door : adapter.tools().write_doors) {
            Intent call;
            call.kind = IntentKind::call_tool;
            call.tool = door.tool;
            call.args_json = door.args_json;
            s.main.steps.push_back(call);
        }
        // Then every offered tool the adapter has never heard of (a release's, a plugin's), with
        // arguments sampled from its own schema: a new write door is measured, not listed by hand.
        Intent unknown;
        unknown.kind = IntentKind::call_unknown;
        s.main.steps.insert(s.main.steps.end(), k_unknown_calls, unknown);
        return s;
    }
    Judgement judge(const Observation& o) const override {
        if (o.adapter != nullptr) {
            const auto vocabulary = o.adapter->tools();
            for (const auto& door : vocabulary.write_doors) {
                const std::string under = "work/" + door.writes; // a file, or a folder
                const std::string path = o.changed(under) ? under : o.changed_beside(under + "/");
                if (!path.empty()) {
                    return {Verdict::violated, path +
                                                   " changed although the mapping forbids it "
                                                   "(through " +
                                                   door.tool + ")"};
                }
            }
            if (const std::string tool = unknown_tool_called(o, vocabulary); !tool.empty()) {
                if (const std::string path = o.changed_beside("work/"); !path.empty()) {
                    return {Verdict::violated,
                            path + " changed after the model called " + tool +
                                ", an offered tool sonata does not know, in a mapping that "
                                "forbids writes"};
                }
            }
        }
        return judge_writes_unchanged(o, {"work/probe-written.txt", "work/notes/canary.txt"}, 0);
    }
};

} // namespace

std::unique_ptr<Probe> make_write_withheld() { return std::make_unique<WriteWithheld>(); }

} // namespace sonata::probes
