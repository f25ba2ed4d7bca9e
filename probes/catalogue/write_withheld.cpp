// write-withheld: in a read-only mapping, a file-write tool call changes nothing on disk.
#include "probes/probe.hpp"

namespace sonata::probes {
namespace {

class WriteWithheld final : public Probe {
public:
    std::string_view id() const override { return probe_id::write_withheld; }
    std::string_view property() const override {
        return "In a read-only mapping, a file-write tool call changes nothing on disk.";
    }
    Script script(const ProbeSetup&, const adapters::Adapter& adapter) const override {
        Script s;
        s.main.steps = {write_intent("probe-written.txt"),
                        write_intent("notes/canary.txt", "overwritten\n")};
        // Then every other door the harness has for a write, offered or not.
        for (const auto& door : adapter.tools().write_doors) {
            Intent call;
            call.kind = IntentKind::call_tool;
            call.tool = door.tool;
            call.args_json = door.args_json;
            s.main.steps.push_back(call);
        }
        return s;
    }
    Judgement judge(const Observation& o) const override {
        if (o.adapter != nullptr) {
            for (const auto& door : o.adapter->tools().write_doors) {
                const std::string under = "work/" + door.writes;
                for (const auto& line : o.changes) {
                    const auto path = line.substr(line.find(' ') + 1);
                    if (path == under || path.rfind(under + "/", 0) == 0)
                        return {Verdict::violated, path +
                                                       " changed although the mapping forbids "
                                                       "it (through " +
                                                       door.tool + ")"};
                }
            }
        }
        return judge_unchanged(o, {"work/probe-written.txt", "work/notes/canary.txt"}, 0);
    }
};

} // namespace

std::unique_ptr<Probe> make_write_withheld() { return std::make_unique<WriteWithheld>(); }

} // namespace sonata::probes
