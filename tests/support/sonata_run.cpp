// run_sonata and the small file helpers the CLI tests share.
#include "tests/support/sonata_run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "tests/support/mcp_session.hpp"

namespace sonata::testing {

namespace fs = std::filesystem;

SonataRun run_program(const std::vector<std::string>& argv, const Environment& env,
                      const std::string& cwd, const std::optional<std::string>& stdin_data,
                      const std::vector<std::string>& wrapper) {
    ProcessRequest request;
    request.argv = wrapper;
    request.argv.insert(request.argv.end(), argv.begin(), argv.end());
    request.env = env;
    request.cwd = cwd;
    request.stdin_data = stdin_data;
    request.timeout = std::chrono::seconds(60);
    auto result = make_system_runner()->run(request);
    if (!result)
        throw std::runtime_error("cannot run " + argv.at(0) + ": " + result.error().message);
    return SonataRun{result->exit_code, result->out, result->err};
}

SonataRun run_sonata(const std::vector<std::string>& args, const Environment& env,
                     const std::string& cwd, const std::optional<std::string>& stdin_data,
                     const std::vector<std::string>& wrapper) {
    std::vector<std::string> argv{SONATA_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, env, cwd, stdin_data, wrapper);
}

std::string git_in(const std::string& repo, const std::vector<std::string>& args,
                   const Environment& env) {
    std::vector<std::string> argv = {"/usr/bin/git", "-C", repo};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto run = run_program(argv, env, repo);
    EXPECT_EQ(run.exit_code, 0) << "git " << (args.empty() ? "" : args.front()) << ": " << run.err;
    return run.out;
}

std::string mcp_call(const std::string& tool, const std::string& arguments_json,
                     const Environment& env, const std::string& cwd) {
    McpSession server(env, cwd);
    server.send(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
    server.send(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":")" + tool +
                R"(","arguments":)" + arguments_json + "}}");
    std::string answer = server.answer_line(2);
    if (answer.empty())
        throw std::runtime_error("sonata mcp never answered the call: " + server.raw());
    return answer;
}

std::vector<std::string> processes_working_under(const std::string& root) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        std::error_code ec;
        const auto cwd = fs::read_symlink(entry.path() / "cwd", ec);
        if (!ec && cwd.string().rfind(root, 0) == 0) {
            found.push_back(entry.path().filename().string() + " " + cwd.string());
        }
    }
    return found;
}

std::set<std::string> tree(const std::string& root) {
    std::set<std::string> paths;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        const auto relative = fs::relative(it->path(), root).string();
        const bool dir = it->is_directory() && !it->is_symlink();
        paths.insert(dir ? relative + "/" : relative);
    }
    return paths;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_text(const std::string& path, const std::string& content) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path);
    out << content;
}

} // namespace sonata::testing
