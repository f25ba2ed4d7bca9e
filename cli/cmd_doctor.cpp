// `sonata doctor [--json]`: one line per check of this machine and project — ok, warning or
// blocker, and the command that fixes it — and a non-zero exit on a blocker. Every check only
// reads: files, PATH, each harness's --version (bounded by [timeouts] version_seconds).
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "adapters/support/pipeline.hpp"
#include "adapters/support/planner.hpp"
#include "cli/app.hpp"
#include "cli/claude_settings.hpp"
#include "cli/init_support.hpp"
#include "cli/mcp_client_record.hpp"
#include "core/config.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/matrix.hpp"

namespace sonata::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

enum class Status { ok, warning, blocker };

std::string_view to_string(Status s) {
    switch (s) {
    case Status::ok: return "ok";
    case Status::warning: return "warning";
    case Status::blocker: return "blocker";
    }
    return "ok";
}

struct Check {
    std::string name;
    Status status = Status::ok;
    std::string detail;
    std::string fix = {};
};

struct Doctor {
    const Context& context;
    std::string home;
    std::string project;
    std::vector<Check> checks;

    void add(Check check) { checks.push_back(std::move(check)); }

    /// The parent's rules for this project, read once for every check that shows them.
    const Result<ParentRules>& rules_found() {
        if (!found_rules) found_rules = read_parent_rules(settings_files(home, project));
        return *found_rules;
    }
    std::optional<Result<ParentRules>> found_rules = {};

    /// Marks a file doctor could not use: `problem` names it and says why.
    void skip(const std::string& path, const std::string& problem) {
        add({"unreadable file", Status::warning, problem + "; doctor could not look inside it",
             "fix or move " + path});
    }

    /// read_claude_json's document; null, and the file marked, when it cannot be used.
    ordered_json read(const std::string& path) {
        auto doc = read_claude_json(path);
        if (doc) return std::move(*doc);
        skip(path, doc.error().message);
        return nullptr;
    }

    /// The sonata plugin, installed through `claude plugin install`.
    bool plugin_installed() {
        if (home.empty()) return false;
        const auto installed = read(home + "/.claude/plugins/installed_plugins.json");
        const ordered_json* plugins = member(installed, "plugins");
        if (plugins == nullptr || !plugins->is_object()) return false;
        for (const auto& [key, value] : plugins->items())
            if (key.rfind("sonata@", 0) == 0) return true;
        return false;
    }

    void hook(const Config& config, bool plugin) {
        std::vector<std::string> files = {project + "/.claude/settings.json",
                                          project + "/.claude/settings.local.json"};
        if (!home.empty()) files.push_back(home + "/.claude/settings.json");
        for (const auto& file : files) {
            const ordered_json settings = read(file);
            if (const auto problem = hooks_shape_problem(settings); !problem.empty()) {
                skip(file, file + ": " + problem);
                continue;
            }
            if (has_sonata_hook(settings)) {
                add({"hook", Status::ok, "sonata's PreToolUse hook is in " + file});
                return;
            }
        }
        if (plugin) {
            add({"hook", Status::ok, "the sonata plugin brings the PreToolUse hook"});
            return;
        }
        // Without it every dispatch takes the parent for `default`: a role whose harness cannot
        // ask is then refused.
        std::string refused;
        std::vector<std::string> names;
        for (const auto& [name, role] : config.roles)
            names.push_back(name);
        for (const auto& role : builtin_roles())
            names.push_back(role.name);
        for (const auto& name : names) {
            auto found = config.find_role(name);
            if (!found || found->harness.empty()) continue;
            adapters::DispatchRequest request;
            request.role = name;
            request.mode = "default";
            request.cwd = context.cwd;
            request.env = context.env;
            auto planned = adapters::plan_dispatch(request, config);
            if (planned && !planned->decision.runs()) {
                refused = "role " + name + " (" + found->harness +
                          "): " + planned->decision.refusal().reason;
                break;
            }
        }
        add({"hook", refused.empty() ? Status::warning : Status::blocker,
             "sonata's PreToolUse hook is not installed: every dispatch takes this session for "
             "`default`" +
                 (refused.empty() ? std::string() : ", where " + refused),
             "sonata init --yes"});
    }

    void mcp(bool plugin) {
        std::string where;
        if (has_sonata_server(read(project + "/.mcp.json"))) where = project + "/.mcp.json";
        const auto user = home.empty() ? ordered_json() : read(home + "/.claude.json");
        if (where.empty() && has_sonata_server(user)) where = home + "/.claude.json";
        const ordered_json* projects = member(user, "projects");
        const ordered_json* this_project =
            projects == nullptr ? nullptr : member(*projects, project.c_str());
        if (where.empty() && this_project != nullptr && has_sonata_server(*this_project))
            where = home + "/.claude.json (this project)";
        if (where.empty() && plugin) where = "the sonata plugin";
        if (where.empty()) {
            add({"mcp", Status::warning,
                 "`sonata mcp` is not registered with Claude Code: a session can dispatch only "
                 "through Bash",
                 "sonata init --yes (or --scope global --yes, or the plugin)"});
            return;
        }
        add({"mcp", Status::ok, "`sonata mcp` is registered in " + where});
        if (where == project + "/.mcp.json") {
            const auto loaders = adapters::harnesses_loading_mcp(project, where);
            add({"recursion", Status::warning,
                 "the project's .mcp.json exposes sonata's own tools to the harnesses that load it "
                 "(" +
                     fmt::format("{}", fmt::join(loaders, ", ")) +
                     "): sonata refuses to dispatch them from this workspace",
                 "sonata init --remove --yes && sonata init --scope global --yes"});
        }
    }

    /// This machine's matrix, with a line saying what it holds (or that there is none).
    std::optional<Matrix> machine_matrix(Status unmeasured, bool strict) {
        auto dir = machine_dir_checked(context.env);
        if (!dir) return std::nullopt;
        const std::string path = default_matrix_path(*dir);
        if (!fs::exists(path)) {
            add({"matrix", unmeasured,
                 "no capability matrix on this machine (" + path +
                     "): every mapping runs unmeasured" +
                     (strict ? " and gate = \"strict\" refuses it" : ""),
                 "sonata probe"});
            return std::nullopt;
        }
        auto loaded = load_matrix(path);
        if (!loaded) {
            add({"matrix", Status::blocker, loaded.error().message, "sonata probe"});
            return std::nullopt;
        }
        add({"matrix", Status::ok, path + ": " + std::to_string(loaded->cells.size()) + " cells"});
        return std::move(*loaded);
    }

    /// One installed harness: runnable, its version read, and measured in the matrix.
    void harness_line(const adapters::Adapter& adapter, const adapters::HarnessStatus& s,
                      const std::optional<Matrix>& matrix, Status unmeasured) {
        const std::string id(adapter.id());
        if (!s.cannot_run.empty()) {
            add({"harness " + id, Status::warning, s.path + ": " + s.cannot_run});
            return;
        }
        if (s.version.empty()) {
            add({"harness " + id, Status::warning,
                 s.path + ": its version could not be read (" + s.note + ")"});
            return;
        }
        const bool measured =
            matrix && std::any_of(matrix->cells.begin(), matrix->cells.end(), [&](const Cell& c) {
                return c.harness == id && c.version == s.version;
            });
        if (matrix && !measured) {
            add({"harness " + id, unmeasured,
                 s.version + " at " + s.path +
                     " is not in the matrix (probed: an older "
                     "version, or never)",
                 "sonata probe --harness " + id});
        } else {
            add({"harness " + id, Status::ok, s.version + " at " + s.path});
        }
        rules_line(adapter, s);
        for (auto& note : adapter.setup_notes(host_facts())) {
            add({std::move(note.name),
                 note.level == adapters::SetupNote::Level::ok ? Status::ok : Status::warning,
                 std::move(note.detail), std::move(note.fix)});
        }
    }

    /// Whether the installed harness holds the parent's rules in its acceptEdits mapping (the
    /// usual dispatch), as the planner carries them; nothing when there are none to hold.
    void rules_line(const adapters::Adapter& adapter, const adapters::HarnessStatus& s) {
        const auto& rules = rules_found();
        if (!rules || rules->empty()) return;
        adapters::PlanRequest request;
        request.harness_id = std::string(adapter.id());
        request.parent_mode = Mode::accept_edits;
        request.role = Role{"write", RoleKind::write, {}, {}};
        request.executable = s.path;
        request.version = s.version;
        request.host = host_facts();
        request.parent_rules = *rules;
        const auto decision = adapters::decide(request);
        const std::string name = "parent rules in " + request.harness_id;
        if (!decision) {
            add({name, Status::warning, decision.error().message});
        } else if (decision->runs()) {
            add({name, Status::ok,
                 "its acceptEdits mapping holds all " + std::to_string(rules->rules.size()) +
                     " of them"});
        } else if (decision->refusal().reason.find("the parent's rule") != std::string::npos) {
            add({name, Status::warning, decision->refusal().reason});
        } // refused for another reason: harness_line's business, not the rules'
    }

    void harnesses_and_matrix(const Config& config) {
        const bool strict = config.gate == GateStrictness::strict;
        const Status unmeasured = strict ? Status::blocker : Status::warning;
        const auto matrix = machine_matrix(unmeasured, strict);
        auto runner = make_system_runner();
        for (const auto& adapter : adapters::all_adapters()) {
            const std::string id(adapter->id());
            if (id.find('<') != std::string::npos) continue; // a profile family, not a harness
            const auto s = adapters::detect_harness(*adapter, id, config, context.env, *runner);
            if (s.installed) harness_line(*adapter, s, matrix, unmeasured);
        }
    }

    void mcp_client() {
        auto record = last_client(context);
        if (!record) {
            add({"mcp client", Status::warning, record.error().message, "remove the file"});
            return;
        }
        if (!*record) {
            add({"mcp client", Status::ok, "no client has called `sonata mcp` here yet"});
            return;
        }
        const auto& r = **record;
        const std::string who = (r.seen.client.empty() ? "a client" : r.seen.client) +
                                " called `sonata mcp` here at " + r.at + " with MCP " +
                                r.seen.protocol;
        add({"mcp client", Status::ok,
             r.seen.tasks ? who + " and tasks: a dispatch runs as a task and its report comes "
                                  "back when the run ends"
                          : who + " without tasks: a dispatch waits in the call (at most 100 s) "
                                  "and the model goes on with wait and the run's id"});
    }

    /// The parent's deny and ask rules, and the harnesses that hold them all (a dispatch to any
    /// other is refused while they stand).
    void parent_rules() {
        const auto& rules = rules_found();
        if (!rules) {
            add({"parent rules", Status::blocker, rules.error().message,
                 "fix the file: sonata refuses every dispatch while it cannot read the rules"});
            return;
        }
        if (rules->empty()) {
            add({"parent rules", Status::ok, "no deny or ask rules in Claude Code's settings"});
            return;
        }
        std::vector<std::string> named;
        for (const auto& r : rules->rules)
            named.push_back(describe(r));
        const auto holding = adapters::harnesses_holding(*rules, adapters::RulePaths::as_in_parent);
        const std::string allows = rules->ignored_allows.empty()
                                       ? ""
                                       : " (the project's allow rules " +
                                             join(rules->ignored_allows, ", ") +
                                             " are never carried)";
        add({"parent rules", holding.empty() ? Status::warning : Status::ok,
             join(named, ", ") + "; held by " +
                 (holding.empty() ? "no harness" : join(holding, ", ")) +
                 ": a dispatch to another harness is refused while they stand" + allows,
             holding.empty() ? "anchor a path rule at // or ~/, or drop a rule a child may break"
                             : ""});
    }

    void host() {
        const auto path = context.env.find("PATH");
        if (search_path("tmux", path == context.env.end() ? "/usr/bin:/bin" : path->second)) {
            add({"tmux", Status::ok, "tmux is on PATH"});
        } else {
            add({"tmux", Status::warning,
                 "tmux is not on PATH: the TUI mappings (" + join(tui_harnesses(), ", ") +
                     ") cannot run",
                 "apt-get install tmux"});
        }
    }

    /// The host as the adapters read it, with doctor's own environment.
    adapters::HostFacts host_facts() const {
        adapters::HostFacts host = adapters::detect_host();
        host.env = context.env;
        return host;
    }

    /// The harnesses with a TUI mapping: those whose adapter knows their screen.
    static std::vector<std::string> tui_harnesses() {
        std::vector<std::string> ids;
        for (const auto& adapter : adapters::all_adapters()) {
            if (!adapter->screen_patterns().ready.empty()) ids.emplace_back(adapter->id());
        }
        return ids;
    }
};

Result<int> run_doctor(bool as_json, const Context& context) {
    Doctor doctor{context, {}, {}, {}};
    const auto home = context.env.find("HOME");
    if (home != context.env.end()) doctor.home = home->second;
    const auto where = locate_config(context.cwd, context.env);
    doctor.project = where.project_dir.empty() ? context.cwd : where.project_dir;
    auto config = context.config();
    if (!config) {
        doctor.add(
            {"config", Status::blocker, config.error().message, "fix the file and line it names"});
    } else {
        doctor.add(
            {"config", Status::ok,
             where.project_file.empty()
                 ? (where.machine_file.empty() ? "defaults (no config file)" : where.machine_file)
                 : where.project_file});
        const bool plugin = doctor.plugin_installed();
        doctor.hook(*config, plugin);
        doctor.mcp(plugin);
        doctor.mcp_client();
        doctor.harnesses_and_matrix(*config);
    }
    doctor.parent_rules();
    doctor.host();
    bool blocked = false;
    ordered_json list = ordered_json::array();
    for (const auto& c : doctor.checks) {
        blocked = blocked || c.status == Status::blocker;
        if (as_json) {
            list.push_back({{"check", c.name},
                            {"status", to_string(c.status)},
                            {"detail", c.detail},
                            {"fix", c.fix.empty() ? ordered_json(nullptr) : ordered_json(c.fix)}});
        } else {
            std::cout << fmt::format("{:<8} {}: {}", to_string(c.status), c.name, c.detail)
                      << (c.fix.empty() ? "" : "\n         fix: " + c.fix) << '\n';
        }
    }
    if (as_json)
        std::cout << list.dump(2, ' ', false, ordered_json::error_handler_t::replace) << '\n';
    return blocked ? to_int(ExitCode::failure) : 0;
}

} // namespace

void add_doctor(CLI::App& app, Action& action) {
    auto json_flag = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand(
        "doctor", "Check this machine and project: ok, warning or blocker, each with its fix; "
                  "exits 1 on a blocker");
    cmd->add_flag("--json", *json_flag, "Print a JSON array of {check, status, detail, fix}");
    cmd->callback([&action, json_flag] {
        action = [json_flag](const Context& context) { return run_doctor(*json_flag, context); };
    });
}

} // namespace sonata::cli
