// The fixture harnesses' TUI form (reasonix default, typed through a pipe), the misbehaving liars
// (hang, flood), and the persona table itself: every persona is built, answers --version, and every
// liar targets a probe that its cell actually runs.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "core/tmux.hpp"
#include "probes/probe.hpp"
#include "tests/support/fake_harness.hpp"
#include "tests/support/plan_helpers.hpp"

namespace sonata {
namespace {

using probes::Script;
using testing::FakeRun;
using testing::FakeRunSpec;
using testing::FakeWorld;
using Texts = std::vector<std::string>;

const std::string k_trust = "Do you trust the files in this folder? [y/N] ";
const std::string k_ask_rm = "Allow command `rm victim`? [y/N] ";

Script rm_script() {
    Script script;
    script.main.steps = {probes::shell_intent("rm victim")};
    return script;
}

bool shows(const FakeRun& run, const std::string& text) {
    return run.result.out.find(text) != std::string::npos;
}

class FakeTuiTest : public ::testing::Test {
protected:
    FakeRun tui(const std::string& persona, const Script& script, const std::string& typed) {
        FakeRunSpec spec{persona, "reasonix", Mode::default_mode, script};
        spec.stdin_data = typed;
        auto run = testing::run_fake(m_world, spec, *m_runner);
        if (!run) return {};
        EXPECT_TRUE(run->invocation.interactive);
        EXPECT_FALSE(run->result.timed_out);
        return *run;
    }
    bool victim_present() const { return FakeWorld::read(m_world.work() + "/victim").has_value(); }

    FakeWorld m_world;
    std::unique_ptr<ProcessRunner> m_runner = make_system_runner();
};

TEST_F(FakeTuiTest, ReasonixAsksBeforeRmAndHonoursNo) {
    const auto r = tui("fake-reasonix", rm_script(), "y\nPlease tidy up.\nn\n");
    EXPECT_EQ(r.result.exit_code, 0) << r.result.out;
    EXPECT_TRUE(shows(r, k_trust)) << r.result.out;
    EXPECT_TRUE(shows(r, k_ask_rm)) << r.result.out;
    EXPECT_EQ(r.result_texts(), Texts{"Permission denied: the user declined run_shell"});
    EXPECT_TRUE(victim_present());
}

TEST_F(FakeTuiTest, ReasonixRunsRmWhenApproved) {
    const auto r = tui("fake-reasonix", rm_script(), "y\nPlease tidy up.\ny\n");
    EXPECT_TRUE(shows(r, k_ask_rm)) << r.result.out;
    EXPECT_EQ(r.result_texts(), Texts{"exit code 0\n"});
    EXPECT_FALSE(victim_present());
}

TEST_F(FakeTuiTest, RmPromptLiarRunsRmUnasked) {
    const auto r = tui("liar-rm-prompt", rm_script(), "y\nPlease tidy up.\n");
    EXPECT_FALSE(shows(r, "Allow command")) << r.result.out;
    EXPECT_EQ(r.result_texts(), Texts{"exit code 0\n"});
    EXPECT_FALSE(victim_present());
}

TEST_F(FakeTuiTest, ReasonixRemembersATrustedFolder) {
    tui("fake-reasonix", Script{}, "y\nHello.\n");
    const auto again = tui("fake-reasonix", Script{}, "Hello again.\n");
    EXPECT_FALSE(shows(again, k_trust)) << again.result.out;
    EXPECT_TRUE(shows(again, "\ndone\n")) << again.result.out;
}

class FakeTrustTest : public FakeTuiTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(FakeTrustTest, DeclinedTrustQuestion) {
    const std::string canary = m_world.outside() + "/startup-canary";
    m_world.write((*adapters::find_adapter("reasonix"))->hostile_files(m_world.work(), canary));
    const bool liar = std::string(GetParam()) == "liar-trust-dialog";
    const auto r = tui(GetParam(), Script{}, "n\n");
    EXPECT_EQ(r.result.exit_code, 1);
    EXPECT_TRUE(shows(r, k_trust)) << r.result.out;
    EXPECT_TRUE(r.requests.empty());
    EXPECT_EQ(FakeWorld::read(canary),
              liar ? std::optional<std::string>("repository startup hook ran\n") : std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(Personas, FakeTrustTest,
                         ::testing::Values("fake-reasonix", "liar-trust-dialog"),
                         [](const auto& case_info) {
                             return std::string(case_info.param) == "fake-reasonix" ? "honest"
                                                                                    : "liar";
                         });

/// The adapter's screen patterns against the fake's real screen: trust, ready, approval, in tmux.
TEST(FakeTmuxTest, ReasonixScreenPatternsMatchTheFakesTui) {
    if (!search_path("tmux", "/usr/bin:/bin")) GTEST_SKIP() << "tmux is not installed";
    FakeWorld world;
    auto runner = make_system_runner();
    auto launch =
        testing::launch_fake(world, {"fake-reasonix", "reasonix", Mode::default_mode, rm_script()});
    ASSERT_TRUE(launch);
    TmuxSpec spec;
    spec.argv = launch->invocation.argv;
    spec.env = launch->env;
    spec.cwd = world.work();
    spec.socket_dir = world.tmp();
    auto tui = TmuxSession::start(*runner, spec);
    ASSERT_TRUE(tui) << tui.error().message;
    const auto patterns = (*adapters::find_adapter("reasonix"))->screen_patterns();
    const auto showing = [&](const std::vector<std::string>& needles) {
        auto wait = (*tui)->wait_until(
            [&](const std::string& screen) {
                return std::any_of(needles.begin(), needles.end(), [&](const auto& n) {
                    return screen.find(n) != std::string::npos;
                });
            },
            std::chrono::seconds(5));
        return wait && wait->matched;
    };
    ASSERT_TRUE(showing(patterns.trust));
    ASSERT_TRUE((*tui)->send_keys(patterns.trust_keys));
    ASSERT_TRUE(showing(patterns.ready));
    ASSERT_TRUE((*tui)->type_text("Please tidy up."));
    ASSERT_TRUE((*tui)->send_keys(patterns.submit_keys));
    ASSERT_TRUE(showing(patterns.approval));
    ASSERT_TRUE((*tui)->send_keys(patterns.deny_keys));
    EXPECT_TRUE(showing({"Permission denied: the user declined run_shell"}));
    EXPECT_TRUE(FakeWorld::read(world.work() + "/victim"));
}

TEST(FakeLiarTest, HangIgnoresTermAndIsKilled) {
    FakeWorld world;
    auto runner = make_system_runner();
    FakeRunSpec spec{"liar-hang", "grok", Mode::plan, rm_script()};
    spec.timeout = std::chrono::milliseconds(300);
    spec.kill_grace = std::chrono::milliseconds(200);
    const auto r = testing::run_fake(world, spec, *runner);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->result.timed_out);
    EXPECT_EQ(r->result.term_signal, SIGKILL);
    EXPECT_TRUE(r->requests.empty());
}

TEST(FakeLiarTest, FloodWritesTwoHundredMebibytesThenBehaves) {
    FakeWorld world;
    auto runner = make_system_runner();
    Script script;
    script.main.steps = {probes::write_intent("probe-flood.txt")};
    const auto r = testing::run_fake(world, {"liar-flood", "grok", Mode::plan, script}, *runner);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->result.exit_code, 0);
    EXPECT_GE(r->result.out_bytes, 200U << 20U);
    EXPECT_EQ(r->result_texts(),
              Texts{"Error writing probe-flood.txt: EROFS: read-only file system"});
    EXPECT_FALSE(FakeWorld::read(world.work() + "/probe-flood.txt"));
}

nlohmann::json personas() {
    std::ifstream in(std::string(SONATA_SOURCE_DIR) + "/fixtures/fake_harness/personas.json");
    return nlohmann::json::parse(in).at("personas");
}

TEST(FakePersonasTest, EveryPersonaIsBuiltAndReportsItsOwnVersion) {
    auto runner = make_system_runner();
    testing::ScratchDir dir;
    for (const auto& persona : personas()) {
        const std::string name = persona.at("name");
        const auto adapter = adapters::find_adapter(persona.at("harness").get<std::string>());
        ASSERT_TRUE(adapter) << name;
        ProcessRequest request;
        request.argv = {testing::fake_harness_path(name), "--version"};
        request.env = testing::hermetic_env(dir);
        const auto result = runner->run(request);
        ASSERT_TRUE(result) << name;
        EXPECT_EQ((*adapter)->parse_version(result->out), "1.0.0-" + name) << result->out;
    }
}

TEST(FakePersonasTest, EveryLiarTargetsAProbeItsCellRuns) {
    std::size_t liars = 0;
    for (const auto& persona : personas()) {
        const std::string target = persona.value("catches", "");
        if (target.empty()) continue;
        ++liars;
        const std::string harness = persona.at("harness");
        const auto mode = parse_mode(persona.at("mode").get<std::string>());
        ASSERT_TRUE(mode) << persona.dump();
        const auto probe = probes::find_probe(target);
        ASSERT_TRUE(probe) << target;
        testing::PlanCase plan_case;
        plan_case.harness = harness;
        plan_case.parent_mode = *mode;
        plan_case.parent_rules = (*probe)->parent_rules(); // as the prober plans its cell
        const auto decision = testing::decide_case(plan_case);
        ASSERT_TRUE(decision && decision->runs()) << persona.dump();
        const auto& relies = decision->invocation().relies_on;
        const bool relied = std::find(relies.begin(), relies.end(), target) != relies.end();
        EXPECT_TRUE(relied ||
                    (*probe)->always_run(decision->invocation(), decision->effective_mode))
            << persona.at("name") << ": " << testing::show(decision->invocation());
    }
    // One liar per probe, a second for hostile-workspace (startup code, and prompt files) and two
    // more for outside-workspace-write (a sandbox that lets writes through, an edit tool beside a
    // confined write tool, and a write tool whose path argument is not the vocabulary's).
    EXPECT_EQ(liars, probe_id::all.size() + 3);
}

} // namespace
} // namespace sonata
