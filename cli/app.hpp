// The command-line front end: builds the CLI11 app from one small file per subcommand.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/config.hpp"
#include "core/result.hpp"

namespace CLI {
class App;
}

namespace sonata::cli {

/// What every subcommand may use: the environment, the working directory, config on demand.
struct Context {
    std::map<std::string, std::string> env;
    std::string cwd;

    /// The project or machine config, loaded once; errors carry file and line.
    Result<Config> config() const;
};

/// A subcommand's body, run after parsing succeeded.
using Action = std::function<Result<int>(const Context&)>;

/// Each subcommand file defines one of these; app.cpp lists them.
void add_plan(CLI::App& app, Action& action);
void add_dispatch(CLI::App& app, Action& action);
void add_mcp(CLI::App& app, Action& action);
void add_runs(CLI::App& app, Action& action);
void add_harnesses(CLI::App& app, Action& action);
void add_hook(CLI::App& app, Action& action);
void add_init(CLI::App& app, Action& action);
void add_doctor(CLI::App& app, Action& action);
void add_probe(CLI::App& app, Action& action);
void add_model_server(CLI::App& app, Action& action);
void add_report(CLI::App& app, Action& action);
void add_mcp_canary(CLI::App& app, Action& action);

/// Parses argv, runs the chosen subcommand, prints errors as `sonata: error: …`; returns the exit
/// code.
int run(int argc, char** argv);

/// Prints an error in the one format sonata uses and returns its exit code.
int report_error(const Error& error);

} // namespace sonata::cli
