// Builds the PlanRequest for a PlanCase and decides it.
#include "tests/support/plan_helpers.hpp"

#include <sstream>

#include "adapters/support/planner.hpp"

namespace sonata::testing {
namespace {

void list(std::ostringstream& out, const char* name, const std::vector<std::string>& items) {
    out << name << ":";
    for (const auto& item : items)
        out << " [" << item << "]";
    out << "\n";
}

} // namespace

PlanCase plan_case(std::string harness, Mode parent, RoleKind role,
                   std::map<std::string, std::string> options) {
    PlanCase plan;
    plan.harness = std::move(harness);
    plan.parent_mode = parent;
    plan.role = role;
    plan.options = std::move(options);
    plan.host.env["HOME"] = "/home/user";
    return plan;
}

PlanCase no_bypass(PlanCase plan) {
    plan.options["dangerously_skip_permissions"] = "false";
    return plan;
}

Invocation headless_invocation(std::vector<std::string> argv, std::vector<std::string> relies,
                               std::vector<std::string> notes, std::vector<std::string> env_unset) {
    Invocation inv;
    inv.argv = std::move(argv);
    inv.env_unset = std::move(env_unset);
    inv.relies_on = std::move(relies);
    inv.notes = std::move(notes);
    return inv;
}

Result<Decision> decide_case(const PlanCase& plan_case) {
    adapters::PlanRequest request;
    request.harness_id = plan_case.harness;
    request.parent_mode = plan_case.parent_mode;
    const bool write = plan_case.role == RoleKind::write;
    request.role = Role{write ? "code" : "review", plan_case.role, {}, {}};
    request.model = plan_case.model;
    request.options.values = plan_case.options;
    request.version = plan_case.version;
    request.resume_session = plan_case.resume;
    request.extra_args = plan_case.extra_args;
    request.host = plan_case.host;
    request.parent_rules = plan_case.parent_rules;
    request.rule_paths = plan_case.rule_paths;
    if (!plan_case.support_dir.empty()) {
        request.support_dir = plan_case.support_dir;
        request.write_support_files = true;
    }
    return adapters::decide(request);
}

std::string show(const Invocation& invocation) {
    std::ostringstream out;
    list(out, "argv", invocation.argv);
    out << "env:";
    for (const auto& [name, value] : invocation.env)
        out << " [" << name << "=" << value << "]";
    out << "\n";
    list(out, "env_unset", invocation.env_unset);
    out << "cwd: [" << invocation.cwd << "]\nprompt: " << to_string(invocation.prompt)
        << "\ninteractive: " << invocation.interactive
        << "\nreport: " << to_string(invocation.report) << "\n";
    list(out, "relies_on", invocation.relies_on);
    list(out, "notes", invocation.notes);
    return out.str();
}

std::string show(const Refusal& refusal) {
    std::ostringstream out;
    out << "reason: " << refusal.reason << "\n";
    list(out, "alternatives", refusal.alternatives);
    return out.str();
}

} // namespace sonata::testing
