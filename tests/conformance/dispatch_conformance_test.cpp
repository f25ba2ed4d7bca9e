// Dispatch on the pinned real harnesses, hermetic: for every mapping sonata runs for a pinned
// harness (headless as a child process, TUI in tmux), a run started by the dispatcher (run
// directory, detached `sonata supervise`, receipt) against the scripted model server, whose model
// answers with a token as its final message, reaches `done` with the token in its report, from the
// expected source, undegraded. The invocation is the planner's, with the adapter's endpoint
// injection (as a probe cell has it).
#include <signal.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "core/process.hpp"
#include "dispatch/caller/run.hpp"
#include "probes/model_server.hpp"
#include "probes/script.hpp"
#include "probes/workspace.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/real_dispatch.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

using json = nlohmann::json;

using testing::Pin;
using testing::pins;

constexpr std::pair<Mode, RoleKind> k_mappings[] = {{Mode::plan, RoleKind::read_only},
                                                    {Mode::default_mode, RoleKind::write},
                                                    {Mode::accept_edits, RoleKind::write},
                                                    {Mode::bypass_permissions, RoleKind::write}};

class DispatchConformance : public ::testing::TestWithParam<Pin> {
protected:
    void SetUp() override {
        const char* path = std::getenv("PATH");
        m_bin =
            search_path(GetParam().binary, path != nullptr ? path : "/usr/bin:/bin").value_or("");
        if (m_bin.empty()) {
            const std::string why = testing::missing_harness_skip_reason();
            if (why.empty())
                FAIL() << GetParam().id << " " << GetParam().version
                       << " is not installed although the npm registry answered";
            GTEST_SKIP() << GetParam().id << " " << GetParam().version
                         << " is not installed: " << why;
        }
    }

    /// Starts a dispatch of `decision` against the scripted model `script` (kept running in
    /// m_server); returns the run directory, and the workspace in `workspace`.
    std::string start(const Decision& decision, const json& script, std::string& workspace,
                      std::optional<double> budget = {}, bool same_world = false) {
        auto runner = make_system_runner();
        if (!same_world || !m_scratch) { // a resumed run continues in its first run's world
            auto created = probes::Scratch::create(m_dir.path(), "", *runner);
            EXPECT_TRUE(created) << created.error().message;
            m_scratch.reset();
            m_scratch.emplace(std::move(*created)); // kept until the run has ended
        }
        auto& scratch = m_scratch;
        auto parsed = probes::parse_script(script.dump());
        EXPECT_TRUE(parsed);
        const auto& adapter = **adapters::find_adapter(decision.harness);
        m_server = std::make_unique<probes::ModelServer>(
            *parsed, adapter.tools_at(GetParam().version), scratch->workspace());
        EXPECT_TRUE(m_server->start());
        auto aimed = testing::aimed_at(decision, *m_server, *scratch, scratch->workspace());
        EXPECT_TRUE(aimed) << aimed.error().message;
        const Decision probed = aimed ? *aimed : decision;
        dispatch::Receipt receipt = dispatch::receipt_for(decision);
        receipt.max_budget_usd = budget;
        receipt.budget_enforced = budget && adapter.enforces_budget();
        workspace = scratch->workspace();
        const dispatch::StartRequest request{
            probed,
            receipt,
            "Answer with your final message.",
            scratch->workspace(),
            scratch->environment(current_environment()),
            scratch->workspace() + "/.sonata/runs", // where a dispatch in a project puts it
            SONATA_BIN,
            dispatch::RunLimits{std::chrono::seconds(180), std::chrono::seconds(180), 1U << 20U}};
        auto dir = dispatch::start_run(request);
        EXPECT_TRUE(dir) << dir.error().message;
        m_run_dir = dir ? *dir : std::string();
        return m_run_dir;
    }

    /// A failed test shows the last run's logs and receipt, whichever check failed.
    void TearDown() override {
        if (HasFailure() && !m_run_dir.empty())
            std::cout << "the last run, " << m_run_dir << ":\n" << testing::run_logs(m_run_dir);
    }

    /// Waits for the run; a run that does not end as `expected` shows its logs and receipt.
    static dispatch::Receipt wait(const std::string& dir, dispatch::RunState expected) {
        return testing::wait_for_run(dir, expected, std::chrono::seconds(200));
    }

    /// One dispatch of `decision` against a scripted model that answers `token` (with
    /// `write_report`, it first writes the token to the report path the task names); the final
    /// receipt. `refused_write` tells whether the harness answered the write with a refusal.
    dispatch::Receipt run(const Decision& decision, const std::string& token, std::string& report,
                          bool write_report = false, bool* refused_write = nullptr) {
        std::string workspace;
        const json steps = write_report
                               ? json::array({{{"intent", "write_report"}, {"content", token}}})
                               : json::array();
        const std::string dir =
            start(decision, json{{"steps", steps}, {"final", token}}, workspace);
        const auto receipt = wait(dir, dispatch::RunState::done);
        report = testing::text_or_empty(dir + "/report.md");
        if (refused_write != nullptr) {
            // A refusal as the adapter knows its harness's wording (qwen 0.24.4: "not listed in
            // the active core tools allowlist"), or one that says so in plain words.
            const auto refusals = (*adapters::find_adapter(decision.harness))->refusal_texts();
            *refused_write = false;
            for (const auto& result : m_server->tool_results()) {
                if (result.text.find("declined") != std::string::npos ||
                    result.text.find("denied") != std::string::npos ||
                    probes::refused_for_permission(result.text, refusals)) {
                    *refused_write = true;
                }
            }
        }
        return receipt;
    }

    /// The decision for `mode` and a role of `kind` on this machine.
    Result<Decision> decide(Mode mode, RoleKind kind, std::optional<double> budget = {},
                            const std::string& resume = {}) {
        return testing::decide_real({GetParam().id, m_bin, GetParam().version, mode, kind,
                                     m_dir.path() + "/support", budget, resume});
    }

    std::optional<probes::Scratch> m_scratch;
    std::unique_ptr<probes::ModelServer> m_server;
    std::string m_run_dir;
    testing::ScratchDir m_dir;
    std::string m_bin;
};

TEST_P(DispatchConformance, EveryMappingReachesDoneWithTheModelsReport) {
    const Pin& pin = GetParam();
    int dispatched = 0;
    int tui_dispatched = 0;
    int reports_written = 0;
    for (const auto& [mode, kind] : k_mappings) {
        auto decision = decide(mode, kind);
        ASSERT_TRUE(decision) << decision.error().message;
        if (!decision->runs()) continue;
        const bool tui = decision->invocation().interactive;
        const std::string token = "sonata-token-" + pin.id + "-" + std::string(to_string(mode));
        std::string report;
        const auto receipt = run(*decision, token, report);
        EXPECT_EQ(receipt.state, dispatch::RunState::done)
            << to_string(mode) << ": " << receipt.degraded_reason;
        EXPECT_FALSE(receipt.degraded) << to_string(mode) << ": " << receipt.degraded_reason;
        EXPECT_EQ(to_string(receipt.report_source), tui ? "pane-text"
                                                    : kind == RoleKind::read_only
                                                        ? "terminal-output"
                                                        : "final-message")
            << to_string(mode);
        EXPECT_EQ(receipt.interactive, tui);
        if (tui) {
            EXPECT_TRUE(receipt.exit_code.has_value() && *receipt.exit_code == 0)
                << to_string(mode) << ": the adapter's quit keys end the TUI";
            ++tui_dispatched;
        }
        EXPECT_NE(report.find(token), std::string::npos) << to_string(mode) << ": " << report;
        if (!tui &&
            !(*adapters::find_adapter(pin.id))->completion_export_args("s", pin.version).empty()) {
            EXPECT_EQ(to_string(receipt.completion), "verified") << to_string(mode);
        }
        ++dispatched;
        if (mode == Mode::accept_edits || mode == Mode::bypass_permissions) {
            // A model that follows the reporting contract: the harness writes report.md itself,
            // unless its mapping withholds file writes (qwen's --bare: write_file is declined),
            // and then the final message is still the report.
            const std::string written = token + "-written";
            bool refused = false;
            const auto wrote = run(*decision, written, report, true, &refused);
            EXPECT_EQ(to_string(wrote.report_source), refused ? "final-message" : "report.md")
                << to_string(mode) << (refused ? ": the write was refused" : "");
            EXPECT_FALSE(wrote.degraded) << to_string(mode) << ": " << wrote.degraded_reason;
            EXPECT_EQ(report.rfind(written, 0), 0U) << to_string(mode) << ": " << report;
            if (!refused) ++reports_written;
        }
    }
    EXPECT_GT(dispatched, 0) << "sonata runs no mapping of " << pin.id;
    RecordProperty("dispatched_mappings", dispatched);
    std::cout << "[ dispatched ] " << pin.id << ": " << dispatched << " mapping(s) reached done, "
              << tui_dispatched << " of them in tmux; " << reports_written
              << " run(s) where the harness wrote report.md\n";
}

TEST_P(DispatchConformance, ATuiMappingPausesAtAnApprovalCardAndApproveYesRunsTheCommand) {
    auto decision = decide(Mode::default_mode, RoleKind::write);
    ASSERT_TRUE(decision) << decision.error().message;
    if (!decision->runs() || !decision->invocation().interactive)
        GTEST_SKIP() << GetParam().id << "'s default mapping runs headless: no approval card";
    const std::string token = "sonata-token-approved-" + GetParam().id;
    std::string workspace;
    json touch = {{"intent", "shell"}, {"command", "touch approved-by-user.txt"}};
    if (GetParam().id == "codex") {
        // How a model asks codex for a command outside its sandbox (the on-request policy): the
        // harness must put up an approval card.
        touch["args"] = {{"sandbox_permissions", "require_escalated"},
                         {"justification", "May I create approved-by-user.txt?"}};
    } else {
        // reasonix asks before any write in its read-only posture; an approved shell command
        // would still need bubblewrap, which a host may lack, while its file tool does not.
        touch = {{"intent", "write_file"}, {"path", "approved-by-user.txt"}, {"content", "yes\n"}};
    }
    const std::string dir =
        start(*decision, json{{"steps", json::array({touch})}, {"final", token}}, workspace);
    const auto paused = wait(dir, dispatch::RunState::paused);
    const auto patterns = (*adapters::find_adapter(GetParam().id))->screen_patterns();
    EXPECT_TRUE(std::any_of(
        patterns.approval.begin(), patterns.approval.end(),
        [&](const std::string& p) { return paused.prompt.find(p) != std::string::npos; }))
        << paused.prompt;
    EXPECT_FALSE(std::filesystem::exists(workspace + "/approved-by-user.txt"));
    auto answered = dispatch::approve_run(dir, true, std::chrono::seconds(15));
    ASSERT_TRUE(answered) << answered.error().message;
    const auto done = wait(dir, dispatch::RunState::done);
    EXPECT_FALSE(done.degraded) << done.degraded_reason;
    ASSERT_EQ(done.approvals.size(), 1U);
    EXPECT_EQ(done.approvals[0].answer, "yes");
    EXPECT_TRUE(std::filesystem::exists(workspace + "/approved-by-user.txt"))
        << "the approved command ran";
    EXPECT_NE(testing::read_text(dir + "/report.md").find(token), std::string::npos);
}

TEST_P(DispatchConformance, TheCostComesFromTheHarnessesOwnOutputAndIsNeverAGuess) {
    // Each model request reports 12345 input tokens. The adapters that read a cost or token counts
    // say where it came from; the others leave it unknown, with no value.
    const Pin& pin = GetParam();
    Mode mode = Mode::accept_edits;
    auto decision = decide(mode, RoleKind::write);
    ASSERT_TRUE(decision) << decision.error().message;
    if (!decision->runs() || decision->invocation().interactive) {
        mode = Mode::plan;
        decision = decide(mode, RoleKind::read_only);
        ASSERT_TRUE(decision && decision->runs());
    }
    std::string workspace;
    const json script = {
        {"steps", json::array()}, {"final", "cost-token"}, {"input_tokens", 12345}};
    const auto r = wait(start(*decision, script, workspace), dispatch::RunState::done);
    if (pin.id == "claude") {
        EXPECT_EQ(r.cost.source, CostSource::native);
        ASSERT_TRUE(r.cost.usd.has_value());
        EXPECT_GT(*r.cost.usd, 0.0);
        ASSERT_TRUE(r.cost.input_tokens.has_value());
        EXPECT_EQ(*r.cost.input_tokens % 12345, 0) << *r.cost.input_tokens;
        EXPECT_GE(*r.cost.input_tokens, 12345);
    } else if (r.cost.source == CostSource::unknown) {
        EXPECT_FALSE(r.cost.usd.has_value()) << "an unknown cost is never a number";
    }
    // The harnesses whose own output or files say how many tokens the run used (opencode 2.1.2
    // prints the last step's finish in few runs: its tokens stay unknown, never an undercount).
    const std::set<std::string> counting{"claude", "codex",   "opencode", "gemini", "qwen",
                                         "kilo",   "copilot", "droid",    "cn"};
    const bool v2_opencode = pin.id == "opencode" && pin.version.rfind("1.", 0) != 0;
    if (counting.count(pin.id) != 0 && !v2_opencode) {
        ASSERT_TRUE(r.cost.input_tokens.has_value()) << pin.id << " reported no token counts";
        EXPECT_GE(*r.cost.input_tokens, 12345);
    }
    if (r.cost.input_tokens) {
        EXPECT_EQ(*r.cost.input_tokens % 12345, 0)
            << pin.id << " reported input tokens the model never claimed";
    }
    std::cout << "[ cost ] " << pin.id << " " << to_string(mode) << ": source "
              << to_string(r.cost.source) << ", value "
              << (r.cost.usd ? std::to_string(*r.cost.usd) : "none") << ", input tokens "
              << (r.cost.input_tokens ? std::to_string(*r.cost.input_tokens) : "none") << "\n";
}

TEST_P(DispatchConformance, ABudgetTheHarnessEnforcesStopsTheRunAndTheReceiptSaysSo) {
    if (!(*adapters::find_adapter(GetParam().id))->enforces_budget())
        GTEST_SKIP() << GetParam().id << " enforces no budget (its dispatches warn instead)";
    // Each turn claims two million input tokens, far past a budget of one cent: the harness must
    // stop at the first answer and ask the model nothing more. That answer's own write may run:
    // claude 2.1.332 wrote a.txt in one suite run of four, under load (a race between the tool and
    // its budget check), so what is ruled out is the next turn.
    auto decision = decide(Mode::accept_edits, RoleKind::write, 0.01);
    ASSERT_TRUE(decision && decision->runs());
    std::string workspace;
    const json script = {
        {"steps", json::array({{{"intent", "write_file"}, {"path", "a.txt"}, {"content", "a"}},
                               {{"intent", "write_file"}, {"path", "b.txt"}, {"content", "b"}}})},
        {"final", "never reached"},
        {"input_tokens", 2000000}};
    const auto r = wait(start(*decision, script, workspace, 0.01), dispatch::RunState::failed);
    EXPECT_TRUE(r.budget_enforced);
    EXPECT_EQ(r.cost.source, CostSource::native);
    ASSERT_TRUE(r.cost.usd.has_value());
    EXPECT_GT(*r.cost.usd, 0.01);
    EXPECT_EQ(r.degraded_reason.rfind("stopped at its budget: it spent $", 0), 0U)
        << r.degraded_reason;
    EXPECT_FALSE(std::filesystem::exists(workspace + "/b.txt"))
        << "the write of the turn after the one that broke the budget ran";
    EXPECT_TRUE(m_server->tool_results().empty())
        << "the harness sent a tool's result to the model after its budget was spent";

    // A budget that holds changes nothing.
    auto roomy = decide(Mode::accept_edits, RoleKind::write, 1000.0);
    ASSERT_TRUE(roomy && roomy->runs());
    std::string again;
    const json small = {{"steps", json::array()}, {"final", "within-budget"}, {"input_tokens", 10}};
    const auto ok = wait(start(*roomy, small, again, 1000.0), dispatch::RunState::done);
    EXPECT_FALSE(ok.degraded) << ok.degraded_reason;
}

TEST_P(DispatchConformance, ARunThatExitsZeroWithoutCompletingIsNotDone) {
    if ((*adapters::find_adapter(GetParam().id))
            ->completion_export_args("s", GetParam().version)
            .empty())
        GTEST_SKIP() << GetParam().id << "'s exit status is taken as it is: no completion check";
    if (GetParam().id != "opencode" || GetParam().version.rfind("1.", 0) != 0)
        GTEST_SKIP() << "only opencode 1.x's acceptEdits auto-rejects a write outside the "
                        "workspace and ends the run there (kilo's and opencode 2.x's deny it, and "
                        "the run goes on)";
    // acceptEdits auto-rejects a write outside the workspace (opencode 1.18.33) and the run ends
    // there, exit 0: whatever the harness's exit status, the run must not read done. (Measured:
    // 1.18.33 prints nothing then, so the no-report rule ends it before the export is read; an
    // interrupted session's export is checked against the one captured from 1.18.33, in the unit
    // tier.)
    auto decision = decide(Mode::accept_edits, RoleKind::write);
    ASSERT_TRUE(decision && decision->runs());
    std::string workspace;
    const json script = {
        {"steps", json::array({{{"intent", "write_file"},
                                {"path", m_dir.path() + "/outside-the-workspace.txt"},
                                {"content", "x"}}})},
        {"final", "claims to be done"}};
    const std::string dir = start(*decision, script, workspace);
    auto ended = dispatch::wait_run(dir, std::chrono::seconds(200));
    ASSERT_TRUE(ended) << ended.error().message;
    EXPECT_TRUE(dispatch::is_final(ended->state));
    EXPECT_NE(ended->state, dispatch::RunState::done) << dispatch::receipt_to_json(*ended);
    EXPECT_FALSE(std::filesystem::exists(m_dir.path() + "/outside-the-workspace.txt"));
    std::cout << "[ completion ] " << GetParam().id << ": exit "
              << (ended->exit_code ? std::to_string(*ended->exit_code) : "-") << ", state "
              << to_string(ended->state) << ", completion \"" << to_string(ended->completion)
              << "\", " << ended->degraded_reason << "\n";
}

TEST_P(DispatchConformance, AResumedRunContinuesTheSessionItsFirstRunRecorded) {
    // The first run (plan, read-only) has its write refused and ends; its receipt records the
    // harness's session. The second is planned with that session to resume, as dispatch --resume
    // plans it, in the same world: the model then sees the first run's refused call again.
    const Pin& pin = GetParam();
    auto first = decide(Mode::plan, RoleKind::read_only);
    ASSERT_TRUE(first) << first.error().message;
    if (!first->runs() || first->invocation().interactive)
        GTEST_SKIP() << pin.id << " has no headless plan mapping";
    auto resumable = decide(Mode::plan, RoleKind::read_only, {}, "probe-session");
    if (!resumable || !resumable->runs()) GTEST_SKIP() << pin.id << " cannot resume a session";
    std::string workspace;
    json step = {{"intent", "write_file"}, {"path", "first.txt"}, {"content", "1"}};
    // cn -p ends its run at a refused call, telling the model nothing (its denial-visibility is
    // violated): its first run lists the workspace instead, a call plan allows.
    if (pin.id == "cn")
        step = {{"intent", "call_tool"}, {"name", "List"}, {"args", {{"dirpath", "."}}}};
    const json script = {{"steps", json::array({step})}, {"final", "first-token"}};
    const auto one = wait(start(*first, script, workspace), dispatch::RunState::done);
    ASSERT_FALSE(one.harness_session.empty()) << pin.id << " recorded no session to resume";
    auto second = decide(Mode::plan, RoleKind::read_only, {}, one.harness_session);
    ASSERT_TRUE(second && second->runs());
    const json again = {{"steps", json::array()}, {"final", "second-token"}};
    const auto two = wait(start(*second, again, workspace, {}, true), dispatch::RunState::done);
    // The second script calls no tool: a tool result in its conversation is the first run's.
    bool continued = false;
    for (const auto& request : m_server->recording())
        continued = continued || !request.tool_results.empty();
    EXPECT_TRUE(continued) << pin.id << ": the resumed run's model never saw the first run's call";
    EXPECT_FALSE(std::filesystem::exists(workspace + "/first.txt"));
    std::cout << "[ resume ] " << pin.id << ": session " << one.harness_session
              << " continued by run " << two.id << " (" << two.argv.size() << " arguments)\n";
}

/// The processes whose environment names `state` as its XDG_STATE_HOME: a harness's shared service
/// keeps the environment of the run that started it.
std::vector<pid_t> processes_of_state(const std::string& state) {
    std::vector<pid_t> found;
    const std::string wanted = "XDG_STATE_HOME=" + state;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream in(entry.path() / "environ", std::ios::binary);
        const std::string environ{std::istreambuf_iterator<char>(in), {}};
        for (std::size_t at = 0; at < environ.size();) {
            const auto end = std::min(environ.find('\0', at), environ.size());
            if (environ.compare(at, end - at, wanted) == 0) found.push_back(std::stoi(name));
            at = end + 1;
        }
    }
    return found;
}

// opencode 2.x keeps a user's sessions, credentials and saved "always" grants in one database, and
// sends every run through one shared service per user that keeps the environment of the run that
// started it. A dispatch runs on its own server (--standalone) and on sonata's database
// (OPENCODE_DB): it leaves no service and nothing in the user's database. Each, stripped, shows
// what it keeps out.
class OpenCodeTwoIsolation : public DispatchConformance {};

TEST_P(OpenCodeTwoIsolation, ADispatchLeavesNoServiceAndNothingInTheUsersDatabase) {
    auto decision = decide(Mode::plan, RoleKind::read_only);
    ASSERT_TRUE(decision && decision->runs());
    const json script = {{"steps", json::array()}, {"final", "isolated"}};
    const auto dispatched = [&](const Decision& d) {
        std::string workspace;
        return wait(start(d, script, workspace), dispatch::RunState::done);
    };
    const auto paths = [&] {
        const auto env = m_scratch->environment(current_environment());
        // The data directory as the endpoint injection moves it, under the run's HOME.
        return std::pair{m_scratch->home() + "/.local/share/opencode", env.at("XDG_STATE_HOME")};
    };
    dispatched(*decision);
    auto [data, state] = paths();
    EXPECT_TRUE(std::filesystem::exists(data + "/sonata-dispatch.db"));
    EXPECT_FALSE(std::filesystem::exists(data + "/opencode.db")) << "the user's database was made";
    EXPECT_FALSE(std::filesystem::exists(state + "/opencode/service.json"));
    EXPECT_TRUE(processes_of_state(state).empty()) << "a service outlived the run";

    Decision shared_db = *decision;
    std::get<Invocation>(shared_db.outcome).env.erase("OPENCODE_DB");
    dispatched(shared_db);
    std::tie(data, state) = paths();
    EXPECT_TRUE(std::filesystem::exists(data + "/opencode.db"))
        << "without OPENCODE_DB the run should have used the user's database";

    Decision shared_service = *decision;
    auto& argv = std::get<Invocation>(shared_service.outcome).argv;
    argv.erase(std::remove(argv.begin(), argv.end(), "--standalone"), argv.end());
    const auto through_service = dispatched(shared_service);
    std::tie(data, state) = paths();
    EXPECT_TRUE(std::filesystem::exists(state + "/opencode/service.json") ||
                !processes_of_state(state).empty())
        << "without --standalone the run should have gone through a shared service";
    std::cout << "[ isolation ] without --standalone: " << through_service.note << "\n";
    for (const pid_t pid : processes_of_state(state))
        ::kill(pid, SIGKILL);
}

INSTANTIATE_TEST_SUITE_P(Pinned, DispatchConformance, ::testing::ValuesIn(pins()),
                         testing::pin_name);

/// Every agent of `decision`'s injected config asks before everything, as a user's own agent may.
Decision asking_agent(Decision decision) {
    auto& env = std::get<Invocation>(decision.outcome).env;
    auto config = json::parse(env.at("OPENCODE_CONFIG_CONTENT"));
    for (auto& agent : config.at("agents")) {
        agent["permissions"] =
            json::array({{{"action", "*"}, {"resource", "*"}, {"effect", "ask"}}});
    }
    env["OPENCODE_CONFIG_CONTENT"] = config.dump();
    return decision;
}

// A saved "always" grant in the user's opencode database (2.x keeps them per project) turns an ask
// into an allow: planted there, it makes an agent that asks run the shell. A dispatch never sees
// it: its runs use sonata's database, and its agent asks nothing (it denies). The grant is shown
// live first, so that the runs that follow could see it.
TEST_P(OpenCodeTwoIsolation, ASavedGrantInTheUsersDatabaseNeverReachesADispatch) {
    const auto sqlite = search_path("sqlite3", "/usr/bin:/bin");
    if (!sqlite) GTEST_SKIP() << "sqlite3 plants the grant (scripts/setup.sh test installs it)";
    auto decision = decide(Mode::accept_edits, RoleKind::write);
    ASSERT_TRUE(decision && decision->runs());
    Decision users_db = *decision;
    std::get<Invocation>(users_db.outcome).env.erase("OPENCODE_DB");
    std::string workspace;
    const auto shell_run = [&](const Decision& d, const std::string& file, bool same_world) {
        const json script = {
            {"steps", json::array({{{"intent", "shell"}, {"command", "printf x > " + file}}})},
            {"final", "granted?"}};
        wait(start(d, script, workspace, {}, same_world), dispatch::RunState::done);
        return std::filesystem::exists(workspace + "/" + file);
    };
    // A first run on the user's database records this workspace's project there.
    EXPECT_FALSE(shell_run(asking_agent(users_db), "asked.txt", false)) << "an ask ran unanswered";
    const std::string db = m_scratch->home() + "/.local/share/opencode/opencode.db";
    ProcessRequest plant;
    plant.argv = {*sqlite, db,
                  "INSERT INTO permission SELECT 'per_sonata_' || action || '_' || id, id, action, "
                  "'*', 1796650000000, 1796650000000 FROM project, (SELECT 'shell' AS action UNION "
                  "SELECT 'edit' UNION SELECT 'external_directory');"};
    const auto planted = make_system_runner()->run(plant);
    ASSERT_TRUE(planted && planted->exit_code == 0) << (planted ? planted->err : "");

    EXPECT_TRUE(shell_run(asking_agent(users_db), "granted.txt", true))
        << "the planted grant should let an asking agent on the user's database run the shell";
    EXPECT_FALSE(shell_run(asking_agent(*decision), "sonata-db.txt", true))
        << "a grant in the user's database reached a run on sonata's";
    EXPECT_FALSE(shell_run(*decision, "planned.txt", true)) << "the dispatch ran the shell";
}

/// The pins of opencode's 2.x line.
std::vector<Pin> opencode_two() {
    auto all = testing::pins_of("opencode");
    std::erase_if(all, [](const Pin& pin) { return pin.version.rfind("1.", 0) == 0; });
    return all;
}

INSTANTIATE_TEST_SUITE_P(Pinned, OpenCodeTwoIsolation, ::testing::ValuesIn(opencode_two()),
                         testing::pin_name);

} // namespace
} // namespace sonata
