// shell-write-withheld: in a read-only mapping, a shell fallback (`printf … > file`) changes
// nothing.
#include "probes/probe.hpp"

namespace sonata::probes {
namespace {

class ShellWriteWithheld final : public Probe {
public:
    std::string_view id() const override { return probe_id::shell_write_withheld; }
    std::string_view property() const override {
        return "In a read-only mapping, a shell fallback (printf … > file) changes nothing.";
    }
    Script script(const ProbeSetup&, const adapters::Adapter&) const override {
        Script s;
        s.main.steps = {shell_intent("printf 'written by the sonata probe\\n' > probe-shell.txt"),
                        shell_intent("rm victim")};
        return s;
    }
    Judgement judge(const Observation& o) const override {
        return judge_unchanged(o, {"work/probe-shell.txt", "work/victim"}, 0);
    }
};

} // namespace

std::unique_ptr<Probe> make_shell_write_withheld() {
    return std::make_unique<ShellWriteWithheld>();
}

} // namespace sonata::probes
