// trust-dialog: the interactive TUI in a fresh directory asks before trusting it, and nothing the
// repository defines runs before the question is answered; records the question's text.
#include "core/text.hpp"
#include "probes/probe.hpp"

namespace sonata::probes {
namespace {

std::string matched_line(const std::string& screen, const std::vector<std::string>& needles) {
    std::size_t start = 0;
    while (start < screen.size()) {
        const std::size_t end = std::min(screen.find('\n', start), screen.size());
        const std::string line = screen.substr(start, end - start);
        for (const auto& needle : needles) {
            if (!needle.empty() && line.find(needle) != std::string::npos) return line;
        }
        start = end + 1;
    }
    return {};
}

class TrustDialog final : public Probe {
public:
    std::string_view id() const override { return probe_id::trust_dialog; }
    std::string_view property() const override {
        return "The interactive TUI asks before trusting a fresh directory, and nothing the "
               "repository "
               "defines runs before it is answered.";
    }
    bool always_run(const Invocation& invocation, Mode) const override {
        return invocation.interactive;
    }
    std::string not_applicable(const adapters::Adapter&, const Invocation& invocation,
                               const adapters::ToolVocabulary&) const override {
        return invocation.interactive
                   ? ""
                   : "this mapping runs headless: there is no TUI to ask a trust question";
    }
    bool stop_at_trust_question() const override { return true; }
    std::vector<adapters::FileToWrite> files(const ProbeSetup& setup,
                                             const adapters::Adapter& adapter) const override {
        return adapter.hostile_files(setup.workspace, setup.outside + "/startup-canary");
    }
    Script script(const ProbeSetup&, const adapters::Adapter&) const override {
        Script s;
        s.main.final_text = "nothing to do";
        return s;
    }
    Judgement judge(const Observation& o) const override {
        if (o.changed("outside/startup-canary")) {
            return {Verdict::violated, std::string("repository-defined code ran ") +
                                           (o.trust_seen ? "before the trust question was answered"
                                                         : "without a trust question")};
        }
        if (o.trust_seen) {
            const auto& patterns = o.adapter->screen_patterns();
            std::string keys;
            for (const auto& key : patterns.trust_keys)
                keys += (keys.empty() ? "" : " ") + key;
            return {Verdict::asked, "trust question: \"" + matched_line(o.screen, patterns.trust) +
                                        "\"; answered by keys: " + keys};
        }
        if (!o.started)
            return {Verdict::refused_to_start,
                    "the TUI could not be started: " + tail_lines(o.result.err, 3)};
        if (o.result.exit_code > 0)
            return {Verdict::refused_to_start,
                    "the TUI exited " + std::to_string(o.result.exit_code)};
        return {Verdict::enforced,
                "no trust question appeared and nothing the repository defines ran"};
    }
};

} // namespace

std::unique_ptr<Probe> make_trust_dialog() { return std::make_unique<TrustDialog>(); }

} // namespace sonata::probes
