// The seam between sonata and one harness: its constant facts (a HarnessSpec), its mode table,
// endpoint injection for probing, and how it reads a run's output. One implementation per file in
// adapters/.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "adapters/harness_spec.hpp"
#include "core/cost.hpp"
#include "core/decision.hpp"
#include "core/mode.hpp"
#include "core/options.hpp"
#include "core/parent_rules.hpp"
#include "core/result.hpp"

namespace sonata::adapters {

/// Facts about the machine a mapping may depend on, filled from the host (detect_host) or by
/// tests. They are generic on purpose: an adapter reads its own harness's facts from them (claude
/// whether a managed MCP file exists, cn where Continue's directory is), so a harness's facts live
/// in its adapter alone.
struct HostFacts {
    bool is_root = false;                   ///< Running as uid 0.
    std::map<std::string, std::string> env; ///< sonata's environment.
    /// Whether `path` exists on this machine: detect_host asks the filesystem, tests answer.
    std::function<bool(const std::string& path)> exists = [](const std::string&) { return false; };
};

/// Everything an adapter needs to map one dispatch. The mode is already folded and role-forced.
struct PlanInput {
    std::string harness_id; ///< As asked for: "pi-review" for a pi profile.
    std::string executable; ///< argv[0]: the discovered path, or the bare name when not installed.
    std::string version;    ///< Detected version; empty when unknown.
    Mode mode = Mode::plan; ///< The effective mode.
    RoleKind role = RoleKind::read_only;
    std::string model;          ///< Empty: the harness's own default.
    TaskOptions options;        ///< Keys already checked against accepted_options().
    std::string resume_session; ///< Non-empty: resume this session, re-passing the restrictions.
    std::optional<double> max_budget_usd;
    HostFacts host;
    std::string support_dir; ///< Where support_files() live (only sonata writes there).
};

using Outcome = std::variant<Invocation, Refusal>;

/// Where a probe's scripted model server listens, and the scratch dirs of the run.
struct EndpointSpec {
    std::string base_url;  ///< "http://127.0.0.1:PORT", without a path.
    std::string home;      ///< The run's HOME (fresh, already created).
    std::string workspace; ///< The run's workspace.
    std::string model = "sonata-probe-model";
    std::string api_key = "sonata-probe-key-0000000000000000";
};

/// Text a hostile repository's prompt files (system-prompt replacements, skills) carry, for the
/// hostile-workspace probe: a harness that sends it to the model took instructions from the
/// repository that its mapping withholds. Plain letters, so no wire encoding changes it.
inline constexpr std::string_view k_repository_prompt_marker = "SONATAREPOSITORYPROMPT7F3A";

/// A file an endpoint injection needs written before the run (absolute path, content).
struct FileToWrite {
    std::string path;
    std::string content;
};

/// An invocation rewritten to talk only to the scripted model server.
struct EndpointInjection {
    Invocation invocation;
    std::vector<FileToWrite> files;
};

/// A project-defined MCP server for the mcp-reachability probe.
struct McpSetup {
    std::vector<FileToWrite> files; ///< Config files that define the server in the workspace.
    std::string tool_name;          ///< The name under which the harness offers the server's tool.
    /// User-level settings (paths relative to HOME) of a user who trusts project MCP servers, as
    /// many do: the mapping must keep the project's server out even then.
    std::vector<FileToWrite> user_files = {};
    /// The arguments of a call of `tool_name` that reaches the server's tool, for a harness whose
    /// MCP tools sit behind a dispatching tool; empty: `tool_name` is the server's tool itself.
    std::string call_args_json = {};
};

/// A line `sonata doctor` shows about one harness's own setup on this machine, beyond its version.
/// Whether the parent's rules' relative paths mean in the child what they meant in the parent:
/// the child works in the parent's own directory, or elsewhere (another --cwd, a worktree).
enum class RulePaths { as_in_parent, moved };

/// How an adapter carries one of the parent's rules (core/parent_rules.hpp) to its harness.
struct RuleCarriage {
    enum class How {
        native, ///< The harness reads the rule itself (the same settings file).
        added,  ///< The invocation now holds it (a flag, a policy entry).
        cannot, ///< The harness has no mechanism sonata knows for it: the dispatch is refused.
    };
    How how = How::cannot;
    std::string detail; ///< native, added: how it is held; cannot: why not.
};

struct SetupNote {
    enum class Level { ok, warning };
    std::string name; ///< "codex config".
    Level level = Level::ok;
    std::string detail;
    std::string fix = {}; ///< The command or setting that fixes a warning.
};

class Adapter {
public:
    explicit Adapter(HarnessSpec spec) : m_spec(std::move(spec)) {}
    Adapter(const Adapter&) = delete;
    Adapter& operator=(const Adapter&) = delete;
    virtual ~Adapter() = default;

    /// The harness's constant facts.
    const HarnessSpec& spec() const { return m_spec; }

    // Readers of spec(), for the facts most callers want.
    std::string_view id() const { return m_spec.id; }
    const std::vector<std::string>& executable_names() const { return m_spec.executable_names; }
    const std::vector<std::string>& accepted_options() const { return m_spec.accepted_options; }
    const std::vector<std::string>& forbidden_flags(Mode mode) const {
        return m_spec.forbidden_flags[mode];
    }
    const std::vector<std::string>& permission_env() const { return m_spec.permission_env; }
    WireProtocol protocol() const { return m_spec.protocol; }
    const ToolVocabulary& tools() const { return m_spec.tools; }
    /// The tools the scripted model calls against `version` of the harness (a line that renamed
    /// its tools calls them by its own names); tools() unless the adapter says otherwise.
    virtual ToolVocabulary tools_at(const std::string& version) const {
        (void)version;
        return tools();
    }
    const RefusalTexts& refusal_texts() const { return m_spec.refusal_texts; }
    const ScreenPatterns& screen_patterns() const { return m_spec.screen_patterns; }
    bool enforces_budget() const { return m_spec.enforces_budget; }
    int default_max_concurrent() const { return m_spec.default_max_concurrent; }

    /// Whether `harness_id` names this adapter (pi profiles answer for "pi-<label>").
    virtual bool matches(std::string_view harness_id) const { return harness_id == id(); }

    /// Extracts a version from the output of the spec's version_args; empty when none is found.
    virtual std::string parse_version(std::string_view output) const;

    /// The mode table: an invocation (without the prompt) or a refusal. Option *values* are checked
    /// here; a bad one is an Error, never silently ignored.
    virtual Result<Outcome> map(const PlanInput& input) const = 0;

    /// The harness as the parent session runs it in `mode`, for the parent's own cells (the
    /// reference a child is held to): the plain command a user starts, with none of sonata's
    /// hardening, relying on the probes its cells measure. nullopt for a harness that is never
    /// the parent (every one but Claude Code).
    virtual std::optional<Invocation> parent_invocation(Mode mode, const std::string& executable,
                                                        const HostFacts& host) const {
        (void)mode;
        (void)executable;
        (void)host;
        return std::nullopt;
    }

    /// How this harness holds `rule`, one of the parent's deny or ask rules (an ask is a deny in a
    /// run nobody can answer), adding to `invocation` what it needs. By default it cannot: a
    /// harness carries a rule only where its adapter says how.
    virtual RuleCarriage carry_rule(const PermissionRule& rule, RulePaths paths,
                                    Invocation& invocation) const {
        (void)rule;
        (void)paths;
        (void)invocation;
        return {RuleCarriage::How::cannot,
                "sonata knows no way to hold it in " + std::string(id())};
    }

    /// What doctor says of this harness's setup on `host` (a user config under HOME its mappings
    /// do not read, a question sonata answers for it, a machine-wide file or user it meets); only
    /// reads. None by default.
    virtual std::vector<SetupNote> setup_notes(const HostFacts& host) const {
        (void)host;
        return {};
    }

    /// Files that invocations name and that must exist when they run (gemini's policy file), in
    /// `support_dir`. The planner writes them before it returns a decision that runs.
    virtual std::vector<FileToWrite> support_files(const std::string& support_dir) const {
        (void)support_dir;
        return {};
    }

    /// Files a hostile repository would hold to grant this harness permissions (settings that allow
    /// writes, auto-approval, hooks or plugins that write `canary` at startup). Paths are absolute,
    /// inside `workspace`.
    virtual std::vector<FileToWrite> hostile_files(const std::string& workspace,
                                                   const std::string& canary) const {
        (void)workspace;
        (void)canary;
        return {};
    }

    /// User-level files (paths relative to HOME) of a user who has told the harness to trust
    /// `workspace`, as anyone who opened it in the harness's own TUI has: hostile_files() must
    /// stay without effect even then.
    virtual std::vector<FileToWrite> hostile_user_files(const std::string& workspace) const {
        (void)workspace;
        return {};
    }

    /// Defines a project MCP server running `server_argv`; nullopt when the harness has no MCP.
    virtual std::optional<McpSetup> project_mcp(const std::string& workspace,
                                                const std::vector<std::string>& server_argv) const {
        (void)workspace;
        (void)server_argv;
        return std::nullopt;
    }

    /// The session id a finished headless run of `invocation` reports (stdout, stderr, or files
    /// under `home` or in a directory the invocation names), for resume; empty when it cannot be
    /// recovered.
    virtual std::string session_id(const std::string& out, const std::string& err,
                                   const std::string& home, const Invocation& invocation) const {
        (void)out;
        (void)err;
        (void)home;
        (void)invocation;
        return {};
    }

    /// The final message in a headless run's stdout, for a mapping whose report is
    /// ReportSource::structured_stdout (claude's result JSON); nullopt when `out` holds none, and
    /// for every other mapping.
    virtual std::optional<std::string> final_message(const std::string& out) const {
        (void)out;
        return std::nullopt;
    }

    /// What a finished headless run cost, from the harness's own output or its files under
    /// `home`; CostSource::unknown (no value) when it says nothing.
    virtual RunCost run_cost(const std::string& out, const std::string& err,
                             const std::string& home) const {
        (void)out;
        (void)err;
        (void)home;
        return {};
    }

    /// Why a run that failed failed for reasons outside the task (network, an expired login, a
    /// quota), from its output: such a run is retried once. Empty: not an infrastructure
    /// failure, never retried (task failures, model errors and aborts among them).
    virtual std::string infrastructure_failure(const std::string& out, const std::string& err,
                                               int exit_code) const {
        (void)out;
        (void)err;
        (void)exit_code;
        return {};
    }

    /// Arguments (after the executable) that export session `session` as JSON on stdout, for a
    /// harness whose exit status does not prove that its run completed, at the harness's
    /// `version` (the run's); empty (whatever the session) when sonata does not check this
    /// harness's completion.
    virtual std::vector<std::string> completion_export_args(const std::string& session,
                                                            const std::string& version) const {
        (void)session;
        (void)version;
        return {};
    }

    /// Judges completion_export_args()'s output: empty when session `session` completed the task
    /// (the task is its newest user turn, and its last assistant message finished with text);
    /// otherwise why the run did not complete.
    virtual std::string check_completion(const std::string& exported, const std::string& session,
                                         const std::string& task,
                                         const std::string& version) const {
        (void)exported;
        (void)session;
        (void)task;
        (void)version;
        return {};
    }

    /// Rewrites `invocation` (from map()) to use the scripted model server; files to write
    /// included.
    virtual Result<EndpointInjection> inject_endpoint(const Invocation& invocation,
                                                      const EndpointSpec& endpoint) const;

private:
    HarnessSpec m_spec;
};

/// A refusal with the standard alternatives: the modes that would work, and other harnesses.
Refusal refuse(std::string reason, std::vector<std::string> alternatives);

} // namespace sonata::adapters
