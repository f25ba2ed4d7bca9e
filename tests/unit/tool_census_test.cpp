// The tool census's classification of offered tool names, on the pins' measured vocabularies.
#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "adapters/support/tool_census.hpp"

namespace sonata::adapters {
namespace {

ToolVocabulary vocabulary_of(const std::string& harness) {
    return (*find_adapter(harness))->tools();
}

TEST(ToolCensus, ClassifiesByTheAdaptersVocabulary) {
    const auto codex = vocabulary_of("codex");
    EXPECT_EQ(classify_tool(codex, "exec_command"), ToolClass::shell);
    EXPECT_EQ(classify_tool(codex, "apply_patch"), ToolClass::file_write);
    EXPECT_EQ(classify_tool(codex, "web_search"), ToolClass::other);
    // A deferred tool under its namespace is the tool without it; an MCP tool is one whatever its
    // server.
    EXPECT_EQ(classify_tool(codex, "multi_agent_v1.close_agent"), ToolClass::delegate);
    EXPECT_EQ(classify_tool(codex, "mcp__codex_tui.create_worktree"), ToolClass::mcp);
    EXPECT_EQ(classify_tool(vocabulary_of("claude"), "mcp__sonata-canary__touch"), ToolClass::mcp);
    const auto claude = vocabulary_of("claude");
    EXPECT_EQ(classify_tool(claude, "ExitPlanMode"), ToolClass::mode_switch);
    EXPECT_EQ(classify_tool(claude, "EnterWorktree"), ToolClass::file_write); // a write door
    EXPECT_EQ(classify_tool(claude, "Read"), ToolClass::read_only);
}

TEST(ToolCensus, AToolNeverHeardOfHasNoClass) {
    EXPECT_FALSE(classify_tool(vocabulary_of("codex"), "notes_append"));
    EXPECT_FALSE(classify_tool(vocabulary_of("muse"), "notes_append"));
    // A namespace does not make an unknown tool known, nor a known prefix.
    EXPECT_FALSE(classify_tool(vocabulary_of("codex"), "plugin.notes_append"));
    EXPECT_FALSE(classify_tool(vocabulary_of("codex"), "exec_command_unsandboxed"));
    EXPECT_FALSE(classify_tool(vocabulary_of("codex"), "trailing."));
}

TEST(ToolCensus, EveryClassHasAName) {
    for (const auto what :
         {ToolClass::read_only, ToolClass::file_write, ToolClass::shell, ToolClass::delegate,
          ToolClass::mode_switch, ToolClass::mcp, ToolClass::other})
        EXPECT_FALSE(to_string(what).empty());
    EXPECT_EQ(to_string(ToolClass::file_write), "file-write");
}

} // namespace
} // namespace sonata::adapters
