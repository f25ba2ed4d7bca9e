// Parsing and dispatch of subcommands; the one catch-all.
#include "cli/app.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string_view>

#include <CLI/CLI.hpp>

#include "core/process.hpp"
#include "core/session.hpp"

namespace sonata::cli {

Result<Config> Context::config() const { return load_config(locate_config(cwd, env)); }

int report_error(const Error& error) {
    std::cerr << "sonata: error: " << error.message << '\n';
    return to_int(error.code);
}

namespace {

using Adder = void (*)(CLI::App&, Action&);

// Subcommands whose file is not built yet are simply absent from this list.
const std::vector<Adder>& adders() {
    static const std::vector<Adder> list{
#include "cli/subcommands.inc"
    };
    return list;
}

int run_parsed(CLI::App& app, int argc, char** argv, Action& action) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e, std::cout, std::cerr);
        return to_int(ExitCode::usage);
    }
    if (!action) {
        std::cout << app.help();
        return to_int(ExitCode::usage);
    }
    Context context{current_environment(), std::filesystem::current_path().string()};
    auto result = action(context);
    return result ? *result : report_error(result.error());
}

} // namespace

int run(int argc, char** argv) {
    // `sonata hook` runs on every tool call of the user's Claude Code session: a bare `hook` skips
    // building the command-line parser, which is a measurable part of its time. `hook --help` and
    // anything else still go through CLI11.
    if (argc == 2 && std::string_view(argv[1]) == "hook") return run_hook(current_environment());
    try {
        CLI::App app{
            "sonata — hand work to other coding-agent CLIs, never more permissive than the "
            "Claude Code session that asked"};
        app.set_version_flag("--version", std::string("sonata ") + SONATA_VERSION);
        app.require_subcommand(0, 1);
        Action action;
        for (const auto adder : adders())
            adder(app, action);
        return run_parsed(app, argc, argv, action);
    } catch (const std::exception& e) {
        return report_error(Error{ExitCode::failure, std::string("internal error: ") + e.what()});
    }
}

} // namespace sonata::cli
