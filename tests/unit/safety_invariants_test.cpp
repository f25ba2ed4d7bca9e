// The safety invariants, checked over every adapter × parent mode × role × option × host
// combination: no forbidden flag, never wider than the folded mode, read-only roles stay read-only,
// IS_SANDBOX is always removed, every refusal explains itself and offers an alternative.
#include <algorithm>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "adapters/support/planner.hpp"

namespace sonata::adapters {
namespace {

// Tokens that widen permissions wherever they appear in argv or env values.
const std::vector<std::string> k_widening_tokens{
    "yolo", "bypass",           "dangerously", "danger-full-access", "--auto",
    "-y",   "skip-permissions", "full-auto",   "--sandbox off",      "never"};

// (harness, effective mode, token) cells where the DESIGN table itself uses a widening token.
const std::set<std::tuple<std::string, Mode, std::string>> k_table_allows{
    {"claude", Mode::bypass_permissions, "bypass"},
    {"codex", Mode::bypass_permissions, "danger-full-access"},
    {"opencode", Mode::accept_edits, "--auto"},
    {"opencode", Mode::bypass_permissions, "--auto"},
    {"kilo", Mode::bypass_permissions, "--auto"},
    {"droid", Mode::accept_edits, "--auto"},       // --auto low, with a tool list that has no shell
    {"droid", Mode::bypass_permissions, "--auto"}, // acceptEdits's, under skip_permissions=false
    {"droid", Mode::bypass_permissions, "skip-permissions"},
    {"reasonix", Mode::bypass_permissions, "bypass"},
    {"grok", Mode::plan, "bypass"}, // every grok tier is headless bypass inside its sandbox
    {"grok", Mode::accept_edits, "bypass"},
    {"grok", Mode::bypass_permissions, "bypass"},
    {"grok", Mode::bypass_permissions, "--sandbox off"},
    {"muse", Mode::bypass_permissions, "yolo"},
    {"agy", Mode::bypass_permissions, "dangerously"},
    {"agy", Mode::bypass_permissions, "skip-permissions"},
    {"gemini", Mode::bypass_permissions, "yolo"},
    {"qwen", Mode::bypass_permissions, "yolo"},
};

// Tokens that grant writes: never in a read-only role's invocation.
const std::vector<std::string> k_write_tokens{"workspace-write",    "acceptEdits", "auto_edit",
                                              "auto-edit",          "edit,write",  "--agent build",
                                              "--sandbox workspace"};

std::string base_id(const std::string& harness) {
    return harness.rfind("pi-", 0) == 0 ? "pi-profile" : harness;
}

std::vector<std::string> harnesses_under_test() {
    auto ids = harness_ids();
    for (auto& id : ids) {
        if (id.find('<') != std::string::npos || id == "pi-profile") id = "pi-review";
    }
    return ids;
}

std::vector<TaskOptions> option_sets(const Adapter& adapter) {
    std::vector<TaskOptions> sets{TaskOptions{},
                                  TaskOptions{{{"dangerously_skip_permissions", "false"}}}};
    const std::vector<std::string> values{
        "read-only", "workspace-write", "danger-full-access", "true", "false", "plan",
        "default",   "auto_edit",       "auto-edit",          "yolo", "bogus"};
    for (const auto& key : adapter.accepted_options()) {
        for (const auto& value : values) {
            sets.push_back(TaskOptions{{{key, value}}});
            sets.push_back(TaskOptions{{{key, value}, {"dangerously_skip_permissions", "false"}}});
        }
    }
    return sets;
}

std::string joined(const Invocation& inv) {
    std::string all;
    for (const auto& arg : inv.argv)
        all += arg + " ";
    for (const auto& [key, value] : inv.env)
        all += key + "=" + value + " ";
    return all;
}

bool has_token(const std::string& all, const std::string& token) {
    if (token == "-y") return all.find(" -y ") != std::string::npos;
    return all.find(token) != std::string::npos;
}

void check_run(const Decision& d, const Adapter& adapter, const std::string& where) {
    const Invocation& inv = d.invocation();
    ASSERT_FALSE(inv.argv.empty()) << where;
    const auto forbidden = adapter.forbidden_flags(d.effective_mode);
    for (const auto& arg : inv.argv) {
        const std::string flag = arg.substr(0, arg.find('='));
        EXPECT_EQ(std::count(forbidden.begin(), forbidden.end(), flag), 0)
            << where << ": forbidden " << arg;
    }
    const std::string all = " " + joined(inv);
    for (const auto& token : k_widening_tokens) {
        if (!has_token(all, token)) continue;
        EXPECT_TRUE(k_table_allows.count({base_id(d.harness), d.effective_mode, token}))
            << where << ": widening token '" << token << "' in " << all;
    }
    if (d.role.kind == RoleKind::read_only) {
        for (const auto& token : k_write_tokens)
            EXPECT_FALSE(has_token(all, token)) << where << ": " << all;
        EXPECT_NE(std::find(inv.relies_on.begin(), inv.relies_on.end(), "write-withheld"),
                  inv.relies_on.end())
            << where << ": a read-only mapping must rely on write-withheld";
    }
    EXPECT_NE(std::find(inv.env_unset.begin(), inv.env_unset.end(), "IS_SANDBOX"),
              inv.env_unset.end())
        << where;
    for (const auto& name : inv.env_unset)
        EXPECT_EQ(inv.env.count(name), 0U) << where << ": set and unset " << name;
}

std::vector<PlanRequest> every_combination() {
    std::vector<PlanRequest> requests;
    for (const auto& harness : harnesses_under_test()) {
        const Adapter& adapter = **find_adapter(harness);
        for (const char* parent :
             {"plan", "default", "acceptEdits", "bypassPermissions", "auto", "dontAsk"}) {
            for (const auto& role : builtin_roles()) {
                for (const auto& options : option_sets(adapter)) {
                    for (const bool root : {false, true}) {
                        for (const char* version : {"", "1.18.33", "2.0.16"}) {
                            for (const char* resume : {"", "sess-1"}) {
                                PlanRequest request;
                                request.harness_id = harness;
                                request.parent_mode = *parse_mode(parent);
                                request.role = role;
                                request.options = options;
                                request.version = version;
                                request.resume_session = resume;
                                request.host.is_root = root;
                                requests.push_back(request);
                            }
                        }
                    }
                }
            }
        }
    }
    return requests;
}

std::string describe(const PlanRequest& r) {
    std::string out = r.harness_id + " parent=" + std::string(to_string(r.parent_mode)) +
                      " role=" + r.role.name + " root=" + (r.host.is_root ? "1" : "0") +
                      " version=" + r.version + " resume=" + r.resume_session;
    for (const auto& [key, value] : r.options.values)
        out += " " + key + "=" + value;
    return out;
}

void check_error(const Error& error, const PlanRequest& request, const std::string& where) {
    EXPECT_EQ(error.code, ExitCode::usage) << where;
    bool names_option = false;
    for (const auto& [key, value] : request.options.values)
        names_option |= error.message.find(key) != std::string::npos;
    EXPECT_TRUE(names_option) << where << ": an error must name the option: " << error.message;
}

TEST(SafetyInvariants, HoldForEveryCombination) {
    std::size_t runs = 0;
    std::size_t refusals = 0;
    for (const auto& request : every_combination()) {
        const std::string where = describe(request);
        auto decision = decide(request);
        if (!decision) {
            check_error(decision.error(), request, where);
            continue;
        }
        EXPECT_TRUE(no_wider_than(decision->effective_mode, request.parent_mode)) << where;
        if (request.role.kind == RoleKind::read_only) {
            EXPECT_EQ(decision->effective_mode, Mode::plan) << where;
        }
        if (decision->runs()) {
            ++runs;
            check_run(*decision, **find_adapter(request.harness_id), where);
        } else {
            ++refusals;
            EXPECT_FALSE(decision->refusal().reason.empty()) << where;
            EXPECT_FALSE(decision->refusal().alternatives.empty()) << where;
        }
    }
    EXPECT_GT(runs, 0U);
    EXPECT_GT(refusals, 0U);
}

TEST(SafetyInvariants, ClaudeBypassAsRootIsAnExplainedRefusal) {
    PlanRequest request;
    request.harness_id = "claude";
    request.parent_mode = Mode::bypass_permissions;
    request.role = Role{"code", RoleKind::write, {}, {}};
    request.host.is_root = true;
    auto decision = decide(request);
    ASSERT_TRUE(decision);
    ASSERT_FALSE(decision->runs());
    EXPECT_NE(decision->refusal().reason.find("root"), std::string::npos);
    EXPECT_NE(decision->refusal().reason.find("IS_SANDBOX"), std::string::npos);
    request.host.is_root = false;
    auto as_user = decide(request);
    ASSERT_TRUE(as_user && as_user->runs());
    EXPECT_EQ(
        as_user->invocation().argv,
        (std::vector<std::string>{"claude", "-p", "--setting-sources=user", "--permission-mode",
                                  "bypassPermissions", "--output-format=json"}));
}

TEST(SafetyInvariants, ForbiddenExtraArgsFromConfigAreRejected) {
    PlanRequest request;
    request.harness_id = "claude";
    request.parent_mode = Mode::accept_edits;
    request.role = Role{"code", RoleKind::write, {}, {}};
    request.extra_args = {"--dangerously-skip-permissions"};
    auto decision = decide(request);
    ASSERT_FALSE(decision);
    EXPECT_EQ(decision.error().code, ExitCode::config);
    EXPECT_NE(decision.error().message.find("--dangerously-skip-permissions"), std::string::npos);
}

} // namespace
} // namespace sonata::adapters
