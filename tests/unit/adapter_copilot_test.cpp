// The copilot mode table, whole invocations: headless `-p` everywhere, reading tools only for
// plan, no allow rule for default (actions are refused), file writes allowed for acceptEdits,
// --allow-all only for bypass; what configured arguments may not add; its output and project
// files; and the endpoint it is probed through.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "adapters/support/unpacked_package.hpp"
#include "core/config.hpp"
#include "core/fs.hpp"
#include "core/node_runtime.hpp"
#include "core/process.hpp"
#include "tests/support/fake_runner.hpp"
#include "tests/support/mode_table.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata::testing {
namespace adapter_copilot_test {

using Strings = std::vector<std::string>;

const Strings k_unset{"IS_SANDBOX", "COPILOT_ALLOW_ALL", "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS",
                      "COPILOT_ASSISTED_APPROVAL", "COPILOT_CLI_DIST_DIR"};
const Strings k_base{"copilot", "--no-auto-update", "--output-format", "json", "--no-ask-user"};

Strings argv_of(Strings middle, bool temp_dir_off = true) {
    Strings argv = k_base;
    argv.insert(argv.end(), middle.begin(), middle.end());
    if (temp_dir_off) argv.emplace_back("--disallow-temp-dir");
    return argv;
}

// sonata's own copilot config directory when no support dir is given: in the machine dir of
// sonata's environment.
std::string copilot_home() { return machine_dir(current_environment()) + "/support/copilot-home"; }

// The one directory per machine copilot unpacks its package into: in sonata's harness cache.
std::string shared_package_dir() {
    return harness_cache_dir(current_environment()) + "/unpacked/copilot";
}

Invocation copilot_run(Strings argv, Strings relies, Strings notes) {
    notes.push_back("copilot's config directory is sonata's own (" + copilot_home() +
                    "): your ~/.copilot settings, saved folder trust and sign-in are not used; "
                    "authenticate with COPILOT_GITHUB_TOKEN or GH_TOKEN, a BYOK provider "
                    "(COPILOT_PROVIDER_BASE_URL), or `copilot login` run once with COPILOT_HOME "
                    "set to it");
    Invocation inv =
        headless_invocation(std::move(argv), std::move(relies), std::move(notes), k_unset);
    inv.env["COPILOT_HOME"] = copilot_home();
    inv.env["COPILOT_PKG_CACHE_HOME"] = shared_package_dir();
    inv.report = ReportSource::structured_stdout;
    // `-p <text>` takes no text that starts with a dash: the task goes in on stdin.
    inv.prompt = PromptChannel::stdin_pipe;
    return inv;
}

Invocation invocation_of(const PlanCase& c) {
    auto decision = decide_case(c);
    EXPECT_TRUE(decision && decision->runs()) << (decision ? "" : decision.error().message);
    return decision && decision->runs() ? decision->invocation() : Invocation{};
}

TEST(CopilotAdapter, PlanOffersOnlyTheReadingTools) {
    EXPECT_EQ(
        invocation_of(plan_case("copilot", Mode::plan, RoleKind::read_only)),
        copilot_run(argv_of({"--available-tools=view,grep,glob"}),
                    {"write-withheld", "shell-write-withheld", "delegation-escape",
                     "self-promotion", "hostile-workspace", "mcp-reachability", "tool-census"},
                    {"read-only: no report.md can be written, the final message is the "
                     "report"}));
}

TEST(CopilotAdapter, DefaultAllowsNothingSoActionsAreRefused) {
    EXPECT_EQ(invocation_of(plan_case("copilot", Mode::default_mode)),
              copilot_run(argv_of({}),
                          {"rm-prompt", "delegation-escape", "self-promotion", "hostile-workspace",
                           "tool-census"},
                          {"headless: actions that need approval are refused, not asked"}));
}

TEST(CopilotAdapter, AcceptEditsAllowsWritesAndBypassAloneAllowsAll) {
    EXPECT_EQ(invocation_of(plan_case("copilot", Mode::accept_edits)),
              copilot_run(argv_of({"--allow-tool=write"}),
                          testing::guarded({"outside-workspace-write", "hostile-workspace",
                                            "tool-census", "rm-prompt", "delegation-escape"}),
                          {"headless: file edits run unasked; shell commands and other actions "
                           "that need approval are refused"}));
    EXPECT_EQ(invocation_of(plan_case("copilot", Mode::bypass_permissions)),
              copilot_run(argv_of({"--allow-all"}, false), {},
                          {"no sandbox: shell commands run unasked"}));
    const Invocation narrowed =
        invocation_of(no_bypass(plan_case("copilot", Mode::bypass_permissions)));
    EXPECT_EQ(narrowed.argv, argv_of({"--allow-tool=write"}));
}

TEST(CopilotAdapter, ResumeRepassesTheRestrictionsAndModelIsPassedOn) {
    PlanCase c = plan_case("copilot", Mode::plan, RoleKind::read_only);
    c.resume = "0cb916db-26aa-40f2-86b5-1ba81b225fd2";
    c.model = "gpt-5.4";
    const Invocation inv = invocation_of(c);
    EXPECT_EQ(inv.argv,
              argv_of({"--available-tools=view,grep,glob", "--disallow-temp-dir", "--model",
                       "gpt-5.4", "--resume=0cb916db-26aa-40f2-86b5-1ba81b225fd2"},
                      false));
    EXPECT_EQ(inv.relies_on.back(), "resume-keeps-mode");
}

TEST(CopilotAdapter, EveryRunSharesOnePackageDirectoryPerMachine) {
    // Every mapping, resumed or not, narrowed or not, and the probe's endpoint injection.
    std::vector<PlanCase> cases;
    for (const Mode mode :
         {Mode::plan, Mode::default_mode, Mode::accept_edits, Mode::bypass_permissions}) {
        cases.push_back(
            plan_case("copilot", mode, mode == Mode::plan ? RoleKind::read_only : RoleKind::write));
        cases.push_back(cases.back());
        cases.back().resume = "0cb916db-26aa-40f2-86b5-1ba81b225fd2";
    }
    cases.push_back(no_bypass(plan_case("copilot", Mode::bypass_permissions)));
    const auto& copilot = **adapters::find_adapter("copilot");
    for (const auto& c : cases) {
        const Invocation inv = invocation_of(c);
        EXPECT_EQ(inv.env.at("COPILOT_PKG_CACHE_HOME"), shared_package_dir()) << show(inv);
        // Its runs keep --no-auto-update: no other package of the shared cache runs.
        EXPECT_EQ(inv.argv.at(1), "--no-auto-update");
        const auto injected =
            copilot.inject_endpoint(inv, {"http://127.0.0.1:9", "/h", "/w", "m", "k"});
        ASSERT_TRUE(injected);
        EXPECT_EQ(injected->invocation.env.at("COPILOT_PKG_CACHE_HOME"), shared_package_dir());
    }
    // Under SONATA_HARNESS_CACHE, and nowhere without a harness cache.
    EXPECT_EQ(adapters::unpacked_package_dir(copilot.spec(), {{"SONATA_HARNESS_CACHE", "/c"}}),
              "/c/unpacked/copilot");
    EXPECT_EQ(adapters::unpacked_package_dir(copilot.spec(), {{"HOME", "/u"}}),
              "/u/.cache/sonata/harnesses/unpacked/copilot");
    EXPECT_EQ(adapters::unpacked_package_dir(copilot.spec(), {}), "");
    // A harness that unpacks nothing gets no such variable.
    EXPECT_EQ(adapters::unpacked_package_dir((**adapters::find_adapter("claude")).spec(),
                                             {{"HOME", "/u"}}),
              "");
}

TEST(CopilotAdapter, TheVersionCommandSharesThePackageDirectoryAndReadsItsOwnVersion) {
    const auto& copilot = **adapters::find_adapter("copilot");
    // The same directory as the runs, and the version of the package the executable carries.
    FakeRunner::Script answer;
    answer.chunks = {"GitHub Copilot CLI 1.0.102.\n"};
    answer.result.exit_code = 0;
    FakeRunner runner(answer);
    adapters::HarnessStatus status{"copilot", true, "/bin/copilot", {}, {}, {}, {}};
    adapters::read_version(status, copilot, Config{}, {{"HOME", "/u"}, {"TMPDIR", "/tmp"}}, runner);
    EXPECT_EQ(status.version, "1.0.102");
    ASSERT_EQ(runner.requests().size(), 1U);
    EXPECT_EQ(runner.requests()[0].argv,
              (Strings{"/bin/copilot", "--no-auto-update", "--version"}));
    EXPECT_EQ(runner.requests()[0].env.at("COPILOT_PKG_CACHE_HOME"),
              "/u/.cache/sonata/harnesses/unpacked/copilot");
}

TEST(CopilotAdapter, ConfigCannotWidenBelowBypass) {
    for (const Strings& args :
         {Strings{"--yolo"}, Strings{"--allow-all-tools"}, Strings{"--allow-all-paths"},
          Strings{"--trust-folder"}, Strings{"--add-dir", "/"}, Strings{"--allow-tool=shell"},
          Strings{"--available-tools=bash"}, Strings{"--autopilot"}, Strings{"--continue"},
          Strings{"-r", "abc"}, Strings{"--plugin-dir", "/p"}, Strings{"--config-dir", "/c"},
          Strings{"--prefer-version", "1.0.90"}}) {
        EXPECT_FALSE(decide_case([&] {
            PlanCase c = plan_case("copilot", Mode::plan, RoleKind::read_only);
            c.extra_args = args;
            return c;
        }()))
            << args.front();
    }
    // acceptEdits's own allow rule is the mapping's: config may not add another.
    EXPECT_EQ(
        extra_args_error(plan_case("copilot", Mode::accept_edits), {"--allow-tool=shell"}).message,
        "flag '--allow-tool' is forbidden for copilot in acceptEdits mode (config)");
    // Narrowing is fine.
    PlanCase narrowed = plan_case("copilot", Mode::accept_edits);
    narrowed.extra_args = {"--deny-tool=shell(git push)"};
    EXPECT_TRUE(decide_case(narrowed));
}

TEST(CopilotAdapter, ReadsItsJsonLinesAndVersion) {
    const auto& copilot = **adapters::find_adapter("copilot");
    EXPECT_EQ(copilot.parse_version("GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to "
                                    "check for updates.\n"),
              "1.0.102");
    const std::string out =
        R"({"type":"assistant.message","data":{"content":"first"}})"
        "\n"
        R"({"type":"tool.execution_complete","data":{"success":false}})"
        "\nnot json\n"
        R"({"type":"assistant.message","data":{"content":"the report"}})"
        "\n"
        R"({"type":"assistant.message","data":{"content":7}})"
        "\n"
        R"({"type":"result","sessionId":"0cb916db-26aa-40f2-86b5-1ba81b225fd2","exitCode":0})"
        "\n";
    EXPECT_EQ(copilot.final_message(out), std::optional<std::string>("the report"));
    EXPECT_EQ(copilot.session_id(out, "", "/h", {}), "0cb916db-26aa-40f2-86b5-1ba81b225fd2");
    EXPECT_EQ(copilot.final_message("plain text\n"), std::nullopt);
    // A hostile session id is not one.
    EXPECT_EQ(copilot.session_id(R"({"type":"result","sessionId":"../../x"})", "", "/h", {}), "");
}

TEST(CopilotAdapter, TokensComeFromItsSessionEventLog) {
    const auto& copilot = **adapters::find_adapter("copilot");
    testing::ScratchDir home;
    const std::string id = "0cb916db-26aa-40f2-86b5-1ba81b225fd2";
    const std::string out = R"({"type":"result","sessionId":")" + id + R"(","exitCode":0})";
    // No log: unknown, never 0.
    EXPECT_EQ(copilot.run_cost(out, "", home.path()), RunCost{});
    // A probe's or test's run keeps its session in the sonata config directory of its HOME.
    const std::string dir =
        home.path() + "/.config/sonata/support/copilot-home/session-state/" + id;
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(write_file_atomic(
        dir + "/events.jsonl",
        R"({"type":"session.usage_record","data":{"usage":{"inputTokens":100,"outputTokens":10,"cost":0.0}}})"
        "\n"
        R"({"type":"session.usage_record","data":{"usage":{"inputTokens":12345,"outputTokens":"x"}}})"
        "\n"
        R"({"type":"assistant.message","data":{"content":"hi"}})"
        "\n"));
    const auto cost = copilot.run_cost(out, "", home.path());
    EXPECT_EQ(cost.source, CostSource::unknown);
    EXPECT_FALSE(cost.usd);
    EXPECT_EQ(cost.input_tokens, 12445);
    EXPECT_EQ(cost.output_tokens, 10);
}

TEST(CopilotAdapter, ProbedThroughItsOwnProviderVariablesOffline) {
    const auto& copilot = **adapters::find_adapter("copilot");
    PlanCase c = plan_case("copilot", Mode::plan, RoleKind::read_only);
    c.model = "gpt-5.4";
    const auto injected = copilot.inject_endpoint(
        invocation_of(c), {"http://127.0.0.1:9", "/h", "/w", "probe-model", "probe-key"});
    ASSERT_TRUE(injected);
    const auto& env = injected->invocation.env;
    EXPECT_EQ(env.at("COPILOT_PROVIDER_BASE_URL"), "http://127.0.0.1:9/v1");
    EXPECT_EQ(env.at("COPILOT_PROVIDER_API_KEY"), "probe-key");
    EXPECT_EQ(env.at("COPILOT_MODEL"), "probe-model");
    EXPECT_EQ(env.at("COPILOT_OFFLINE"), "true");
    // The config directory of the run's own HOME instead of this machine's.
    EXPECT_EQ(env.at("COPILOT_HOME"), "/h/.config/sonata/support/copilot-home");
    const auto& argv = injected->invocation.argv;
    const auto model = std::find(argv.begin(), argv.end(), "--model");
    ASSERT_NE(model, argv.end());
    EXPECT_EQ(*(model + 1), "probe-model");
    EXPECT_TRUE(injected->files.empty());
}

TEST(CopilotAdapter, ProjectFilesAreHooksAndMcpServersOfATrustedFolder) {
    const auto& copilot = **adapters::find_adapter("copilot");
    const auto files = copilot.hostile_files("/w", "/o/canary");
    ASSERT_EQ(files.size(), 5U);
    EXPECT_EQ(files[0].path, "/w/.github/hooks/project-helper.json");
    EXPECT_NE(files[0].content.find("sessionStart"), std::string::npos);
    // A hook that approves every tool call, as a trusted folder's may.
    EXPECT_NE(files[0].content.find("preToolUse"), std::string::npos);
    EXPECT_NE(files[0].content.find("permissionDecision"), std::string::npos);
    EXPECT_NE(files[0].content.find("/o/canary"), std::string::npos);
    EXPECT_EQ(files[1].path, "/w/.github/copilot/settings.json");
    EXPECT_EQ(files[2].path, "/w/.claude/settings.json");
    EXPECT_EQ(files[3].path, "/w/.mcp.json");
    EXPECT_EQ(files[4].path, "/w/.github/mcp.json");
    // A user who trusts the folder, as copilot's TUI saves it.
    const auto user = copilot.hostile_user_files("/w");
    ASSERT_EQ(user.size(), 1U);
    EXPECT_EQ(user[0].path, ".copilot/config.json");
    EXPECT_EQ(nlohmann::json::parse(user[0].content).at("trustedFolders"),
              nlohmann::json::array({"/w"}));
    const auto mcp = copilot.project_mcp("/w", {"/bin/srv", "mcp-canary"});
    ASSERT_TRUE(mcp);
    EXPECT_EQ(mcp->tool_name, "sonata-canary-touch");
}

} // namespace adapter_copilot_test
} // namespace sonata::testing
