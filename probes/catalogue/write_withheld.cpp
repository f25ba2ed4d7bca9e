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
    Script script(const ProbeSetup&, const adapters::Adapter&) const override {
        Script s;
        s.main.steps = {write_intent("probe-written.txt"),
                        write_intent("notes/canary.txt", "overwritten\n")};
        return s;
    }
    Judgement judge(const Observation& o) const override {
        return judge_unchanged(o, {"work/probe-written.txt", "work/notes/canary.txt"}, 0);
    }
};

} // namespace

std::unique_ptr<Probe> make_write_withheld() { return std::make_unique<WriteWithheld>(); }

} // namespace sonata::probes
