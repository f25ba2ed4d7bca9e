// Resolution of a dispatch's inputs and the call into the planner.
#include "core/cli/plan_support.hpp"

#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "adapters/support/planner.hpp"

namespace sonata::cli {
namespace {

Result<void> check_config_harnesses(const Config& config) {
    for (const auto& [id, harness] : config.harnesses) {
        if (auto found = adapters::find_adapter(id); !found) {
            return fail(ExitCode::config, config.where("harnesses." + id) + found.error().message);
        }
    }
    for (const auto& [name, role] : config.roles) {
        if (role.harness.empty()) continue;
        if (auto found = adapters::find_adapter(role.harness); !found) {
            return fail(ExitCode::config, config.where("roles." + name + ".harness") + found.error().message);
        }
    }
    return {};
}

struct ModeChoice {
    Mode mode = Mode::default_mode;
    std::string source = "default";
};

Result<ModeChoice> choose_mode(const PlanSetup& setup) {
    if (!setup.mode.empty()) {
        auto mode = parse_mode(setup.mode);
        if (!mode) return tl::unexpected(mode.error());
        return ModeChoice{*mode, "--mode"};
    }
    return ModeChoice{};
}

}  // namespace

Result<Planned> plan_dispatch(const PlanSetup& setup, const Config& config, const Context& context) {
    if (auto ok = check_config_harnesses(config); !ok) return tl::unexpected(ok.error());
    auto role = config.find_role(setup.role);
    if (!role) return tl::unexpected(role.error());
    const std::string harness = !setup.harness.empty() ? setup.harness : role->harness;
    if (harness.empty()) {
        return fail(ExitCode::usage, "no harness given: pass --harness, or set a harness for role '" + role->name + "' in config");
    }
    auto adapter = adapters::find_adapter(harness);
    if (!adapter) return tl::unexpected(adapter.error());
    auto mode = choose_mode(setup);
    if (!mode) return tl::unexpected(mode.error());
    auto options = parse_task_options(setup.options);
    if (!options) return tl::unexpected(options.error());

    adapters::PlanRequest request;
    request.harness_id = harness;
    request.parent_mode = mode->mode;
    request.role = *role;
    request.model = !setup.model.empty() ? setup.model : role->model;
    request.options = *options;
    request.resume_session = setup.resume;
    request.max_budget_usd = setup.budget;
    request.host = adapters::detect_host();
    if (const auto* hc = config.harness(harness)) request.extra_args = hc->args;

    std::vector<std::string> warnings;
    if (!setup.version.empty()) {
        const auto located = adapters::locate_harness(**adapter, harness, config, context.env);
        request.executable = located.installed ? located.path : std::string{};
        request.version = setup.version;
    } else {
        auto runner = make_system_runner();
        const auto status = adapters::detect_harness(**adapter, harness, config, context.env, *runner);
        if (status.installed) request.executable = status.path;
        request.version = status.version;
        if (!status.installed) warnings.push_back(harness + " is not installed here (" + status.note + ")");
        else if (status.version.empty()) warnings.push_back(harness + ": " + status.note);
    }
    auto decision = adapters::decide(request);
    if (!decision) return tl::unexpected(decision.error());
    decision->warnings.insert(decision->warnings.begin(), warnings.begin(), warnings.end());
    nlohmann::ordered_json extra;
    extra["mode_source"] = mode->source;
    return Planned{*decision, extra.dump()};
}

}  // namespace sonata::cli
