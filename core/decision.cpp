// Names of the decision enums, as they appear in `sonata plan --json`.
#include "core/decision.hpp"

namespace sonata {

std::string_view to_string(PromptChannel channel) {
    switch (channel) {
    case PromptChannel::argument: return "argument";
    case PromptChannel::stdin_pipe: return "stdin";
    case PromptChannel::tmux_keys: return "tmux-keys";
    }
    return "argument";
}

std::string_view to_string(ReportSource source) {
    switch (source) {
    case ReportSource::stdout_text: return "stdout";
    case ReportSource::structured_stdout: return "structured-stdout";
    case ReportSource::output_file: return "output-file";
    case ReportSource::pane_text: return "pane";
    }
    return "stdout";
}

} // namespace sonata
