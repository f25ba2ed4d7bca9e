// The one seam through which sonata starts processes. Adapters and probes build a ProcessRequest;
// the system runner (the only code that includes Boost.Process) runs it; tests substitute a fake.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace sonata {

using Environment = std::map<std::string, std::string>;

/// Which of the child's output streams a chunk came from.
enum class OutputStream {
    out, ///< stdout
    err, ///< stderr
};

/// Called with each chunk as it arrives, on the thread that called run(): the whole output,
/// untruncated.
using OutputCallback = std::function<void(OutputStream, std::string_view)>;

/// One process to run. Nothing passes through a shell: argv[0] is an absolute path or a name looked
/// up on the PATH of `env`.
struct ProcessRequest {
    std::vector<std::string> argv;
    Environment env;                       ///< The child's complete environment.
    std::string cwd;                       ///< Empty: inherit.
    std::optional<std::string> stdin_data; ///< nullopt: stdin is /dev/null.
    std::chrono::milliseconds timeout{30'000};
    std::chrono::milliseconds kill_grace{1'000}; ///< Between SIGTERM and SIGKILL to the group.
    std::size_t max_output_bytes = 1U << 20U;    ///< Per stream; the tail beyond it is kept.
    /// After the child exits, how long a leftover process of its group may hold the output pipes
    /// open before the group is killed (capped by what is left of `timeout`).
    std::chrono::milliseconds exit_drain{2'000};
    OutputCallback on_output; ///< Optional live view of the output (logs, TUI-less progress).
    /// Called once the child runs, with its pid (also its process-group id), on the thread that
    /// called run(): a supervisor records it so that whoever outlives it can kill the group.
    std::function<void(int pid)> on_start;
    /// When set and it turns true (a Ctrl-C, say), the group is killed as on a timeout; checked
    /// every 100 ms. The result then has `cancelled`.
    const std::atomic<bool>* cancel = nullptr;
};

/// How a process ended and what it printed.
struct ProcessResult {
    int exit_code = -1;        ///< Exit status 0–255, or 128+N after death by signal N.
    int term_signal = 0;       ///< N when killed by a signal, else 0.
    bool timed_out = false;    ///< sonata killed the group after `timeout`.
    bool cancelled = false;    ///< sonata killed the group because `cancel` turned true.
    std::string out;           ///< stdout (tail, when truncated).
    std::string err;           ///< stderr (tail, when truncated).
    std::size_t out_bytes = 0; ///< Total bytes the child wrote to stdout.
    std::size_t err_bytes = 0;
    std::chrono::milliseconds duration{0};
    int pid = 0;                   ///< The child's pid, which is also its process-group id.
    bool leftovers_killed = false; ///< The child exited; its group held the pipes past exit_drain.
};

class ProcessRunner {
public:
    virtual ~ProcessRunner() = default;
    /// Runs to completion (or timeout, then kills the whole process group and reaps it).
    /// An error means the process could not be started at all.
    virtual Result<ProcessResult> run(const ProcessRequest& request) = 0;
};

/// The real runner: own process group, timeout → TERM, grace, KILL; always reaped. When run()
/// returns, nothing of the child's process group is left: the group is killed once the child has
/// exited, and its orphans are reaped (the first call makes this process a child subreaper, so
/// orphans of a child come back to it instead of to init).
std::unique_ptr<ProcessRunner> make_system_runner();

/// This process's environment as a map.
Environment current_environment();

/// Looks up `name` on `path_var` (':'-separated); returns the first executable regular file.
std::optional<std::string> search_path(const std::string& name, const std::string& path_var);

} // namespace sonata
