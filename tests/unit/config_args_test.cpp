// Configured extra arguments may only add to a mapping, never repeat a flag it sets: a second
// `--sandbox`, `--permission-mode`, `--approval-mode` or `--agent` could widen the mode (the
// harness would take the last one). codex's repeatable `-c` may not name a key the mapping decides.
#include <gtest/gtest.h>

#include "tests/support/plan_helpers.hpp"

namespace sonata::testing {
namespace {

struct Repeat {
    std::string harness;
    std::vector<std::string> args;
    std::string error;
};

/// A write dispatch of `harness` from a `mode` session, with configured `args`.
PlanCase in_mode(const std::string& harness, Mode mode, std::vector<std::string> args,
                 RoleKind role = RoleKind::write) {
    PlanCase plan = plan_case(harness, mode, role);
    plan.extra_args = std::move(args);
    return plan;
}

PlanCase read_only(const std::string& harness, std::vector<std::string> args) {
    return in_mode(harness, Mode::plan, std::move(args), RoleKind::read_only);
}

/// Each read-only plan with those arguments is a config error with exactly that message.
void expect_config_errors(const std::vector<Repeat>& repeats) {
    for (const auto& r : repeats) {
        const auto decision = decide_case(read_only(r.harness, r.args));
        ASSERT_FALSE(decision) << r.harness << ": " << show(decision->invocation());
        EXPECT_EQ(decision.error().code, ExitCode::config) << r.harness;
        EXPECT_EQ(decision.error().message, r.error);
    }
}

TEST(ConfigArgs, MayNotRepeatAFlagTheMappingSets) {
    const std::vector<Repeat> repeats{
        {"codex",
         {"--sandbox", "danger-full-access"},
         "flag '--sandbox' is set by sonata's mapping and may not be repeated for codex in plan "
         "mode (config)"},
        {"claude",
         {"--permission-mode", "bypassPermissions"},
         "flag '--permission-mode' is set by sonata's mapping and may not be repeated for claude "
         "in plan mode (config)"},
        {"gemini",
         {"--approval-mode=yolo"},
         "flag '--approval-mode' is set by sonata's mapping and may not be repeated for gemini in "
         "plan mode (config)"},
        {"qwen",
         {"--approval-mode", "yolo"},
         "flag '--approval-mode' is set by sonata's mapping and may not be repeated for qwen in "
         "plan mode (config)"},
        {"opencode",
         {"--agent", "build"},
         "flag '--agent' is set by sonata's mapping and may not be repeated for opencode in plan "
         "mode (config)"},
    };
    expect_config_errors(repeats);
}

TEST(ConfigArgs, CodexConfigOverridesMayNotTouchTheSandboxOrApprovals) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"-c", "sandbox_mode=\"danger-full-access\""},
          std::vector<std::string>{"-c", "approval_policy=\"never\""},
          std::vector<std::string>{"--config=sandbox_workspace_write.writable_roots=[\"/\"]"},
          std::vector<std::string>{"-p", "wide-open"}}) {
        const auto decision = decide_case(read_only("codex", args));
        ASSERT_FALSE(decision) << args.back();
        EXPECT_EQ(decision.error().code, ExitCode::config) << args.back();
    }
    const auto allowed = decide_case(read_only("codex", {"-c", "model_reasoning_effort=\"high\""}));
    ASSERT_TRUE(allowed) << allowed.error().message;
    const auto& argv = allowed->invocation().argv;
    EXPECT_EQ(std::vector<std::string>(argv.end() - 2, argv.end()),
              (std::vector<std::string>{"-c", "model_reasoning_effort=\"high\""}));
}

TEST(ConfigArgs, ShortAliasesAndCamelCaseAreTheSameFlag) {
    const std::vector<Repeat> repeats{
        {"codex",
         {"-s", "danger-full-access"},
         "flag '-s' is set by sonata's mapping and may not be repeated for codex in plan mode "
         "(config)"},
        {"gemini",
         {"--approvalMode", "yolo"},
         "flag '--approvalMode' is set by sonata's mapping and may not be repeated for gemini in "
         "plan mode (config)"},
        {"qwen",
         {"--approvalMode=yolo"},
         "flag '--approvalMode' is set by sonata's mapping and may not be repeated for qwen in "
         "plan mode (config)"},
        {"claude",
         {"--permissionMode", "bypassPermissions"},
         "flag '--permissionMode' is set by sonata's mapping and may not be repeated for claude in "
         "plan mode (config)"},
        {"gemini", {"-y"}, "flag '-y' is forbidden for gemini in plan mode (config)"},
        {"codex", {"-a", "never"}, "flag '-a' is forbidden for codex in plan mode (config)"},
    };
    expect_config_errors(repeats);
}

TEST(ConfigArgs, BundledShortOptionsMustBeWrittenApart) {
    for (const auto& [harness, arg] : std::vector<std::pair<std::string, std::string>>{
             {"codex", "-sdanger-full-access"}, {"gemini", "-dy"}, {"qwen", "-yd"}}) {
        const auto decision = decide_case(read_only(harness, {arg}));
        ASSERT_FALSE(decision) << arg << ": " << show(decision->invocation());
        EXPECT_EQ(decision.error().code, ExitCode::config);
        EXPECT_NE(decision.error().message.find("'" + arg + "' for " + harness + " bundles"),
                  std::string::npos)
            << decision.error().message;
    }
    const auto apart = decide_case(read_only("gemini", {"-d"}));
    EXPECT_TRUE(apart) << apart.error().message;
}

// The forms that reached the argv before (issue: codex 0.171.0's outside-workspace-write went
// from enforced to violated in acceptEdits and default with them): an attached `-cKEY=VALUE`, a
// `--config=KEY=VALUE`, a key with spaces around its segments or quoted segments (codex trims
// them), and attached short options with an '='.
TEST(ConfigArgs, AttachedAndSpacedCodexConfigKeysAreRefusedInEveryWriteMode) {
    const std::vector<std::vector<std::string>> widening{
        {"-csandbox_workspace_write.writable_roots=[\"/\"]"},
        {"-capproval_policy=\"never\""},
        {"-c=sandbox_mode=\"danger-full-access\""},
        {"--config=sandbox_workspace_write.writable_roots=[\"/\"]"},
        {"--config= approval_policy=\"never\""},
        {"-c", " sandbox_workspace_write.exclude_slash_tmp=false"},
        {"-c", "sandbox_workspace_write . exclude_slash_tmp=false"},
        {"-c", "\"sandbox_workspace_write\".writable_roots=[\"/\"]"},
        {"--config", "\tapproval_policy = \"never\""},
    };
    for (const Mode mode : {Mode::plan, Mode::default_mode, Mode::accept_edits}) {
        for (const auto& args : widening) {
            const auto decision = decide_case(in_mode("codex", mode, args));
            ASSERT_FALSE(decision)
                << to_string(mode) << " " << args.back() << ": " << show(decision->invocation());
            EXPECT_EQ(decision.error().code, ExitCode::config) << args.back();
        }
    }
    const auto fine =
        decide_case(in_mode("codex", Mode::accept_edits, {"-c", " model_verbosity=\"low\""}));
    EXPECT_TRUE(fine) << fine.error().message;
}

TEST(ConfigArgs, AttachedShortOptionsWithAnEqualsSignAreBundledToo) {
    for (const auto& [harness, arg] :
         std::vector<std::pair<std::string, std::string>>{{"gemini", "-dy=true"},
                                                          {"qwen", "-yy=true"},
                                                          {"opencode", "-cc=true"},
                                                          {"pi", "-ca=1"},
                                                          {"codex", "-s=danger-full-access"}}) {
        const auto decision = decide_case(in_mode(harness, Mode::accept_edits, {arg}));
        ASSERT_FALSE(decision) << arg << ": " << show(decision->invocation());
        EXPECT_EQ(decision.error().code, ExitCode::config);
        EXPECT_NE(decision.error().message.find("'" + arg + "' for " + harness + " bundles"),
                  std::string::npos)
            << decision.error().message;
    }
}

TEST(ConfigArgs, ClaudeAllowRulesAndExtraDirsOnlyInBypass) {
    for (const Mode mode : {Mode::default_mode, Mode::accept_edits}) {
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"--allowedTools", "Bash"},
              std::vector<std::string>{"--allowed-tools=Bash(rm:*)"},
              std::vector<std::string>{"--permission-prompt-tool", "mcp__yes__approve"},
              std::vector<std::string>{"--add-dir", "/"}}) {
            const auto decision = decide_case(in_mode("claude", mode, args));
            ASSERT_FALSE(decision) << to_string(mode) << " " << args.front();
            EXPECT_EQ(decision.error().code, ExitCode::config);
        }
    }
    const auto bypass =
        decide_case(in_mode("claude", Mode::bypass_permissions, {"--add-dir", "/srv"}));
    EXPECT_TRUE(bypass) << bypass.error().message;
    const auto narrowing =
        decide_case(in_mode("claude", Mode::accept_edits, {"--disallowedTools", "WebFetch"}));
    EXPECT_TRUE(narrowing) << narrowing.error().message;
}

} // namespace
} // namespace sonata::testing
