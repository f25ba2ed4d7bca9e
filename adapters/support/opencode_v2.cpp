// OpenCode 2.x's own forms (see opencode_v2.hpp).
#include "adapters/support/opencode_v2.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "adapters/support/opencode_export.hpp"
#include "adapters/support/opencode_family.hpp"
#include "core/protected_paths.hpp"

namespace sonata::adapters::opencode_v2 {
namespace {

using Json = nlohmann::ordered_json;
using opencode_family::bare;

Json rule(const std::string& action, const std::string& resource, const char* effect) {
    return Json{{"action", action}, {"resource", resource}, {"effect", effect}};
}

std::string check_unguarded(const std::string& exported, const std::string& session,
                            const std::string& task) {
    const Json doc = opencode_export::document(exported);
    if (!doc.is_object() || !doc.value("info", Json()).is_object() ||
        !doc.value("messages", Json()).is_array())
        return "opencode session export printed no session";
    const Json& info = doc["info"];
    if (info.value("id", "") != session)
        return "the export is of session " + info.value("id", "?") + ", not " + session;
    if (const std::string outcome = info.value("outcome", ""); outcome != "succeeded")
        return "the session's outcome is \"" + outcome + "\", not \"succeeded\"";
    const auto& messages = doc["messages"];
    const auto type = [](const Json& m) { return m.is_object() ? m.value("type", "") : ""; };
    const auto user = std::find_if(messages.rbegin(), messages.rend(),
                                   [&](const Json& m) { return type(m) == "user"; });
    if (user == messages.rend()) return "the session has no user message";
    const std::string asked = bare(user->value("text", ""));
    if (asked.empty() || asked != bare(task))
        return "the session's newest user message is not this run's task";
    const auto last = std::find_if(messages.rbegin(), user,
                                   [&](const Json& m) { return type(m) == "assistant"; });
    if (last == user) return "no assistant message answered the task";
    return opencode_export::unfinished_answer(
        *last, opencode_export::text_items(last->value("content", Json())));
}

/// 2.x's action for a Claude Code tool; empty for one it has no counterpart of.
std::string action_of(const std::string& tool) {
    static const std::vector<std::pair<std::string, std::string>> k_actions{
        {"Bash", "shell"},          {"Read", "read"},      {"Edit", "edit"},
        {"Write", "edit"},          {"MultiEdit", "edit"}, {"NotebookEdit", "edit"},
        {"Grep", "grep"},           {"Glob", "glob"},      {"WebFetch", "webfetch"},
        {"WebSearch", "websearch"}, {"Task", "subagent"},  {"Agent", "subagent"}};
    for (const auto& [name, action] : k_actions) {
        if (name == tool) return action;
    }
    return {};
}

/// The actions the agent's permissions allow outright (resource "*").
std::vector<std::string> allowed_actions(const Json& permissions) {
    std::vector<std::string> allowed;
    for (const auto& p : permissions) {
        if (p.value("effect", "") == "allow" && p.value("resource", "") == "*")
            allowed.push_back(p.value("action", ""));
    }
    return allowed;
}

/// A workspace-relative resource for a rule's path: `./x` and `x` as `x`; empty for any other.
std::string relative_resource(const std::string& path) {
    if (path.empty() || path.front() == '/' || path.front() == '~') return {};
    return path.rfind("./", 0) == 0 ? path.substr(2) : path;
}

} // namespace

RuleCarriage carry_rule(const PermissionRule& parent, RulePaths paths, std::string& config) {
    using How = RuleCarriage::How;
    Json doc = Json::parse(config, nullptr, false);
    Json* permissions = nullptr;
    if (doc.is_object() && doc.contains("agents") && doc["agents"].is_object()) {
        for (auto& [name, agent] : doc["agents"].items()) {
            if (agent.is_object() && agent.contains("permissions"))
                permissions = &agent["permissions"];
        }
    }
    if (permissions == nullptr || !permissions->is_array())
        return {How::cannot, "this mapping injects no agent to hold it"};
    const std::string action = action_of(parent.tool);
    const auto allowed = allowed_actions(*permissions);
    if (action.empty() || std::find(allowed.begin(), allowed.end(), action) == allowed.end())
        return {How::native, "the injected agent denies " +
                                 (action.empty() ? parent.tool : action) + " altogether"};
    std::string resource = "*";
    if (!parent.specifier.empty()) {
        if (action != "read" && action != "edit")
            return {How::cannot, "opencode matches a " + action +
                                     " rule against the call's "
                                     "text, which another spelling of it passes"};
        resource = relative_resource(parent.specifier);
        if (resource.empty())
            return {How::cannot, "opencode matches only paths relative to the workspace"};
        if (paths == RulePaths::moved)
            return {How::cannot, "its path is relative to the parent's directory, and the run "
                                 "works elsewhere"};
    }
    permissions->push_back(rule(action, resource, "deny"));
    std::string held = action + " " + resource;
    if (action == "read" && resource != "*") {
        permissions->push_back(rule("grep", "*", "deny"));
        held += ", and grep (which would show the file's lines)";
    }
    config = doc.dump();
    return {How::added, "the injected agent denies " + held};
}

std::vector<std::string> protected_patterns() {
    std::vector<std::string> guards{".claude/settings.local.json"};
    for (const auto& p : k_protected_paths) {
        if (p.root == PathRoot::workspace) guards.emplace_back(p.guard);
    }
    std::vector<std::string> patterns;
    for (const auto& guard : guards) {
        const std::string tail = guard.ends_with('/') ? guard + "*" : guard;
        if (std::find(patterns.begin(), patterns.end(), tail) != patterns.end()) continue;
        patterns.push_back(tail);
        patterns.push_back("*/" + tail);
    }
    return patterns;
}

std::string agent_config(const std::string& name, const std::vector<std::string>& allowed) {
    Json rules = Json::array({rule("*", "*", "deny")});
    for (const auto& action : allowed)
        rules.push_back(rule(action, "*", "allow"));
    // protected-path-write (opencode 2.1.2): it has no protection of its own for .git and the
    // rest, and its edits wrote every path the parent guards.
    if (std::find(allowed.begin(), allowed.end(), "edit") != allowed.end()) {
        for (const auto& pattern : protected_patterns())
            rules.push_back(rule("edit", pattern, "deny"));
    }
    // outside-workspace-write: explicit, whatever a later default does.
    rules.push_back(rule("external_directory", "*", "deny"));
    Json config;
    config["agents"][name] = Json{{"mode", "primary"}, {"permissions", rules}};
    return config.dump();
}

std::string check_export(const std::string& exported, const std::string& session,
                         const std::string& task) {
    try {
        return check_unguarded(exported, session, task);
    } catch (const Json::exception& e) {
        return std::string("the export is malformed (") + e.what() + ")";
    }
}

} // namespace sonata::adapters::opencode_v2
