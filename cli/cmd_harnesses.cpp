// `sonata harnesses`: every known harness, installed or not, with path and version.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "cli/app.hpp"

namespace sonata::cli {
namespace {

Result<int> run_harnesses(bool as_json, const Context& context) {
    auto config = context.config();
    SONATA_TRY(config);
    auto runner = make_system_runner();
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& adapter : adapters::all_adapters()) {
        const auto s = adapters::detect_harness(*adapter, std::string(adapter->id()), *config,
                                                context.env, *runner);
        if (as_json) {
            list.push_back({{"id", s.id},
                            {"installed", s.installed},
                            {"path", s.path},
                            {"version", s.version},
                            {"protocol", adapters::to_string(adapter->protocol())},
                            {"runs_here", s.installed && s.cannot_run.empty()},
                            {"path_first", s.path_first},
                            {"note", s.note}});
        } else {
            std::cout << fmt::format(
                "{:<10} {:<13} {:<12} {}\n", s.id, s.installed ? "installed" : "not installed",
                s.version.empty() ? "-" : s.version,
                s.installed ? s.path + (s.note.empty() ? "" : " (" + s.note + ")") : s.note);
        }
    }
    if (as_json) std::cout << list.dump(2) << '\n';
    return 0;
}

} // namespace

void add_harnesses(CLI::App& app, Action& action) {
    auto json = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand("harnesses",
                                   "List every known harness: installed or not, path, version");
    cmd->add_flag("--json", *json, "Print a JSON array");
    cmd->callback([&action, json] {
        action = [json](const Context& context) { return run_harnesses(*json, context); };
    });
}

} // namespace sonata::cli
