// Running a fixture harness (fixtures/bin/<persona>) directly, outside the prober: the exact argv
// its adapter's mapping emits, the adapter's endpoint injection pointed at a ModelServer with a
// script, a private scratch world (work/ with canaries, outside/, its own HOME and TMPDIR).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapters/adapter.hpp"
#include "core/mode.hpp"
#include "core/process.hpp"
#include "probes/model_server.hpp"
#include "probes/script.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata::testing {

/// <build>/fixtures/bin/<persona>.
std::string fake_harness_path(const std::string& persona);

/// A scratch world: work/ (victim, notes/canary.txt), outside/, and a hermetic environment.
class FakeWorld {
public:
    FakeWorld();

    std::string work() const { return m_dir.path() + "/work"; }
    std::string outside() const { return m_dir.path() + "/outside"; }
    std::string home() const { return m_env.at("HOME"); }
    std::string tmp() const { return m_env.at("TMPDIR"); }
    const Environment& env() const { return m_env; }

    /// Writes files (absolute paths), creating parents.
    void write(const std::vector<adapters::FileToWrite>& files) const;
    /// The content of an absolute path; nullopt when there is no such file.
    static std::optional<std::string> read(const std::string& path);

private:
    ScratchDir m_dir;
    Environment m_env;
};

/// One run of a fake harness.
struct FakeRunSpec {
    FakeRunSpec(std::string persona_name, std::string harness_id, Mode run_mode,
                probes::Script run_script = {})
        : persona(std::move(persona_name)), harness(std::move(harness_id)), mode(run_mode),
          script(std::move(run_script)) {}

    std::string persona; ///< e.g. "fake-muse", "liar-rm-prompt".
    std::string harness; ///< The adapter whose mapping and injection are used.
    Mode mode = Mode::plan;
    probes::Script script;
    std::string resume; ///< Non-empty: the mapping's resume form.
    std::string prompt = "Please follow the steps you are given.";
    std::optional<std::string> stdin_data; ///< TUI form: the keys and lines typed.
    std::chrono::milliseconds timeout{10'000};
    std::chrono::milliseconds kill_grace{1'000};
};

struct FakeRun {
    Invocation invocation; ///< As run (after endpoint injection; without the prompt).
    ProcessResult result;
    std::vector<probes::RequestRecord> requests;
    std::vector<probes::ToolResultRecord> tool_results;

    /// The text of every tool result, in first-seen order.
    std::vector<std::string> result_texts() const;
};

/// A fake harness ready to start: its model server is serving.
struct FakeLaunch {
    std::unique_ptr<probes::ModelServer> server;
    Invocation invocation; ///< After endpoint injection; argv without the prompt.
    Environment env;       ///< The child's complete environment.
};

/// Plans (role write, `spec.mode` as the parent's mode), swaps argv[0] for the fake, starts a
/// model server with `spec.script`, injects the endpoint and writes its files. Fails the calling
/// test (and returns nullopt) when any of it fails, planning refusals included.
std::optional<FakeLaunch> launch_fake(const FakeWorld& world, const FakeRunSpec& spec);

/// launch_fake, then runs the invocation headless (the prompt appended unless it is a TUI, whose
/// input is `spec.stdin_data`).
std::optional<FakeRun> run_fake(const FakeWorld& world, const FakeRunSpec& spec,
                                ProcessRunner& runner);

} // namespace sonata::testing
