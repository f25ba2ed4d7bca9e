// The tool call an intent resolves to against the tools a harness offered: which tool (the one
// offered under the script's or the vocabulary's name, whatever MCP spelling the harness uses)
// and the arguments the intent implies, before a step's own arguments and the schema's required
// fields are added. Included by the probes' script code only (it brings nlohmann/json).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "probes/script.hpp"

namespace sonata::probes {

/// A tool to call: its name, and the tool as offered (nullptr when the harness did not offer it).
struct ToolChoice {
    std::string name;
    const OfferedTool* offered = nullptr;
};

/// The tool the harness offered under exactly `name`, or nullptr.
const OfferedTool* find_offered(const ConversationFacts& facts, std::string_view name);

/// The tool and the arguments `intent` implies (call_unknown and reply are resolved before).
std::pair<ToolChoice, nlohmann::json>
tool_and_args(const Intent& intent, const ScriptContext& context, const ConversationFacts& facts);

/// An argument written "{{result:REGEX}}" takes REGEX's first group in the newest tool result that
/// matches it (a run id a tool answered with, say); anything else is kept as written.
std::string from_results(const std::string& value, const ConversationFacts& facts);

} // namespace sonata::probes
