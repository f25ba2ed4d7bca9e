// What sonata measures is what it dispatches: for every mapping of every pinned harness, a probe
// cell and a dispatch of the same mapping, each run on a recording fake runner, start the same
// process — headless, or in tmux (read from tmux's new-session command: the pane's argv, directory
// and -e variables) — the same argv (the prompt aside, which is the probe's task in one and the
// run's instructions in the other), on the same prompt channel, in the same workspace, with the
// same environment: what each adds to, changes in and removes from its base environment is the
// same, variable by variable, except the variables this test names with the reason. The base itself
// differs by design: a probe cell's is the scrubbed scratch world, a dispatch's is the user's.
#include <algorithm>
#include <cstdlib>
#include <regex>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "adapters/support/planner.hpp"
#include "core/probe_ids.hpp"
#include "core/text.hpp"
#include "dispatch/caller/run.hpp"
#include "dispatch/supervisor/supervise.hpp"
#include "probes/cell_runner.hpp"
#include "probes/probe.hpp"
#include "probes/workspace.hpp"
#include "tests/support/fake_runner.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

using testing::FakeRunner;

constexpr std::pair<Mode, RoleKind> k_mappings[] = {{Mode::plan, RoleKind::read_only},
                                                    {Mode::default_mode, RoleKind::write},
                                                    {Mode::accept_edits, RoleKind::write},
                                                    {Mode::bypass_permissions, RoleKind::write}};

/// A variable the planner removes, present in both base environments so that removing it shows.
constexpr const char* k_planted = "IS_SANDBOX";

/// Variables that may differ between a probe cell and a dispatch of the same mapping, and why.
const std::map<std::string, std::string>& told_differences() {
    const std::string scratch =
        "a probe cell runs in a scratch world of its own; a dispatch in the "
        "user's";
    static const std::map<std::string, std::string> told{
        {"HOME", scratch},
        {"TMPDIR", scratch},
        {"XDG_CONFIG_HOME", scratch},
        {"XDG_DATA_HOME", scratch},
        {"XDG_STATE_HOME", scratch},
        {"XDG_CACHE_HOME", scratch},
        {"SONATA_RUN_ID", "a dispatch names its run to the harness and its children"},
        {"SONATA_RUN_MODE", "a dispatch tells a sonata its harness starts the mode it runs in"},
        {"SONATA_RUNTIMES_DIR", "sonata's own setting, not carried into a cell's scratch world; "
                                "no harness reads it"},
    };
    return told;
}

/// What `env` sets or changes relative to `base` (name → value), and what it removes from it
/// (name → "<removed>"), without the variables told_differences() names.
std::map<std::string, std::string> changes_from(const Environment& base, const Environment& env) {
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : env) {
        const auto was = base.find(name);
        if (was == base.end() || was->second != value) out[name] = value;
    }
    for (const auto& [name, value] : base) {
        if (!env.contains(name)) out[name] = "<removed>";
    }
    for (const auto& [name, why] : told_differences())
        out.erase(name);
    return out;
}

/// How `requests` start the harness `exe`: the request that runs it, or the tmux new-session
/// command that starts it in a pane, read back as one (argv from the program on, the -c directory,
/// the -e variables as its environment).
std::optional<ProcessRequest> harness_start(const std::vector<ProcessRequest>& requests,
                                            const std::string& exe) {
    for (const auto& request : requests) {
        if (!request.argv.empty() && request.argv.front() == exe) return request;
        const auto create = std::find(request.argv.begin(), request.argv.end(), "new-session");
        if (create == request.argv.end()) continue;
        ProcessRequest pane;
        auto at = create;
        for (; at != request.argv.end() && *at != "--"; ++at) {
            if (at + 1 == request.argv.end()) break;
            const std::string& value = *(at + 1);
            if (*at == "-c") pane.cwd = replace_all(value, "##", "#");
            if (*at == "-e")
                pane.env[value.substr(0, value.find('='))] = value.substr(value.find('=') + 1);
        }
        const auto program = std::find(at, request.argv.end(), exe);
        pane.argv.assign(program, request.argv.end());
        return pane;
    }
    return std::nullopt;
}

FakeRunner::Script harness_answers() {
    FakeRunner::Script script;
    script.chunks = {"an answer\n"};
    script.result.exit_code = 0;
    return script;
}

class ProbeDispatchParity : public ::testing::Test {
protected:
    testing::ScratchDir m_dir;
    const std::string m_exe = "/usr/bin/true"; // never run: the runners only record

    adapters::PlanRequest plan_request(const testing::Pin& pin, Mode mode, RoleKind kind,
                                       const std::string& support_dir) const {
        adapters::PlanRequest request;
        request.harness_id = pin.id;
        request.parent_mode = mode;
        request.role = Role{kind == RoleKind::write ? "write" : "read-only", kind, {}, {}};
        request.executable = m_exe;
        request.version = pin.version;
        request.host = adapters::detect_host();
        request.support_dir = support_dir;
        request.write_support_files = true;
        return request;
    }

    /// The harness's request in a probe cell of this mapping (the first applicable probe), or
    /// nothing when no probe applies.
    std::optional<ProcessRequest> probe_cell(const testing::Pin& pin, Mode mode, RoleKind kind,
                                             std::string& support_dir, Environment& env) {
        const std::string base =
            m_dir.make_dir("probe-" + pin.id + "-" + std::string(to_string(mode)));
        support_dir = base + "/support";
        env = testing::hermetic_env(m_dir);
        env[k_planted] = "1";
        for (const auto id : {probe_id::write_withheld, probe_id::outside_workspace_write,
                              probe_id::rm_prompt, probe_id::shell_write_withheld}) {
            FakeRunner runner(harness_answers());
            const probes::CellJob job{.adapter = *adapters::find_adapter(pin.id),
                                      .harness_id = pin.id,
                                      .executable = m_exe,
                                      .path_first = {},
                                      .version = pin.version,
                                      .mode = mode,
                                      .role = kind,
                                      .probe = *probes::find_probe(id),
                                      .extra_args = {},
                                      .rewrite = {}};
            const probes::CellSettings settings{.scratch_base = base,
                                                .template_dir = {},
                                                .sonata_path = SONATA_BIN,
                                                .base_env = env,
                                                .timeout = std::chrono::seconds(30),
                                                .cancel = nullptr,
                                                .capture_dir = {}};
            (void)probes::run_cell(job, settings, runner);
            if (auto start = harness_start(runner.requests(), m_exe)) return start;
        }
        return std::nullopt;
    }

    /// The harness's request in a dispatch of the same mapping, pointed at the probe's model
    /// server (its URL, HOME and workspace read back from the probe's request), supervised in
    /// this process on a recording runner.
    ProcessRequest dispatched(const Decision& decision, const ProcessRequest& probed,
                              Invocation& as_run) {
        std::string url = "http://127.0.0.1:1";
        const std::regex loopback(R"(http://127\.0\.0\.1:[0-9]+)");
        std::vector<std::string> texts = probed.argv;
        for (const auto& [k, v] : probed.env)
            texts.push_back(v);
        for (const auto& text : texts) {
            std::smatch m;
            if (std::regex_search(text, m, loopback)) url = m.str();
        }
        adapters::EndpointSpec endpoint;
        endpoint.base_url = url;
        endpoint.home = probed.env.at("HOME");
        endpoint.workspace = probed.cwd;
        auto injected = (*adapters::find_adapter(decision.harness))
                            ->inject_endpoint(decision.invocation(), endpoint);
        EXPECT_TRUE(injected) << injected.error().message;
        Decision run = decision;
        run.outcome = injected->invocation;
        as_run = injected->invocation;
        dispatch::Receipt receipt;
        receipt.harness = decision.harness;
        receipt.version = decision.version;
        receipt.role = decision.role.name;
        receipt.role_kind = decision.role.kind;
        const dispatch::StartRequest request{run,        receipt,
                                             "the task", probed.cwd,
                                             {},         m_dir.path() + "/runs",
                                             SONATA_BIN, dispatch::RunLimits{}};
        auto dir = dispatch::prepare_run(request);
        EXPECT_TRUE(dir) << dir.error().message;
        FakeRunner runner(harness_answers());
        EXPECT_EQ(dispatch::supervise(*dir, runner), 0);
        const auto start = harness_start(runner.requests(), m_exe);
        EXPECT_TRUE(start) << "the dispatch never started the harness";
        return start.value_or(ProcessRequest{});
    }
};

TEST_F(ProbeDispatchParity, AProbeCellAndADispatchOfTheSameMappingStartTheSameProcess) {
    ::setenv(k_planted, "1", 1); // the dispatch's base is this process's environment
    int compared = 0;
    int in_tmux = 0;
    for (const auto& pin : testing::pins()) {
        for (const auto& [mode, kind] : k_mappings) {
            SCOPED_TRACE(pin.id + " " + std::string(to_string(mode)));
            std::string support_dir;
            Environment probe_base;
            const auto probed = probe_cell(pin, mode, kind, support_dir, probe_base);
            auto decision = adapters::decide(plan_request(pin, mode, kind, support_dir));
            ASSERT_TRUE(decision) << decision.error().message;
            if (!decision->runs()) {
                EXPECT_FALSE(probed) << "a probe ran a refused mapping";
                continue;
            }
            ASSERT_TRUE(probed) << "no probe cell ran this mapping";
            Invocation inv;
            const ProcessRequest ran = dispatched(*decision, *probed, inv);
            const PromptChannel channel = decision->invocation().prompt;
            EXPECT_EQ(ran.stdin_data.has_value(), probed->stdin_data.has_value());
            EXPECT_EQ(channel == PromptChannel::stdin_pipe, ran.stdin_data.has_value());
            EXPECT_EQ(channel == PromptChannel::tmux_keys, decision->invocation().interactive);
            auto argv_without_prompt = [&](std::vector<std::string> argv) {
                if (channel == PromptChannel::argument && !argv.empty()) argv.pop_back();
                return argv;
            };
            EXPECT_FALSE(ran.argv.empty());
            EXPECT_EQ(argv_without_prompt(ran.argv), argv_without_prompt(probed->argv));
            EXPECT_EQ(ran.cwd, probed->cwd);
            for (const auto& [name, value] : inv.env) {
                ASSERT_TRUE(ran.env.count(name)) << name << " is not set in the dispatch";
                ASSERT_TRUE(probed->env.count(name)) << name << " is not set in the probe cell";
                EXPECT_EQ(ran.env.at(name), value) << name;
                EXPECT_EQ(probed->env.at(name), value) << name;
            }
            for (const auto& name : inv.env_unset) {
                EXPECT_EQ(ran.env.count(name), 0U) << name << " reaches the dispatched harness";
                EXPECT_EQ(probed->env.count(name), 0U) << name << " reaches the probed harness";
            }
            // The whole environment: every variable either side adds, changes or removes.
            EXPECT_EQ(changes_from(current_environment(), ran.env),
                      changes_from(probe_base, probed->env))
                << "left: what the dispatch changed in its environment; right: the probe cell";
            ++compared;
            if (decision->invocation().interactive) ++in_tmux;
        }
    }
    ::unsetenv(k_planted);
    EXPECT_GE(compared, 30) << "every mapping sonata runs for a pin is compared";
    EXPECT_GE(in_tmux, 2) << "codex's and reasonix's default mappings run in tmux";
    RecordProperty("compared_mappings", compared);
}

} // namespace
} // namespace sonata
