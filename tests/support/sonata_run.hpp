// Running the real sonata binary from a test (argv, explicit environment, cwd, stdin) and looking
// at what it left on disk.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/process.hpp"

namespace sonata::testing {

/// What one run of sonata did.
struct SonataRun {
    int exit_code = -1;
    std::string out;
    std::string err;
};

/// Runs `SONATA_BIN args...` with exactly `env`, in `cwd`, with `stdin_data` (nullopt: /dev/null).
/// `wrapper` goes before the binary (e.g. setpriv to drop root). Throws when it cannot start.
SonataRun run_sonata(const std::vector<std::string>& args, const Environment& env,
                     const std::string& cwd,
                     const std::optional<std::string>& stdin_data = std::nullopt,
                     const std::vector<std::string>& wrapper = {});

/// Runs `argv` (argv[0] a path) like run_sonata runs sonata.
SonataRun run_program(const std::vector<std::string>& argv, const Environment& env,
                      const std::string& cwd,
                      const std::optional<std::string>& stdin_data = std::nullopt,
                      const std::vector<std::string>& wrapper = {});

/// `git -C repo ARGS` with `env`, expected to succeed (a failure fails the test, with git's
/// message); its stdout.
std::string git_in(const std::string& repo, const std::vector<std::string>& args,
                   const Environment& env);

/// `sonata mcp` in `cwd`: initialize, then one tools/call of `tool` with `arguments_json` (an
/// object), stdin held open until the call is answered (the server stops its calls at end of
/// input). Returns the raw line that answers the call (id 2); throws when none came in 90 s.
std::string mcp_call(const std::string& tool, const std::string& arguments_json,
                     const Environment& env, const std::string& cwd);

/// "<pid> <cwd>" for every process whose working directory lies under `root`: what a run left
/// running behind it.
std::vector<std::string> processes_working_under(const std::string& root);

/// Every path under `root` (relative, directories with a trailing '/'), symlinks not followed.
std::set<std::string> tree(const std::string& root);

/// The whole content of a file; throws when it cannot be read.
std::string read_text(const std::string& path);

/// Creates parent directories and writes `content`.
void write_text(const std::string& path, const std::string& content);

} // namespace sonata::testing
