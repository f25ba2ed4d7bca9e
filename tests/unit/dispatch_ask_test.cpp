// One request model for both front ends: `sonata dispatch`'s options and the MCP dispatch tool's
// arguments, read by each front end's own parser, make the same order (or the same refusal) for
// the same request, because dispatch::decide_dispatch alone applies the rules.
#include <filesystem>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/dispatch_asks.hpp"
#include "core/text.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::cli {
namespace dispatch_ask_test {

using nlohmann::json;

/// One request in both syntaxes.
struct SameRequest {
    std::string label;
    std::vector<std::string> argv; ///< `sonata dispatch` options (the task included).
    json arguments;                ///< The MCP dispatch tool's arguments.
};

/// An order as text, every field the rules decide and every field the front ends read, so that a
/// difference shows as a readable diff.
std::string described(const Result<dispatch::DispatchOrder>& order) {
    if (!order) return "error: " + order.error().message;
    const auto& r = order->request;
    std::ostringstream out;
    out << "harness=" << r.harness << " role=" << r.role << " mode=" << r.mode
        << " session=" << r.session << " model=" << r.model << " options=" << join(r.options, ";")
        << " budget=" << (r.budget ? std::to_string(*r.budget) : "-") << " resume=" << r.resume
        << " cwd=" << r.cwd << " session_cwd=" << r.session_cwd
        << " worktree=" << (r.workspace == adapters::Workspace::worktree)
        << " fanout=" << join(order->fanout, ",") << " only_runnable=" << order->only_runnable;
    return out.str();
}

class DispatchAsk : public ::testing::Test {
protected:
    void SetUp() override {
        m_context.env = testing::hermetic_env(m_dir);
        m_context.env["CLAUDE_CODE_SESSION_ID"] = "session-1";
        m_context.cwd = m_dir.make_dir("project");
        m_dir.make_dir("project/sub");
        testing::write_text(m_context.cwd + "/sonata.toml",
                            "[roles.pair]\nkind = \"read-only\"\nfanout = [\"pi\", \"grok\"]\n");
    }

    Result<dispatch::DispatchOrder> decided(const Result<dispatch::DispatchAsk>& ask) {
        if (!ask) return tl::unexpected(ask.error());
        auto config = m_context.config();
        if (!config) return tl::unexpected(config.error());
        return dispatch::decide_dispatch(*ask, *config);
    }

    std::string from_command_line(const SameRequest& r) {
        return described(decided(ask_from_command_line(r.argv, m_context)));
    }
    std::string from_tool(const SameRequest& r) {
        return described(decided(ask_from_tool_arguments(r.arguments, m_context)));
    }

    testing::ScratchDir m_dir;
    Context m_context;
};

std::vector<SameRequest> requests() {
    const json task = "t";
    return {
        {"harness alone", {"--harness", "pi", "--task", "t"}, {{"harness", "pi"}, {"task", task}}},
        {"role alone", {"--role", "review", "--task", "t"}, {{"role", "review"}, {"task", task}}},
        {"everything a single dispatch takes",
         {"--harness", "pi", "--role", "review", "--model", "m1", "--option", "a=b",
          "--max-budget-usd", "2.5", "--cwd", "sub", "--task", "t"},
         {{"harness", "pi"},
          {"role", "review"},
          {"model", "m1"},
          {"options", {{"a", "b"}}},
          {"max_budget_usd", 2.5},
          {"cwd", "sub"},
          {"task", task}}},
        {"a worktree",
         {"--role", "code", "--worktree", "--task", "t"},
         {{"role", "code"}, {"worktree", true}, {"task", task}}},
        {"a fan-out",
         {"--fanout", "pi,grok", "--role", "review", "--task", "t"},
         {{"fanout", {"pi", "grok"}}, {"role", "review"}, {"task", task}}},
        {"a role's own fan-out",
         {"--role", "pair", "--task", "t"},
         {{"role", "pair"}, {"task", task}}},
        {"a role's fan-out given a harness",
         {"--role", "pair", "--harness", "pi", "--task", "t"},
         {{"role", "pair"}, {"harness", "pi"}, {"task", task}}},
        {"a fan-out with a harness",
         {"--fanout", "pi,grok", "--harness", "pi", "--role", "review"},
         {{"fanout", {"pi", "grok"}}, {"harness", "pi"}, {"role", "review"}, {"task", task}}},
        {"a fan-out without a role",
         {"--fanout", "pi,grok", "--task", "t"},
         {{"fanout", {"pi", "grok"}}, {"task", task}}},
        {"a fan-out naming an unknown harness",
         {"--fanout", "pi,nope", "--role", "review"},
         {{"fanout", {"pi", "nope"}}, {"role", "review"}, {"task", task}}},
        {"resume with a role",
         {"--resume", "r-1", "--role", "review", "--task", "t"},
         {{"resume", "r-1"}, {"role", "review"}, {"task", task}}},
        {"resume of a run that is not there",
         {"--resume", "r-1", "--task", "t"},
         {{"resume", "r-1"}, {"task", task}}},
        {"neither harness nor role", {"--task", "t"}, {{"task", task}}},
        {"an unknown role",
         {"--role", "nobody", "--task", "t"},
         {{"role", "nobody"}, {"task", task}}},
    };
}

TEST_F(DispatchAsk, BothFrontEndsDecideTheSameForTheSameRequest) {
    for (const auto& request : requests()) {
        EXPECT_EQ(from_command_line(request), from_tool(request)) << request.label;
    }
}

TEST_F(DispatchAsk, TheRulesAreTheOnesTheRequestsMeet) {
    std::map<std::string, std::string> decided;
    for (const auto& request : requests())
        decided[request.label] = from_tool(request);
    const std::string project = m_context.cwd;
    EXPECT_EQ(decided["harness alone"],
              "harness=pi role=write mode= session= model= options= budget=- resume= cwd=" +
                  project + " session_cwd=" + project + " worktree=0 fanout= only_runnable=0");
    EXPECT_NE(decided["everything a single dispatch takes"].find(
                  "harness=pi role=review mode= session= model=m1 options=a=b budget=2.500000 "
                  "resume= cwd=" +
                  project + "/sub session_cwd=" + project + " "),
              std::string::npos)
        << decided["everything a single dispatch takes"];
    EXPECT_NE(decided["a worktree"].find(" worktree=1 "), std::string::npos);
    EXPECT_NE(decided["a fan-out"].find(" fanout=pi,grok "), std::string::npos);
    EXPECT_NE(decided["a role's own fan-out"].find("role=pair "), std::string::npos);
    EXPECT_NE(decided["a role's own fan-out"].find(" fanout=pi,grok "), std::string::npos);
    EXPECT_NE(decided["a role's fan-out given a harness"].find("harness=pi "), std::string::npos);
    EXPECT_NE(decided["a role's fan-out given a harness"].find(" fanout= "), std::string::npos);
    EXPECT_EQ(decided["a fan-out with a harness"],
              "error: a fan-out names its own harnesses: drop the harness and resume");
    EXPECT_EQ(decided["a fan-out without a role"], "error: a fan-out needs a role");
    EXPECT_NE(decided["a fan-out naming an unknown harness"].find("error: "), std::string::npos);
    EXPECT_EQ(decided["resume with a role"],
              "error: resume continues the run's own role: drop the role");
    EXPECT_NE(decided["resume of a run that is not there"].find("error: "), std::string::npos);
    EXPECT_EQ(decided["neither harness nor role"],
              "error: give a harness or a role (or resume, a finished run's id)");
}

TEST_F(DispatchAsk, OnlyTheToolKeepsTheWorkspaceInsideTheSession) {
    // The one rule a front end adds: a tool call may not name a workspace outside the session's
    // directory (the command line's user has the whole shell anyway).
    const std::string outside = m_dir.make_dir("elsewhere");
    EXPECT_FALSE(ask_from_tool_arguments(json{{"role", "review"}, {"cwd", outside}}, m_context));
    EXPECT_TRUE(ask_from_command_line({"--role", "review", "--cwd", outside}, m_context));
}

} // namespace dispatch_ask_test
} // namespace sonata::cli
