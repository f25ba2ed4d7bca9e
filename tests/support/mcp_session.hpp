// A `sonata mcp` process a test talks to over its stdin and stdout, one JSON-RPC message per line,
// for as long as the test needs: requests, their answers, and the notifications in between.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include "core/process.hpp"

namespace sonata::testing {

/// A stateless MCP `tools/call` of `tool` (protocol 2026-07-28, from a client without tasks).
nlohmann::json stateless_tool_call(const nlohmann::json& id, const std::string& tool,
                                   const nlohmann::json& args);

class McpSession {
public:
    /// Starts `SONATA_BIN mcp` with exactly `env`, in `cwd` (stderr to /dev/null).
    McpSession(const Environment& env, const std::string& cwd);
    /// Closes its input, stops it and waits for it.
    ~McpSession() { close(); }
    /// The same, at once; nothing more is read.
    void close();
    McpSession(const McpSession&) = delete;
    McpSession& operator=(const McpSession&) = delete;

    void send(const std::string& line);
    /// The line answering request `id`, read for at most `timeout`; "" when none came.
    std::string answer_line(const nlohmann::json& id,
                            std::chrono::milliseconds timeout = std::chrono::seconds(90));
    /// Sends `message` and returns its answer, parsed; null when none came in `timeout`.
    nlohmann::json request(const nlohmann::json& message,
                           std::chrono::milliseconds timeout = std::chrono::seconds(90));
    /// Every message read so far, answers and notifications, in order.
    std::vector<nlohmann::json> received() const;
    /// Everything read so far, as it came.
    const std::string& raw() const { return m_out; }

private:
    /// Reads what is there, waiting at most `wait`; false once the server closed its output.
    bool read_some(std::chrono::milliseconds wait);

    pid_t m_pid = -1;
    int m_to = -1;
    int m_from = -1;
    std::string m_out;
    std::string m_partial; ///< The line being read.
    std::vector<std::string> m_lines;
};

} // namespace sonata::testing
