// `sonata plan`: print the decision for (harness, mode, role, options) — an invocation or a refusal.
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "adapters/support/planner.hpp"
#include "core/cli/app.hpp"
#include "core/cli/plan_support.hpp"
#include "core/decision_json.hpp"

namespace sonata::cli {
namespace {

struct PlanArgs {
    std::string harness;
    std::string mode;
    std::string session;
    std::string role = "write";
    std::string model;
    std::vector<std::string> options;
    std::string resume;
    std::optional<double> budget;
    std::string version;
    std::string matrix;
    bool json = false;
};

Result<int> run_plan(const PlanArgs& args, const Context& context) {
    auto config = context.config();
    if (!config) return tl::unexpected(config.error());
    PlanSetup setup{args.harness, args.mode, args.session, args.role, args.model, args.options,
                    args.resume, args.budget, args.version, args.matrix};
    auto planned = plan_dispatch(setup, *config, context);
    if (!planned) return tl::unexpected(planned.error());
    if (args.json) {
        std::cout << decision_to_json(planned->decision, planned->extra_json) << '\n';
    } else {
        std::cout << decision_to_text(planned->decision);
    }
    return to_int(planned->decision.runs() ? ExitCode::ok : ExitCode::refused);
}

}  // namespace

void add_plan(CLI::App& app, Action& action) {
    auto args = std::make_shared<PlanArgs>();
    auto* cmd = app.add_subcommand("plan", "Print what sonata would run for a dispatch, or why it refuses");
    cmd->add_option("--harness", args->harness, "Harness id (default: the role's harness)");
    cmd->add_option("--mode", args->mode, "The parent session's permission mode (default: from the session file, else default)");
    cmd->add_option("--session", args->session, "Claude Code session id whose mode file to read");
    cmd->add_option("--role", args->role, "Role: read-only, write, review, explore, plan, code, or one from config");
    cmd->add_option("--model", args->model, "Model to ask the harness for");
    cmd->add_option("--option", args->options, "Per-task option key=value (may only narrow)");
    cmd->add_option("--resume", args->resume, "Resume this harness session, keeping the mode's restrictions");
    cmd->add_option("--max-budget-usd", args->budget, "Spending limit, where the harness enforces one");
    cmd->add_option("--harness-version", args->version, "Plan for this harness version instead of detecting it");
    cmd->add_option("--matrix", args->matrix, "Capability matrix for the gate (default: this machine's)");
    cmd->add_flag("--json", args->json, "Print one JSON object");
    cmd->callback([&action, args] {
        action = [args](const Context& context) { return run_plan(*args, context); };
    });
}

}  // namespace sonata::cli
