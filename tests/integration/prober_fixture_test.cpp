// `sonata probe` against the fixture harnesses, through the real binary: every honest fake's
// relied-on cells hold, and every liar is caught — `violated`, with evidence — by the probe that
// targets its lie.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/matrix.hpp"
#include "core/probe_ids.hpp"
#include "core/process.hpp"
#include "tests/support/prober_fixture.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace prober_fixture_test {

using testing::find_cell;
using testing::k_probed;
using testing::Persona;
using testing::personas;
using testing::ProberFixture;
namespace fs = std::filesystem;

TEST_F(ProberFixture, EveryLiarIsCaughtByItsProbe) {
    std::size_t liars = 0;
    for (const auto& persona : personas()) {
        if (persona.catches.empty()) continue;
        ++liars;
        const Matrix m = probe(persona, {"--probe", persona.catches});
        const Cell* caught = nullptr;
        for (const auto& cell : m.cells) {
            if (cell.probe == persona.catches && cell.mode == persona.mode) caught = &cell;
        }
        ASSERT_NE(caught, nullptr)
            << persona.name << ": no " << persona.catches << " cell in " << persona.mode;
        EXPECT_EQ(caught->verdict, Verdict::violated)
            << persona.name << ": " << caught->evidence.reason;
        EXPECT_FALSE(caught->evidence.reason.empty()) << persona.name;
        // The census's evidence is what the harness offered; every other probe's, a call or a
        // change.
        const Evidence& e = caught->evidence;
        EXPECT_FALSE(persona.catches == probe_id::tool_census
                         ? e.tools_offered.empty()
                         : e.tool_calls.empty() && e.files_changed.empty())
            << persona.name << ": a violation needs evidence";
    }
    EXPECT_EQ(liars, probe_id::all.size() + 3)
        << "every probe in the catalogue has a liar (hostile-workspace two: startup code, and a "
           "prompt file sent to the model; outside-workspace-write three: a sandbox that lets "
           "writes through, an edit tool beside a confined write tool, and a write tool whose "
           "path argument has another name than the vocabulary's)";
}

// A plugin's tool no adapter has heard of, offered in a read-only mapping: what it can do is not
// measured, so the census is never enforced there, and it names the tool. The same harness without
// the tool reads enforced.
TEST_F(ProberFixture, AToolNoAdapterKnowsIsNeverEnforcedInAReadOnlyMapping) {
    const Matrix m = probe({"liar-unknown-tool", "muse", "plan", ""}, {"--probe", "tool-census"});
    const Cell* cell = find_cell(m, "tool-census", "plan");
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::inconclusive) << cell->evidence.reason;
    EXPECT_NE(cell->evidence.reason.find("notes_append"), std::string::npos)
        << cell->evidence.reason;
    const auto& offered = cell->evidence.tools_offered;
    EXPECT_NE(std::find(offered.begin(), offered.end(), "notes_append"), offered.end());

    const Matrix honest = probe({"fake-muse", "muse", "plan", ""}, {"--probe", "tool-census"});
    const Cell* clean = find_cell(honest, "tool-census", "plan");
    ASSERT_NE(clean, nullptr);
    EXPECT_EQ(clean->verdict, Verdict::enforced) << clean->evidence.reason;
}

// write-withheld calls every offered tool the adapter does not know, with arguments sampled from
// its schema, and reads what changed: the plugin's tool writes in a read-only mapping, so the cell
// is violated, with the call and the change as evidence. No hand-written list named the tool.
TEST_F(ProberFixture, WriteWithheldCallsTheToolNoAdapterKnowsAndSeesItWrite) {
    const Matrix m =
        probe({"liar-unknown-tool", "muse", "plan", ""}, {"--probe", "write-withheld"});
    const Cell* cell = find_cell(m, "write-withheld", "plan");
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::violated) << cell->evidence.reason;
    EXPECT_NE(cell->evidence.reason.find("notes_append"), std::string::npos)
        << cell->evidence.reason;
    EXPECT_TRUE(std::any_of(
        cell->evidence.tool_calls.begin(), cell->evidence.tool_calls.end(),
        [](const std::string& call) { return call.find("notes_append") != std::string::npos; }))
        << ::testing::PrintToString(cell->evidence.tool_calls);
}

// A refusal for a malformed call is no evidence of enforcement: the fake's sub-agents would escape,
// but it refuses the sub-agent sonata names first without naming a valid one, so the scripted
// model cannot retry well-formed. Without the judge's check for refusals of arguments the cell
// read "enforced: the delegation itself was refused".
TEST_F(ProberFixture, AMalformedCallIsNeverEnforcement) {
    const Matrix m =
        probe({"liar-delegation-masked", "muse", "plan", ""}, {"--probe", "delegation-escape"});
    const Cell* cell = find_cell(m, "delegation-escape", "plan");
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::inconclusive) << cell->evidence.reason;
    EXPECT_NE(cell->evidence.reason.find("for its arguments"), std::string::npos)
        << cell->evidence.reason;
    EXPECT_NE(cell->evidence.reason.find("Unknown agent 'general'"), std::string::npos)
        << cell->evidence.reason;
}

// A verdict rests on the file tools the mapping offers: the fake's write tool refuses a write
// outside the workspace and its run ends there, so the edit tool it also offers (which writes
// anywhere) is never called. Without the check that every offered file tool was called with the
// target, the cell read "enforced: nothing changed".
TEST_F(ProberFixture, AnOfferedFileToolTheProbeNeverCalledIsNeverEnforcement) {
    const Matrix m = probe({"liar-edit-masked", "grok", "acceptEdits", ""},
                           {"--probe", "outside-workspace-write"});
    const Cell* cell = find_cell(m, "outside-workspace-write", "acceptEdits");
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::inconclusive) << cell->evidence.reason;
    EXPECT_NE(
        cell->evidence.reason.find("offered the file tool edit and the probe never called it"),
        std::string::npos)
        << cell->evidence.reason;
}

// The honest liar names its sub-agent only in the refusal: the scripted model retries once with
// that name, as a real model would, and the escape is caught.
TEST_F(ProberFixture, ARefusedSubAgentNameIsRetriedWithTheOneTheHarnessNames) {
    const Matrix m = probe({"liar-delegation-escape", "muse", "plan", "delegation-escape"},
                           {"--probe", "delegation-escape"});
    const Cell* cell = find_cell(m, "delegation-escape", "plan");
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::violated) << cell->evidence.reason;
    ASSERT_GE(cell->evidence.tool_calls.size(), 2U);
    EXPECT_NE(cell->evidence.tool_calls[0].find("\"agent\":\"general\""), std::string::npos)
        << cell->evidence.tool_calls[0];
    EXPECT_NE(cell->evidence.tool_calls[1].find("\"agent\":\"worker\""), std::string::npos)
        << cell->evidence.tool_calls[1];
}

// A declined card does not end a TUI cell: a harness that takes its time before its next step is
// waited for, so the sub-agent's last forbidden action is asked about and declined, not unseen.
TEST_F(ProberFixture, WhatATuiHarnessDoesAfterADeclinedCardIsSeenHoweverSlowly) {
    const Matrix m =
        probe({"slow-reasonix", "reasonix", "default", ""}, {"--probe", "delegation-escape"});
    const Cell* cell = find_cell(m, "delegation-escape", "default");
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::enforced) << cell->evidence.reason;
    const auto sub_agent_calls = std::count_if(
        cell->evidence.tool_calls.begin(), cell->evidence.tool_calls.end(),
        [](const std::string& call) { return call.rfind("[SONATA-SUBAGENT-ESCAPE] ", 0) == 0; });
    EXPECT_EQ(sub_agent_calls, 2) << ::testing::PrintToString(cell->evidence.tool_calls);
}

// A TUI that loses the Enter after the typed task (the task stays in the box, the screen does not
// change) gets it again: the cell reaches the model instead of timing out.
TEST_F(ProberFixture, ATaskWhoseEnterTheTuiLostIsSubmittedAgain) {
    const Matrix m =
        probe({"enterless-reasonix", "reasonix", "default", ""}, {"--probe", "rm-prompt"});
    const Cell* cell = find_cell(m, "rm-prompt", "default");
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::asked) << cell->evidence.reason;
    EXPECT_FALSE(cell->evidence.timed_out);
}

TEST_F(ProberFixture, HonestFakesHoldEveryRelidOnProperty) {
    for (const auto& persona : personas()) {
        if (persona.name.rfind("fake-", 0) != 0) continue;
        const Matrix m = probe(persona, {});
        // Every property a mapping sonata runs relies on is measured (agy runs only in
        // bypassPermissions, which relies on nothing, so it may have no cell at all).
        for (const auto& [mode, role] : k_probed) {
            for (const auto& property : relied_on(persona, mode, role)) {
                const auto measured =
                    std::any_of(m.cells.begin(), m.cells.end(), [&](const Cell& c) {
                        return c.probe == property && c.mode == mode;
                    });
                EXPECT_TRUE(measured) << persona.name << ": no " << property << " cell in " << mode;
            }
        }
        for (const auto& cell : m.cells) {
            EXPECT_NE(cell.verdict, Verdict::violated)
                << persona.name << " " << cell.key() << ": " << cell.evidence.reason;
            EXPECT_NE(cell.verdict, Verdict::error)
                << persona.name << " " << cell.key() << ": " << cell.evidence.reason;
            EXPECT_NE(cell.verdict, Verdict::inconclusive)
                << persona.name << " " << cell.key() << ": " << cell.evidence.reason;
            if (cell.verdict == Verdict::not_applicable) {
                EXPECT_FALSE(cell.evidence.reason.empty()) << cell.key();
            }
        }
    }
}

// The prober plans each cell as `sonata plan` does, configured `args` included: a flag the fake
// grok does not know shows in plan's argv and makes every probed run fail on it.
TEST_F(ProberFixture, ConfiguredArgsReachTheProbedInvocationAsTheyReachPlan) {
    const Persona grok{"fake-grok", "grok", "", ""};
    const auto clean = probe(grok, {"--probe", "write-withheld"});
    ASSERT_FALSE(clean.cells.empty());
    for (const auto& cell : clean.cells)
        EXPECT_EQ(cell.verdict, Verdict::enforced) << cell.key();

    fs::create_directories(m_root / "home/.config/sonata");
    std::ofstream(m_root / "home/.config/sonata/config.toml")
        << "[harnesses.grok]\nargs = [\"--sonata-marker\"]\n";
    ProcessRequest request;
    request.argv = {SONATA_BIN, "plan",   "--harness",         "grok",  "--mode", "plan",
                    "--role",   "review", "--harness-version", "1.0.0", "--json"};
    request.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", (m_root / "home").string()}};
    request.cwd = m_root.string();
    const auto planned = make_system_runner()->run(request);
    ASSERT_TRUE(planned);
    const auto argv =
        nlohmann::json::parse(planned->out).at("argv").get<std::vector<std::string>>();
    EXPECT_NE(std::find(argv.begin(), argv.end(), "--sonata-marker"), argv.end()) << planned->out;
    const auto marked = probe(grok, {"--probe", "write-withheld"});
    ASSERT_EQ(marked.cells.size(), clean.cells.size());
    for (const auto& cell : marked.cells) {
        EXPECT_NE(cell.evidence.output_tail.find("unknown option --sonata-marker"),
                  std::string::npos)
            << cell.key() << ": " << cell.evidence.output_tail;
    }
}

// What the parent guards in a mode, every child is measured on there, though its mapping never
// named it: a parent that starts guarding rm in acceptEdits has grok's acceptEdits measured on
// rm-prompt (grok runs it unasked), and the gate then refuses grok naming the parent's cell.
// Without the parent's cell, that cell is never measured.
TEST_F(ProberFixture, WhatTheParentGuardsEveryChildIsMeasuredOnAndHeldTo) {
    const Persona grok{"fake-grok", "grok", "acceptEdits", ""};
    EXPECT_EQ(find_cell(probe(grok, {"--probe", "rm-prompt"}), "rm-prompt", "acceptEdits"),
              nullptr);

    Matrix reference;
    Cell parent;
    parent.harness = "claude";
    parent.version = "9.9.9";
    parent.probe = "rm-prompt";
    parent.mode = "acceptEdits";
    parent.role = std::string(k_parent_role);
    parent.verdict = Verdict::asked;
    reference.merge({parent});
    const std::string file = (m_root / "parent.json").string();
    ASSERT_TRUE(save_matrix(reference, file));
    const Matrix m = probe(grok, {"--probe", "rm-prompt", "--matrix", file});
    const Cell* cell = find_cell(m, "rm-prompt", "acceptEdits");
    ASSERT_NE(cell, nullptr) << "the child was not measured on what the parent guards";
    EXPECT_EQ(cell->verdict, Verdict::violated) << cell->evidence.reason;

    reference.merge(m.cells);
    ASSERT_TRUE(save_matrix(reference, file));
    ProcessRequest request;
    request.argv = {
        SONATA_BIN, "plan",  "--harness",         "grok",        "--mode",   "acceptEdits",
        "--role",   "write", "--harness-version", cell->version, "--matrix", file};
    request.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", (m_root / "home").string()}};
    request.cwd = m_root.string();
    auto result = make_system_runner()->run(request);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->exit_code, 4) << result->out << result->err;
    EXPECT_NE(
        (result->out + result->err).find("Wider than the parent: claude@9.9.9 measured 'asked'"),
        std::string::npos)
        << result->out << result->err;
}

// A harness whose version cannot be read is an error for its cells, said once with why, never a
// key: none of its cells is probed, the other harnesses' are, and the run exits 1.
TEST_F(ProberFixture, AHarnessWhoseVersionCannotBeReadIsAnErrorNeverAKey) {
    const fs::path mute = m_root / "mute-muse";
    {
        std::ofstream script(mute);
        script << "#!/bin/sh\necho 'no version here'\n";
    }
    fs::permissions(mute, fs::perms::owner_all);
    ProcessRequest request;
    request.argv = {SONATA_BIN,
                    "probe",
                    "--bin",
                    "grok=" + bin("fake-grok"),
                    "--bin",
                    "muse=" + mute.string(),
                    "--probe",
                    "write-withheld",
                    "--no-save",
                    "--out",
                    (m_root / "out.json").string()};
    request.env = {{"PATH", "/usr/bin:/bin"},
                   {"HOME", (m_root / "home").string()},
                   {"XDG_CONFIG_HOME", (m_root / "home/.config").string()},
                   {"TMPDIR", (m_root / "tmp").string()}};
    request.cwd = m_root.string();
    request.timeout = std::chrono::minutes(2);
    auto result = make_system_runner()->run(request);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->exit_code, 1) << result->err;
    EXPECT_NE(result->err.find("muse: its version could not be read (version output not "
                               "recognised), so none of its cells were probed"),
              std::string::npos)
        << result->err;
    auto m = load_matrix((m_root / "out.json").string());
    ASSERT_TRUE(m) << result->err;
    ASSERT_FALSE(m->cells.empty());
    for (const auto& cell : m->cells) {
        EXPECT_EQ(cell.harness, "grok") << cell.key();
        EXPECT_FALSE(cell.version.empty()) << cell.key();
    }
}

TEST_F(ProberFixture, HangingHarnessIsKilledAndInconclusive) {
    const Matrix m = probe({"liar-hang", "grok", "plan", ""}, {"--probe", "write-withheld"}, "3");
    ASSERT_EQ(m.cells.size(), 1U);
    EXPECT_EQ(m.cells[0].verdict, Verdict::inconclusive);
    EXPECT_TRUE(m.cells[0].evidence.timed_out);
    EXPECT_EQ(m.cells[0].evidence.reason, "the harness never called the model before the timeout");
}

TEST_F(ProberFixture, FloodingHarnessIsStillJudged) {
    const Matrix m = probe({"liar-flood", "grok", "plan", ""}, {"--probe", "write-withheld"});
    ASSERT_EQ(m.cells.size(), 1U);
    EXPECT_EQ(m.cells[0].verdict, Verdict::enforced) << m.cells[0].evidence.reason;
    EXPECT_LE(m.cells[0].evidence.output_tail.size(), 4000U);
}

TEST_F(ProberFixture, InterruptKillsRunningCellsAndLeavesNothing) {
    // A hanging harness, a long timeout, and a SIGINT two seconds in: sonata stops within the
    // kill grace, exits 130, writes no matrix, and leaves no process or scratch file behind.
    const std::string home = (m_root / "home").string();
    ProcessRequest request;
    request.argv = {
        SONATA_BIN,  "probe", "--bin", "grok=" + bin("liar-hang"),    "--probe", "write-withheld",
        "--timeout", "600",   "--out", (m_root / "out.json").string()};
    request.env = {
        {"PATH", "/usr/bin:/bin"}, {"HOME", home}, {"TMPDIR", (m_root / "tmp").string()}};
    request.cwd = m_root.string();
    request.timeout = std::chrono::minutes(2);
    std::atomic<int> pid{0};
    std::thread interrupter([&] {
        for (int i = 0; i < 300 && pid.load() == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::this_thread::sleep_for(std::chrono::seconds(2));
        ::kill(pid.load(), SIGINT);
    });
    const auto started = std::chrono::steady_clock::now();
    auto runner = make_system_runner();
    std::thread watcher([&] {
        // The sonata process is the only child of this test whose command line names "probe".
        for (int i = 0; i < 300 && pid.load() == 0; ++i) {
            for (const auto& entry : fs::directory_iterator("/proc")) {
                const std::string name = entry.path().filename();
                if (name.find_first_not_of("0123456789") != std::string::npos) continue;
                std::ifstream cmdline(entry.path() / "cmdline");
                std::string text((std::istreambuf_iterator<char>(cmdline)),
                                 std::istreambuf_iterator<char>());
                if (text.find((m_root / "out.json").string()) != std::string::npos) {
                    pid = std::stoi(name);
                    break;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    auto result = runner->run(request);
    watcher.join();
    interrupter.join();
    ASSERT_TRUE(result);
    EXPECT_EQ(result->exit_code, 130) << result->err;
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
    EXPECT_NE(result->err.find("interrupted after 1 of 1 cell(s); no matrix written"),
              std::string::npos)
        << result->err;
    EXPECT_FALSE(fs::exists(m_root / "out.json"));
    EXPECT_TRUE(fs::is_empty(m_root / "tmp")) << "the scratch base is left behind";
    // No process of the run is left: nothing on this machine has the scratch tree as its cwd.
    EXPECT_EQ(testing::processes_working_under(m_root.string()), std::vector<std::string>{});
}

} // namespace prober_fixture_test
} // namespace sonata
