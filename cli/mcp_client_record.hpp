// Which MCP client `sonata mcp` last served in a project, the protocol it spoke and whether it
// took tasks: written by the server on a client's first call and whenever that changes, read by
// `sonata doctor`. Kept beside the project's runs (.sonata/mcp-client.json).
#pragma once

#include <optional>
#include <string>

#include "cli/app.hpp"
#include "cli/mcp_protocol.hpp"

namespace sonata::cli {

struct ClientRecord {
    mcp::ClientSeen seen;
    std::string at; ///< ISO 8601 UTC.
};

/// A recorder for a server started in `context`: writes what it is told when it differs from
/// what it last wrote. Failures to write are ignored: the record only informs doctor.
std::function<void(const mcp::ClientSeen&)> client_recorder(const Context& context);

/// The last record in the project of `context`; nullopt when there is none; an error when the
/// file is there but is not a record.
Result<std::optional<ClientRecord>> last_client(const Context& context);

} // namespace sonata::cli
