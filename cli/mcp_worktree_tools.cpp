// The worktree tools (see mcp_worktree_tools.hpp).
#include "cli/mcp_worktree_tools.hpp"

#include "cli/mcp_run_results.hpp"
#include "cli/mcp_tool_support.hpp"
#include "core/text.hpp"
#include "dispatch/caller/worktree_dispatch.hpp"

namespace sonata::cli {
namespace {

using mcp::json;
using mcp::Progress;
using mcp::Stop;
using mcp::ToolResult;

mcp::ToolResult run_diff(const json& args, const Context& context) {
    auto dir = named_run(args, context);
    if (!dir) return error_result(dir.error());
    const bool stat = args.value("stat", false);
    auto diff = dispatch::run_diff(*dir, stat, context.env);
    if (!diff) return error_result(diff.error());
    return {diff->empty() ? "run " + text_arg(args, "id") + " changed nothing\n" : *diff};
}

/// The answer to an apply: what landed, or the files in conflict (nothing landed then).
mcp::ToolResult applied_text(const std::string& id, const dispatch::ApplyOutcome& outcome) {
    return {dispatch::apply_summary(id, outcome), !outcome.conflicts.empty()};
}

mcp::ToolResult run_apply(const json& args, const Context& context) {
    auto config = context.config();
    if (!config) return error_result(config.error());
    // A write to the user's tree: no wider than the parent's mode, as a dispatch is.
    auto parent = adapters::parent_mode(base_request(args, context), *config);
    if (!parent) return error_result(parent.error());
    if (parent->mode == Mode::plan) {
        return {"refuse: apply writes to the working tree, and this session is in plan mode (" +
                    parent->source + "); leave plan mode, or look with diff\n",
                true};
    }
    auto dir = named_run(args, context);
    if (!dir) return error_result(dir.error());
    // Guarded paths are held back: only the user, at a terminal, lands them (the model could set
    // any argument of this call itself).
    auto outcome = dispatch::apply_run(*dir, context.env, dispatch::GuardedPaths::hold_back);
    if (!outcome) return error_result(outcome.error());
    return applied_text(text_arg(args, "id"), *outcome);
}

mcp::ToolResult run_discard(const json& args, const Context& context) {
    auto dir = named_run(args, context);
    if (!dir) return error_result(dir.error());
    if (auto done = dispatch::discard_run(*dir, context.env); !done)
        return error_result(done.error());
    return {"discarded run " + text_arg(args, "id") + "'s worktree and branch\n"};
}

} // namespace

std::vector<mcp::Tool> worktree_tools(const Context& context) {
    const json stat = {{"type", "boolean"}, {"description", "Only the files and their lines"}};
    return {
        {"diff", "A worktree run's changes (dispatch with worktree), as git diff.",
         schema({{"id", id_prop()}, {"stat", stat}}, {"id"}), mcp::Access::reads,
         [context](const json& args, const Progress&, const Stop&) {
             return run_diff(args, context);
         }},
        {"apply",
         "Merge a finished worktree run's changes into the working tree (three-way); on a "
         "conflict nothing changes and the files are named. Refused in plan mode.",
         schema({{"id", id_prop()}}, {"id"}), mcp::Access::acts,
         [context](const json& args, const Progress&, const Stop&) {
             return run_apply(args, context);
         }},
        {"discard", "Remove a finished worktree run's worktree and its branch.",
         schema({{"id", id_prop()}}, {"id"}), mcp::Access::acts,
         [context](const json& args, const Progress&, const Stop&) {
             return run_discard(args, context);
         }},
    };
}

} // namespace sonata::cli
