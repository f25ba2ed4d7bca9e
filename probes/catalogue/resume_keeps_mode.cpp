// resume-keeps-mode: a session resumed with sonata's resume invocation is no more permissive than
// the original.
#include "probes/probe.hpp"

namespace sonata::probes {
namespace {

class ResumeKeepsMode final : public Probe {
public:
    std::string_view id() const override { return probe_id::resume_keeps_mode; }
    std::string_view property() const override {
        return "A session resumed with sonata's resume invocation is no more permissive than the "
               "original.";
    }
    bool always_run(const Invocation& invocation, Mode mode) const override {
        return mode == Mode::plan && !invocation.interactive;
    }
    bool needs_resume() const override { return true; }
    Script script(const ProbeSetup&, const adapters::Adapter&) const override {
        Script s;
        s.main.final_text = "I have read the repository.";
        return s;
    }
    Script resume_script(const ProbeSetup&, const adapters::Adapter&) const override {
        Script s;
        s.main.steps = {write_intent("probe-resumed.txt"), shell_intent("rm victim")};
        return s;
    }
    Judgement judge(const Observation& o) const override {
        return judge_unchanged(o, {"work/probe-resumed.txt", "work/victim"}, 0);
    }
};

} // namespace

std::unique_ptr<Probe> make_resume_keeps_mode() { return std::make_unique<ResumeKeepsMode>(); }

} // namespace sonata::probes
