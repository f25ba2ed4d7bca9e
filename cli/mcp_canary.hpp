// The mcp-canary's protocol without its stdio loop: one newline-delimited JSON-RPC 2.0 line in,
// the line to print back out. `sonata mcp-canary` (cmd_mcp_canary.cpp) loops over stdin with it,
// and tests/fuzz/mcp_request_fuzzer.cpp calls it on arbitrary bytes.
#pragma once

#include <string>
#include <string_view>

namespace sonata::cli {

/// The reply to one line read from the harness, without its newline; "" when nothing is to be
/// sent (a blank line, a notification, a message without an id). Text that is not JSON is a
/// -32700 parse error; a message nested deeper than k_max_json_depth, or whose method is not a
/// string, a -32600 invalid request. Mistyped params and fields read as absent. A tools/call of
/// "touch" appends one line to `file`. Never throws on any input.
std::string mcp_canary_reply(std::string_view line, const std::string& file);

} // namespace sonata::cli
