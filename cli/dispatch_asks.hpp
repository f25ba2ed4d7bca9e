// The two front ends of a dispatch read their own syntax into one dispatch::DispatchAsk, whose
// rules are dispatch::decide_dispatch's alone: `sonata dispatch`/`run`'s options (cmd_dispatch.cpp)
// and the MCP dispatch tool's arguments (mcp_dispatch_tool.cpp). Declared together so a test can
// feed both the same requests and compare what they decide.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/app.hpp"
#include "core/result.hpp"
#include "dispatch/caller/dispatch_ask.hpp"

namespace sonata::cli {

/// `sonata dispatch`'s options (argv after the subcommand, the task options included) read into an
/// ask; a usage error when they do not parse.
Result<dispatch::DispatchAsk> ask_from_command_line(const std::vector<std::string>& args,
                                                    const Context& context);

/// The MCP dispatch tool's arguments read into an ask; a usage error for a workspace outside the
/// session's directory.
Result<dispatch::DispatchAsk> ask_from_tool_arguments(const nlohmann::json& args,
                                                      const Context& context);

} // namespace sonata::cli
