// A `sonata mcp` process on pipes (see mcp_session.hpp).
#include "tests/support/mcp_session.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>

#include <sys/wait.h>

namespace sonata::testing {
namespace {

using nlohmann::json;

/// Starts `argv` with pipes on stdin and stdout (stderr to /dev/null); returns the pid.
pid_t spawn_piped(const std::vector<std::string>& argv, const Environment& env,
                  const std::string& cwd, int& to_child, int& from_child) {
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env)
        env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_strings)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = argv;
    std::vector<char*> argp;
    for (auto& a : args)
        argp.push_back(a.data());
    argp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(in[0], STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        const int null_fd = ::open("/dev/null", O_WRONLY);
        ::dup2(null_fd, STDERR_FILENO);
        if (::chdir(cwd.c_str()) != 0) ::_exit(126);
        ::execve(argp[0], argp.data(), envp.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_child = in[1];
    from_child = out[0];
    return pid;
}

/// The id of a message line, or null when it has none or is not JSON.
json id_of(const std::string& line) {
    const json message = json::parse(line, nullptr, false);
    return message.is_object() && message.contains("id") ? message["id"] : json();
}

} // namespace

McpSession::McpSession(const Environment& env, const std::string& cwd) {
    std::signal(SIGPIPE, SIG_IGN);
    m_pid = spawn_piped({SONATA_BIN, "mcp"}, env, cwd, m_to, m_from);
}

void McpSession::close() {
    if (m_pid < 0) return;
    ::close(m_to);
    ::close(m_from);
    ::kill(m_pid, SIGTERM);
    ::waitpid(m_pid, nullptr, 0);
    m_pid = -1;
}

void McpSession::send(const std::string& line) {
    const std::string message = line + "\n";
    if (::write(m_to, message.data(), message.size()) != static_cast<ssize_t>(message.size()))
        throw std::runtime_error("sonata mcp does not read its input");
}

bool McpSession::read_some(std::chrono::milliseconds wait) {
    if (m_pid < 0) return false;
    pollfd p{m_from, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return true;
    char buffer[4096];
    const ssize_t n = ::read(m_from, buffer, sizeof buffer);
    if (n <= 0) return false;
    m_out.append(buffer, static_cast<std::size_t>(n));
    m_partial.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t end; (end = m_partial.find('\n')) != std::string::npos;) {
        m_lines.push_back(m_partial.substr(0, end));
        m_partial.erase(0, end + 1);
    }
    return true;
}

std::string McpSession::answer_line(const json& id, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (std::size_t seen = 0;;) {
        for (; seen < m_lines.size(); ++seen)
            if (id_of(m_lines[seen]) == id) return m_lines[seen];
        if (std::chrono::steady_clock::now() >= deadline) return {};
        if (!read_some(std::chrono::milliseconds(200))) return {};
    }
}

json McpSession::request(const json& message, std::chrono::milliseconds timeout) {
    send(message.dump());
    const std::string line = answer_line(message.at("id"), timeout);
    return line.empty() ? json() : json::parse(line);
}

std::vector<json> McpSession::received() const {
    std::vector<json> out;
    for (const auto& line : m_lines)
        out.push_back(json::parse(line, nullptr, false));
    return out;
}

nlohmann::json stateless_tool_call(const nlohmann::json& id, const std::string& tool,
                                   const nlohmann::json& args) {
    nlohmann::json params = {{"name", tool}, {"arguments", args}};
    params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                       {"io.modelcontextprotocol/clientCapabilities", nlohmann::json::object()}};
    return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}};
}

} // namespace sonata::testing
