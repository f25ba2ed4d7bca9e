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

#include <sys/wait.h>

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

namespace {

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

} // namespace

std::string mcp_call(const std::string& tool, const std::string& arguments_json,
                     const Environment& env, const std::string& cwd) {
    int to = -1;
    int from = -1;
    const pid_t pid = spawn_piped({SONATA_BIN, "mcp"}, env, cwd, to, from);
    const std::string in =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})"
        "\n"
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":")" +
        tool + R"(","arguments":)" + arguments_json + "}}\n";
    const auto sigpipe = std::signal(SIGPIPE, SIG_IGN);
    (void)!::write(to, in.data(), in.size());
    std::string out;
    std::string answer;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (answer.empty() && std::chrono::steady_clock::now() < deadline) {
        pollfd p{from, POLLIN, 0};
        if (::poll(&p, 1, 200) <= 0) continue;
        char buffer[4096];
        const ssize_t n = ::read(from, buffer, sizeof buffer);
        if (n <= 0) break;
        out.append(buffer, static_cast<std::size_t>(n));
        for (std::size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos;
             at = end + 1) {
            const std::string line = out.substr(at, end - at);
            if (line.find(R"("id":2,)") != std::string::npos ||
                line.find(R"("id":2})") != std::string::npos)
                answer = line;
        }
    }
    ::close(to);
    ::close(from);
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
    std::signal(SIGPIPE, sigpipe);
    if (answer.empty()) throw std::runtime_error("sonata mcp never answered the call: " + out);
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
