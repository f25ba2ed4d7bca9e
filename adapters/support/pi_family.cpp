// The pi family's shared mapping: refusals, the `pi -p --tools …` form, and endpoint injection.
#include "adapters/support/pi_family.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "adapters/support/project_files.hpp"
#include "adapters/support/relies.hpp"

namespace sonata::adapters {
namespace {

Refusal refuse_default(std::string_view id) {
    return refuse(std::string(id) +
                      " has no approval system (no permission prompts, no sandbox), so "
                      "\"ask me first\" cannot be honoured",
                  {"dispatch in acceptEdits or bypassPermissions mode",
                   "use harness codex, whose interactive TUI asks before acting",
                   "use a read-only role (it runs as plan)"});
}

/// What a tool list relies on: plan withholds every write; acceptEdits keeps writes in the
/// workspace, and refuses `rm` when the shell is withheld; bypass relies on nothing.
std::vector<std::string> relies_for(Mode mode, bool shell) {
    if (mode == Mode::plan) return relies::read_only();
    if (mode == Mode::bypass_permissions) return {};
    auto ids = relies::workspace_edits();
    if (!shell) ids.emplace_back(probe_id::rm_prompt);
    return ids;
}

} // namespace

Result<Outcome> PiFamily::map(const PlanInput& in) const {
    if (in.mode == Mode::default_mode) return refuse_default(in.harness_id);
    Invocation inv;
    Mode mode = in.mode;
    if (mode == Mode::bypass_permissions && in.options.forbids_bypass()) {
        if (const auto fallback = no_bypass_fallback()) {
            mode = *fallback;
            inv.notes.push_back("dangerously_skip_permissions=false: runs with the " +
                                std::string(to_string(mode)) + " tools");
        } else {
            inv.notes.push_back(
                "dangerously_skip_permissions=false changes nothing: pi has no bypass "
                "flag, and acceptEdits gets the same tools");
        }
    }
    const ToolList list = tool_list(mode);
    // hostile-workspace (pi 0.73.1): pi loads .pi/extensions/*.ts from the repository and runs
    // its code at start-up, in every tier; extension discovery is off.
    inv.argv = {in.executable, "-p", "--no-extensions", "--tools", list.tools};
    if (!in.model.empty()) inv.argv.insert(inv.argv.end(), {"--model", in.model});
    inv.relies_on = relies_for(mode, list.shell);
    if (!in.resume_session.empty()) {
        inv.argv.insert(inv.argv.end(), {"--session", in.resume_session});
        relies::add_resume(inv.relies_on);
    }
    if (list.shell) inv.notes.push_back("no sandbox: shell commands run unasked");
    // Offline: no version check, model-catalog refresh or package install at start-up, so a
    // repository's packages are never installed. Part of the mapping, not of the probe's endpoint
    // injection: a dispatch runs what its probe cell measured.
    inv.env["PI_OFFLINE"] = "1";
    inv.prompt = PromptChannel::argument;
    inv.report = ReportSource::stdout_text;
    return inv;
}

std::vector<std::string> PiFamily::forbidden_flags(Mode mode) const {
    std::vector<std::string> flags{"--continue",   "-c",     "--resume",  "-r",
                                   "--session-id", "--fork", "--approve", "-a"};
    if (mode == Mode::plan) flags.insert(flags.end(), {"--extension", "-e"});
    return flags;
}

std::vector<std::string> PiFamily::reserved_flags(Mode) const { return {"--session"}; }

std::vector<FileToWrite> PiFamily::hostile_files(const std::string& workspace,
                                                 const std::string& canary) const {
    const std::string extension = "import { writeFileSync } from \"node:fs\";\nwriteFileSync(" +
                                  nlohmann::json(canary).dump() +
                                  ", \"pi project extension loaded\\n\");\n"
                                  "export default function () {}\n";
    return {{workspace + "/.pi/extensions/project-helper.ts", extension},
            {workspace + "/.pi/settings.json", R"({"extensions":["extensions/project-helper.ts"]})"
                                               "\n"}};
}

std::string PiFamily::session_id(const std::string&, const std::string&,
                                 const std::string& home) const {
    // <agent dir>/sessions/--<cwd>--/<time>_<uuid>.jsonl
    const auto file = project::newest_file(
        home + "/.pi/agent/sessions",
        [](const std::string& name) {
            return name.ends_with(".jsonl") && !project::first_uuid(name).empty();
        },
        2);
    return file.empty() ? std::string() : project::first_uuid(file.substr(file.rfind('/') + 1));
}

ToolVocabulary PiFamily::tools() const {
    return {{"write"}, "path", "content", false, {"bash"}, "command", {}, "", {}, {}, "", {}};
}

RefusalTexts PiFamily::refusal_texts() const {
    // Captured from 0.73.1 (fixtures/captured/pi/0.73.1/refusals.json). pi has no permission
    // layer of its own, so nothing it says means "not permitted".
    return {{"Validation failed for tool"}, {}};
}

Result<EndpointInjection> PiFamily::inject_endpoint(const Invocation& inv,
                                                    const EndpointSpec& ep) const {
    EndpointInjection out{inv, {}};
    const std::string agent_dir = ep.home + "/.pi/agent";
    out.invocation.env.insert({"PI_CODING_AGENT_DIR", agent_dir});
    nlohmann::ordered_json provider{
        {"baseUrl", ep.base_url + "/v1"},
        {"api", "openai-completions"},
        {"apiKey", ep.api_key},
        {"compat", {{"supportsDeveloperRole", false}, {"supportsReasoningEffort", false}}},
        {"models", nlohmann::ordered_json::array({{{"id", ep.model}}})}};
    nlohmann::ordered_json models;
    models["providers"]["sonata-probe"] = provider;
    out.files.push_back({agent_dir + "/models.json", models.dump(2) + "\n"});
    auto& argv = out.invocation.argv;
    if (auto m = std::find(argv.begin(), argv.end(), "--model");
        m != argv.end() && m + 1 != argv.end()) {
        *(m + 1) = ep.model;
        argv.insert(m, {"--provider", "sonata-probe"});
    } else {
        argv.insert(argv.begin() + 1, {"--provider", "sonata-probe", "--model", ep.model});
    }
    return out;
}

} // namespace sonata::adapters
