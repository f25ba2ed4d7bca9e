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

/// The named tool as the harness offered it (the same name, or the same MCP tool under another
/// spelling); `offered` is nullptr when it did not offer it.
ToolChoice choose_named(const std::string& name, const ConversationFacts& facts);

/// Whether a write_file step through the named tool `intent.tool` is passed over in this
/// conversation: the harness did not offer the tool, or the offered schema has no argument for
/// the file's path and one for its content (the call could not reach its target). False for every
/// other step.
bool passed_over(const Intent& intent, const ConversationFacts& facts);

/// A resolved call: the tool, the arguments the intent implies, and why its target (a file's path,
/// a command, a sub-agent's task) could not be put where the offered tool takes it.
struct ToolCall {
    ToolChoice choice;
    nlohmann::json args;
    /// "" when the target is in an argument of the offered schema, or the tool was not offered
    /// (its schema is unknown); else why not, naming the arguments the schema has.
    std::string unplaced = {};
};

/// The tool and the arguments `intent` implies (call_unknown and reply are resolved before): each
/// target in the offered tool's own field for it, read from its schema (the vocabulary's name
/// first, then the usual spellings: `path`, `filePath`, `file_path`, `command`, `cmd`, `prompt`…).
ToolCall tool_and_args(const Intent& intent, const ScriptContext& context,
                       const ConversationFacts& facts);

/// An argument written "{{result:REGEX}}" takes REGEX's first group in the newest tool result that
/// matches it (a run id a tool answered with, say); anything else is kept as written.
std::string from_results(const std::string& value, const ConversationFacts& facts);

} // namespace sonata::probes
