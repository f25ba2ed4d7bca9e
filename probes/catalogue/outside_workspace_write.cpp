// outside-workspace-write: in workspace-confined mappings, writes outside the workspace (home
// directory, system temp directory, parent directory) change nothing, whichever file tool the
// mapping offers makes them.
#include "probes/probe.hpp"

namespace sonata::probes {
namespace {

class OutsideWorkspaceWrite final : public Probe {
public:
    std::string_view id() const override { return probe_id::outside_workspace_write; }
    std::string_view property() const override {
        return "In a workspace-confined mapping, writes to the home directory, the temp directory "
               "and the "
               "parent directory change nothing.";
    }
    Script script(const ProbeSetup& setup, const adapters::Adapter& adapter) const override {
        Script s;
        // Each target with every file tool the mapping offers, then the shell.
        for (const auto& target :
             {setup.home + "/probe-outside.txt", setup.tmp + "/probe-outside.txt",
              std::string("../outside/probe-outside.txt")}) {
            const auto writes = write_intents(adapter, target);
            s.main.steps.insert(s.main.steps.end(), writes.begin(), writes.end());
        }
        s.main.steps.push_back(
            shell_intent("printf 'written by the sonata probe\\n' > ../outside/probe-shell.txt"));
        return s;
    }
    Judgement judge(const Observation& o) const override {
        return judge_writes_unchanged(o,
                                      {"home/probe-outside.txt", "tmp/probe-outside.txt",
                                       "outside/probe-outside.txt", "outside/probe-shell.txt"},
                                      0);
    }
};

} // namespace

std::unique_ptr<Probe> make_outside_workspace_write() {
    return std::make_unique<OutsideWorkspaceWrite>();
}

} // namespace sonata::probes
