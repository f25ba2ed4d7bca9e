// `sonata plan`: print the decision for (harness, mode, role, options) — an invocation or a
// refusal.
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "adapters/support/pipeline.hpp"
#include "cli/app.hpp"
#include "core/decision_json.hpp"
#include "core/gate.hpp"
#include "core/json_parse.hpp"

namespace sonata::cli {
namespace {

struct PlanArgs {
    adapters::DispatchRequest request;
    bool json = false;
};

nlohmann::ordered_json string_or_null(const std::string& text) {
    return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(text);
}

/// The fields `plan --json` adds to the decision: where the parent's mode came from, the gate.
std::string extra_json(const adapters::Planned& planned) {
    nlohmann::ordered_json extra;
    extra["mode_source"] = planned.parent.source;
    extra["session_id"] = string_or_null(planned.parent.session_id);
    extra["session_file"] = string_or_null(planned.parent.session_file);
    extra["mode_stale"] = planned.parent.stale;
    extra["gate"] = parse_ordered_json(gate_to_json(planned.gate, planned.decision))
                        .value(); // sonata's own, always valid
    return extra.dump();
}

Result<int> run_plan(const PlanArgs& args, const Context& context) {
    auto config = context.config();
    SONATA_TRY(config);
    adapters::DispatchRequest request = args.request;
    request.cwd = context.cwd;
    request.env = context.env;
    auto planned = adapters::plan_dispatch(request, *config);
    SONATA_TRY(planned);
    if (args.json) {
        std::cout << decision_to_json(planned->decision, extra_json(*planned)) << '\n';
    } else {
        std::cout << decision_to_text(planned->decision);
    }
    return to_int(planned->decision.runs() ? ExitCode::ok : ExitCode::refused);
}

} // namespace

void add_plan(CLI::App& app, Action& action) {
    auto args = std::make_shared<PlanArgs>();
    auto* cmd =
        app.add_subcommand("plan", "Print what sonata would run for a dispatch, or why it refuses");
    cmd->add_option("--harness", args->request.harness, "Harness id (default: the role's harness)");
    cmd->add_option("--mode", args->request.mode,
                    "The parent session's permission mode; with a known session it may only narrow "
                    "the session's");
    cmd->add_option("--session", args->request.session,
                    "Claude Code session id whose mode file to read");
    cmd->add_option("--role", args->request.role,
                    "Role: read-only, write, review, explore, plan, code, or one from config");
    cmd->add_option("--model", args->request.model, "Model to ask the harness for");
    cmd->add_option("--option", args->request.options,
                    "Per-task option key=value (may only narrow)");
    cmd->add_option("--resume", args->request.resume,
                    "Resume this harness session, keeping the mode's restrictions");
    cmd->add_option("--max-budget-usd", args->request.budget,
                    "Spending limit, where the harness enforces one");
    cmd->add_option("--harness-version", args->request.version,
                    "Plan for this harness version instead of detecting it");
    cmd->add_option("--matrix", args->request.matrix,
                    "Capability matrix for the gate (default: this machine's)");
    cmd->add_flag("--json", args->json, "Print one JSON object");
    cmd->callback([&action, args] {
        action = [args](const Context& context) { return run_plan(*args, context); };
    });
}

} // namespace sonata::cli
