// Names of the decision enums, as they appear in `sonata plan --json`.
#include "core/decision.hpp"

namespace sonata {

namespace {

constexpr EnumNames<PromptChannel, 3> k_prompt_channels{{
    {"argument", PromptChannel::argument},
    {"stdin", PromptChannel::stdin_pipe},
    {"tmux-keys", PromptChannel::tmux_keys},
}};

} // namespace

std::string_view to_string(PromptChannel channel) {
    return name_of(k_prompt_channels, channel, "argument");
}

std::string_view to_string(ReportSource source) {
    return name_of(k_report_sources, source, "stdout");
}

} // namespace sonata
