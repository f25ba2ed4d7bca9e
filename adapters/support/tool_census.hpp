// The tool census: what each tool a harness offers can do, read from the adapter's vocabulary.
#pragma once

#include <optional>
#include <string_view>

#include "adapters/adapter.hpp"

namespace sonata::adapters {

/// What the tool `name` can do, as `vocabulary` knows it: its write, shell, delegate and mode
/// switch tools and write doors, then the tools it lists as known. A name under a namespace
/// ("multi_agent_v1.spawn_agent") is also looked up without it, and an MCP tool
/// ("mcp__server__tool", "mcp__server.tool") is one whatever its server. Nothing when the adapter
/// has never heard of it.
std::optional<ToolClass> classify_tool(const ToolVocabulary& vocabulary, std::string_view name);

} // namespace sonata::adapters
