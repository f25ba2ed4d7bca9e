// The probe interface: one canned adversarial task with a stable id, a script for the scripted
// model, the workspace it needs, and the judgement of what happened. A probe never knows which
// harness it runs against: everything harness-specific comes from the adapter.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/adapter.hpp"
#include "core/matrix.hpp"
#include "core/parent_rules.hpp"
#include "core/probe_ids.hpp"
#include "core/process.hpp"
#include "probes/model_server.hpp"
#include "probes/script.hpp"

namespace sonata::probes {

/// Where one cell runs: the scratch paths a script may refer to.
struct ProbeSetup {
    std::string workspace;  ///< The harness's working directory (a git repo with canaries).
    std::string home;       ///< The run's HOME.
    std::string tmp;        ///< The run's TMPDIR.
    std::string outside;    ///< A directory outside the workspace.
    std::string sonata;     ///< sonata's own executable (for helper servers such as mcp-canary).
    Mode mode = Mode::plan; ///< The cell's effective mode.
    /// The tools the scripted model calls in this cell: the adapter's at the cell's version.
    adapters::ToolVocabulary tools = {};
};

/// Everything observed in one run of a cell.
struct Observation {
    const adapters::Adapter* adapter = nullptr;
    Invocation invocation; ///< As run (after endpoint injection).
    ProbeSetup setup;
    bool started = false;                ///< The process (or TUI) started at all.
    ProcessResult result;                ///< Headless: exit, output. TUI: pane status mapped.
    std::string screen;                  ///< TUI: the last screen; headless: empty.
    bool approval_seen = false;          ///< TUI: an approval prompt was recognised.
    bool trust_seen = false;             ///< TUI: a directory-trust question was recognised.
    bool decline_seen = false;           ///< TUI: a question sonata answers "no" was answered.
    std::vector<std::string> changes;    ///< Workspace, home, tmp and outside changes, prefixed.
    std::vector<RequestRecord> requests; ///< The model server's recording.
    std::vector<ToolResultRecord> tool_results;

    /// True when a change line names `path` (relative to its root, e.g. "work/victim").
    bool changed(const std::string& path) const;
    /// The first changed path that starts with `prefix` and is not `prefix` itself; empty when
    /// none did.
    std::string changed_beside(std::string_view prefix) const;
    /// True when the model server answered step `step` of the main track with a tool call.
    bool reached_step(int step, const std::string& track = {}) const;
    /// Number of model requests (turns and side requests) the harness made.
    std::size_t model_requests() const;
};

/// A verdict with the reason that explains it (evidence is filled by the runner).
struct Judgement {
    Verdict verdict = Verdict::inconclusive;
    std::string reason;
};

/// One cell a probe measures: the mode/role under which sonata runs the harness.
struct ProbeTarget {
    Mode mode = Mode::plan;
    RoleKind role = RoleKind::read_only;
};

class Probe {
public:
    Probe() = default;
    Probe(const Probe&) = delete;
    Probe& operator=(const Probe&) = delete;
    virtual ~Probe() = default;

    /// Stable kebab-case id (core/probe_ids.hpp).
    virtual std::string_view id() const = 0;
    /// The property, in one sentence.
    virtual std::string_view property() const = 0;

    /// Whether this probe is run for a mapping even when the mapping does not rely on it
    /// (informational probes such as denial-visibility and trust-dialog).
    virtual bool always_run(const Invocation& invocation, Mode mode) const {
        (void)invocation;
        (void)mode;
        return false;
    }

    /// Why this probe cannot apply to the adapter/invocation, whose scripted model calls `tools`;
    /// empty when it can.
    virtual std::string not_applicable(const adapters::Adapter& adapter,
                                       const Invocation& invocation,
                                       const adapters::ToolVocabulary& tools) const {
        (void)adapter;
        (void)invocation;
        (void)tools;
        return {};
    }

    /// The parent's rules this probe plants (parent-rule): the cell's mapping is planned with
    /// them, as a dispatch from a parent with those rules is, and files() writes them where the
    /// parent keeps them. None by default.
    virtual ParentRules parent_rules() const { return {}; }

    /// Extra files for the workspace (absolute paths inside the scratch root).
    virtual std::vector<adapters::FileToWrite> files(const ProbeSetup& setup,
                                                     const adapters::Adapter& adapter) const {
        (void)setup;
        (void)adapter;
        return {};
    }

    /// The scripted model's plan for this cell.
    virtual Script script(const ProbeSetup& setup, const adapters::Adapter& adapter) const = 0;

    /// The task text the harness is given (the scripted model ignores it).
    virtual std::string prompt() const {
        return "Please look at this repository and follow the steps you are given.";
    }

    /// Whether the cell needs a second, resumed run (resume-keeps-mode): script() drives the first
    /// run, resume_script() the resumed one, and judge() sees the resumed run.
    virtual bool needs_resume() const { return false; }
    virtual Script resume_script(const ProbeSetup& setup, const adapters::Adapter& adapter) const {
        return script(setup, adapter);
    }

    /// Whether a TUI run stops at the trust question instead of answering it (trust-dialog).
    virtual bool stop_at_trust_question() const { return false; }

    /// The verdict for what was observed.
    virtual Judgement judge(const Observation& observation) const = 0;
};

/// Every probe, in catalogue order (generated from probes/catalogue/).
const std::vector<std::unique_ptr<Probe>>& all_probes();

/// The probe with this id, or a usage error with "did you mean".
Result<const Probe*> find_probe(std::string_view id);

// Judgement helpers shared by the catalogue.

/// The run never got to the scripted step: inconclusive (or refused-to-start), with a reason.
std::optional<Judgement> not_reached(const Observation& observation, int step,
                                     const std::string& track = {});

/// The text of every tool result, joined, for matching refusal wording.
std::string tool_result_text(const Observation& observation);

/// The tool result that answers `call` of conversation `track`: the one with its id, else (a
/// protocol without ids) the track's result at the call's position `nth` among its calls.
const ToolResultRecord* answer_to(const Observation& observation, const std::string& track,
                                  const ToolCallRecord& call, std::size_t nth);

/// Why a verdict of `enforced` would stand on a malformed call: the first scripted step whose
/// last attempt the harness refused for its arguments (an unknown sub-agent, a schema error), and
/// what it said; empty when every step's call was well-formed or settled by its retry. Such a
/// refusal proves nothing about enforcement, so the runner turns the cell `inconclusive`.
std::string refused_for_its_arguments(const Observation& observation);

/// The first of `paths` (e.g. "work/x") that changed, or empty.
std::string first_changed(const Observation& observation, const std::vector<std::string>& paths);

/// "refused: <first tool result>" — a short account of how the harness answered.
std::string refusal_summary(const Observation& observation);

/// The usual verdict for "these paths must not change": violated when one did, else not_reached's
/// verdict when step `step` was never reached, else enforced.
Judgement judge_unchanged(const Observation& observation, const std::vector<std::string>& paths,
                          int step);

/// A file-write intent to a path relative to the workspace (or absolute).
Intent write_intent(const std::string& path,
                    const std::string& content = "written by the sonata probe\n");

/// The steps that write `content` to `path` with every file tool the harness may offer: the
/// vocabulary's write tool first (called even where it is withheld), then each other file-write
/// tool the adapter knows, by name, with the target in the tool's own path field (passed over
/// where the harness does not offer it). A verdict then rests on the tools the mapping offers.
std::vector<Intent> write_intents(const adapters::Adapter& adapter, const std::string& path,
                                  const std::string& content = "written by the sonata probe\n");

/// The first file-write tool (as the adapter classifies it) the harness offered in the main
/// conversation that the scripted model never called; empty when it called every one.
std::string unexercised_writer(const Observation& observation);

/// The tool of the call that wrote the changed `path` ("work/x"): among the calls whose arguments
/// name it, the first to a tool the harness offered whose result was no error, else the last;
/// empty when no call named it.
std::string tool_that_named(const Observation& observation, const std::string& path);

/// judge_unchanged for a probe whose writes go through write_intents: a change names the tool
/// whose call named it, and `enforced` stands only when every offered file-write tool was called.
Judgement judge_writes_unchanged(const Observation& observation,
                                 const std::vector<std::string>& paths, int step);
/// A shell intent.
Intent shell_intent(const std::string& command);
/// A file-read intent (relative to the workspace, or absolute).
Intent read_intent(const std::string& path);
/// A web-fetch intent.
Intent fetch_intent(const std::string& url);

} // namespace sonata::probes
