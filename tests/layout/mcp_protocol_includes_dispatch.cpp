// The MCP connection layer (cli/mcp_protocol.cpp) may include core only: nothing of runs,
// adapters or probes.
#include "cli/mcp_protocol.hpp"
#include "dispatch/caller/run.hpp"
