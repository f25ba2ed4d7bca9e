// The real Claude Code as the parent, hermetic: a scratch project and HOME, the scripted model
// server, the pinned claude and the child harnesses (pi, reasonix) pointed at it as a user's own
// config points them at their provider, and sonata installed in one of three ways; claude then
// runs headless (`-p`) or in its TUI inside tmux (tests/support/claude_tui).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"
#include "probes/model_server.hpp"
#include "probes/workspace.hpp"
#include "tests/support/claude_tui.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::testing {

/// How sonata reaches claude.
enum class ParentSetup {
    project_init, ///< `sonata init --yes`: the project's hook and .mcp.json (read alone).
    global_init,  ///< `sonata init --scope global --yes`: the user's settings, every project.
    plugin,       ///< The plugin from this repository's marketplace, as its README installs it.
};

/// What claude is asked: `-p`'s prompt, or typed into the TUI.
inline constexpr const char* k_parent_prompt = "Hand this to another agent.";

/// What follows a TUI session.
enum class NextSession {
    none,    ///< The world is collected and nothing it started may be left running.
    follows, ///< Another session of claude follows in the same world (continue_parent_tui).
};

/// How a TUI parent runs, beyond the script.
struct TuiParent {
    std::string mode = "default";       ///< claude's --permission-mode.
    Environment env = {};               ///< Added to claude's environment.
    std::vector<std::string> args = {}; ///< Added to claude's flags (`--resume ID`).
    /// Typed once the input box waits; empty: nothing is typed, the session waits for `finished`.
    std::string prompt = k_parent_prompt;
    /// When the session is over; empty: once the main conversation got the script's final text.
    std::function<bool(const probes::ModelServer&)> finished = {};
    /// The keys a user presses at a screen while the session goes on (ClaudeTui::respond).
    std::function<std::vector<std::string>(const std::string& screen)> respond = {};
    TuiEnd end = TuiEnd::exit; ///< How the session ends once its turn is over.
    NextSession next = NextSession::none;
};

/// Whether a request of claude's own conversation held `text` (one of the script's "watch").
bool main_saw(const probes::ModelServer& server, const std::string& text);

/// What one parent run left: claude's result and the main conversation's tool results.
struct ParentRun {
    /// TUI: the pane's exit code, and as `out` the screen the finished turn left and what claude
    /// printed on exit.
    SonataRun claude;
    std::vector<probes::ToolResultRecord> results; ///< claude's own conversation only.
    std::string recording;
    Environment env; ///< sonata's environment, for `sonata runs` afterwards.
    std::string workspace;
};

/// A scripted step that calls sonata's dispatch tool (as `sonata init` registers it) with `args`.
nlohmann::json dispatch_call(const nlohmann::json& args);

/// A script whose main conversation takes `steps` and then answers "claude is done", and whose
/// sub-agent `marker` (the child whose task names it) answers `report` at once.
nlohmann::json child_report_script(const nlohmann::json& steps, const std::string& marker,
                                   const std::string& report);

/// Skips (or fails, where setup installed the pins) when claude, pi or reasonix is missing.
class ClaudeParentFixture : public ::testing::Test {
protected:
    using json = nlohmann::json;
    using Setup = ParentSetup;

    void SetUp() override;

    /// Runs the pinned claude headless in `default` mode against `script`, in a scratch project
    /// where sonata is installed as `setup` says, with `allowed` (sonata's MCP tools) allowed.
    /// `vocabulary`: the harness whose tool names the scripted intents resolve to (claude's own
    /// steps name their tools; a child's write or shell intent needs the child's names).
    void run_parent(const json& script, const std::string& allowed, ParentRun& out,
                    Setup setup = Setup::project_init, const std::string& vocabulary = "claude");
    /// The same, with claude's interactive TUI in tmux: the prompt is typed, and once the script's
    /// final answer was served (or `tui.finished` holds) claude is told to /exit. Nothing it
    /// started is left running.
    void run_parent_tui(const json& script, const std::string& allowed, ParentRun& out,
                        Setup setup = Setup::project_init,
                        const std::string& vocabulary = "claude");
    void run_parent_tui(const json& script, const std::string& allowed, ParentRun& out,
                        const TuiParent& tui, Setup setup = Setup::project_init,
                        const std::string& vocabulary = "claude");
    /// Another TUI session in the world the last session (`NextSession::follows`) left: the same
    /// model server, HOME and project, claude's flags and `tui.args`; `tui.mode` is the first's.
    void continue_parent_tui(const TuiParent& tui, ParentRun& out);

    std::string m_path;
    std::string m_claude;
    ScratchDir m_dir;

private:
    /// The world, and sonata installed; m_claude_args hold the mode, `allowed` and the MCP flags.
    void prepare(const json& script, const std::string& allowed, Setup setup,
                 const std::string& vocabulary, const std::string& mode = "default");
    /// The scratch world, the started server, and every harness pointed at it.
    void start_world(const json& script, const std::string& vocabulary);
    /// Installs sonata as `setup` says; adds the MCP flags claude needs to m_claude_args.
    void install_sonata(Setup setup);
    /// The TUI's first-run cards that have a setting: the workspace's folder trust.
    void seed_tui_settings();
    /// One TUI session; after the last, the world is collected into `out` and checked for
    /// anything left running.
    void run_tui_session(const TuiParent& tui, ParentRun& out);
    /// Copies what the server saw so far into `out`.
    void record(ParentRun& out) const;
    /// The same, and stops the server.
    void collect(ParentRun& out);

    std::optional<probes::Scratch> m_scratch;
    std::unique_ptr<probes::ModelServer> m_server;
    Environment m_env;        ///< sonata's and the children's.
    Environment m_claude_env; ///< m_env and claude's endpoint.
    std::vector<std::string> m_claude_args;
    std::string m_final_text;        ///< The script's: a TUI turn is over once it shows.
    std::vector<int> m_tmux_servers; ///< One for each TUI session so far.
};

} // namespace sonata::testing
