// The answer to "what exactly does sonata run, or why does it refuse?": an Invocation or a Refusal.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/enum_names.hpp"
#include "core/mode.hpp"

namespace sonata {

/// How the task text reaches the harness.
enum class PromptChannel {
    argument,   ///< Appended as the last argv element (after a `--` where the adapter put one).
    stdin_pipe, ///< Written to the child's stdin, which is then closed.
    tmux_keys,  ///< Typed into the TUI with `tmux send-keys -l` once it is ready.
};

/// Where the run's report comes from.
enum class ReportSource {
    stdout_text,       ///< The harness's final message on stdout.
    structured_stdout, ///< A JSON/JSONL stream on stdout, parsed by the adapter.
    output_file,       ///< A file the harness writes itself (e.g. codex `-o`).
    pane_text,         ///< The tmux pane's text; the report is degraded.
};

/// Every report source with its spelling (plan.json's `report`).
inline constexpr EnumNames<ReportSource, 4> k_report_sources{{
    {"stdout", ReportSource::stdout_text},
    {"structured-stdout", ReportSource::structured_stdout},
    {"output-file", ReportSource::output_file},
    {"pane", ReportSource::pane_text},
}};

std::string_view to_string(PromptChannel channel);
std::string_view to_string(ReportSource source);

/// A fully decided run. argv[0] is the executable name or path; nothing passes through a shell.
struct Invocation {
    std::vector<std::string> argv;
    std::map<std::string, std::string> env; ///< Set in the child's environment.
    std::vector<std::string> env_unset;     ///< Removed from the child's environment.
    /// A directory put first on the child's PATH: the runtime the harness needs (a newer Node.js
    /// than PATH's, from sonata's harness cache); empty for none.
    std::string path_first;
    std::string cwd; ///< Empty: the caller's working directory.
    PromptChannel prompt = PromptChannel::argument;
    bool interactive = false; ///< true: TUI in tmux on sonata's own socket; false: headless.
    ReportSource report = ReportSource::stdout_text;
    std::vector<std::string> relies_on; ///< Probe ids of the properties this mapping needs.
    std::vector<std::string> notes;     ///< Human remarks (e.g. "actions are refused, not asked").

    bool operator==(const Invocation&) const = default;
};

/// A decision not to run, with why and what would work instead.
struct Refusal {
    std::string reason;
    std::vector<std::string> alternatives; ///< Never empty.

    bool operator==(const Refusal&) const = default;
};

/// What `sonata plan` prints.
struct Decision {
    std::string harness; ///< Harness id, e.g. "codex" or "pi-review".
    std::string version; ///< Detected (or assumed) harness version; empty when unknown.
    Mode parent_mode = Mode::default_mode;
    Mode effective_mode = Mode::default_mode;
    Role role;
    std::variant<Invocation, Refusal> outcome;
    std::vector<std::string> warnings;

    bool runs() const { return std::holds_alternative<Invocation>(outcome); }
    const Invocation& invocation() const { return std::get<Invocation>(outcome); }
    const Refusal& refusal() const { return std::get<Refusal>(outcome); }
};

} // namespace sonata
