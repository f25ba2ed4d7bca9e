// The Gemini CLI family's mode table: one approval-mode tier per Claude Code mode, narrowed by the
// per-task `approval_mode` option, headless with the prompt on stdin.
#include "adapters/support/gemini_family.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "adapters/support/flag_value.hpp"
#include "adapters/support/project_files.hpp"
#include "adapters/support/relies.hpp"
#include "core/json_parse.hpp"

namespace sonata::adapters {
namespace {

std::size_t rank(Mode mode) { return static_cast<std::size_t>(mode); }

/// The tier `approval_mode` asks for: `granted` when absent, an error when unknown or wider.
Result<Mode> narrow(const TaskOptions& options, const std::array<std::string, 4>& names,
                    Mode granted, Mode mode, std::string_view harness) {
    const auto value = options.get(k_option_approval_mode);
    if (!value) return granted;
    const auto it = std::find(names.begin(), names.end(), *value);
    if (it == names.end()) {
        return tl::unexpected(invalid_option(k_option_approval_mode, *value,
                                             std::vector<std::string>(names.begin(), names.end())));
    }
    const auto asked = static_cast<Mode>(it - names.begin());
    if (!no_wider_than(asked, granted)) {
        return tl::unexpected(
            widening_option(k_option_approval_mode, *value,
                            std::string(harness) + " in " + std::string(to_string(mode)) +
                                " mode gets at most --approval-mode " + names[rank(granted)]));
    }
    return asked;
}

/// What a tier relies on: plan withholds every write, default refuses what it cannot ask, the
/// edit tier stays in the workspace and refuses the rest, yolo relies on nothing.
std::vector<std::string> relies_for(Mode tier) {
    switch (tier) {
    case Mode::plan: return relies::read_only();
    case Mode::default_mode: return relies::asks_first();
    case Mode::accept_edits: {
        auto ids = relies::workspace_edits();
        ids.emplace_back(probe_id::rm_prompt);
        return ids;
    }
    case Mode::bypass_permissions: return {};
    }
    return {};
}

/// The family's facts over `spec`, whose forbidden flags are the harness's widening ones.
HarnessSpec family_spec(HarnessSpec spec, const GeminiTraits& traits) {
    spec.accepted_options = {k_option_approval_mode};
    const FlagsByMode widening = spec.forbidden_flags;
    spec.forbidden_flags = FlagsByMode::from([&](Mode mode) {
        std::vector<std::string> flags{"-y", "--yolo"};
        flags.insert(flags.end(), widening[mode].begin(), widening[mode].end());
        return flags;
    });
    const bool policy = !traits.mode_switch_policy.empty();
    spec.reserved_flags = FlagsByMode::from([&](Mode mode) {
        if (mode == Mode::bypass_permissions || !policy) return std::vector<std::string>{};
        return std::vector<std::string>{"--policy"};
    });
    // From `gemini --help` (0.61.0) and `qwen --help` (0.15.10); yargs also takes camelCase.
    spec.flag_aliases = {
        {"-y", "--yolo"},     {"-m", "--model"},         {"-s", "--sandbox"},
        {"-p", "--prompt"},   {"-e", "--extensions"},    {"-r", "--resume"},
        {"-c", "--continue"}, {"-o", "--output-format"}, {"-i", "--prompt-interactive"}};
    return spec;
}

} // namespace

GeminiFamily::GeminiFamily(HarnessSpec spec, GeminiTraits traits)
    : Adapter(family_spec(std::move(spec), traits)), m_traits(std::move(traits)) {}

Result<Outcome> GeminiFamily::map(const PlanInput& in) const {
    const auto& names = m_traits.approval_modes;
    Invocation inv;
    Mode granted = in.mode;
    if (granted == Mode::bypass_permissions && in.options.forbids_bypass()) {
        granted = Mode::accept_edits;
        inv.notes.push_back("dangerously_skip_permissions=false: --approval-mode " + names[2] +
                            " instead of " + names[3]);
    }
    auto tier = narrow(in.options, names, granted, in.mode, id());
    SONATA_TRY(tier);
    if (*tier != granted) {
        inv.notes.push_back("approval_mode=" + names[rank(*tier)] + ": narrower than " +
                            names[rank(granted)]);
    }
    inv.argv = {in.executable, "--approval-mode", names[rank(*tier)]};
    for (const auto& flag : m_traits.startup_flags)
        inv.argv.push_back(flag);
    if (*tier != Mode::bypass_permissions && !m_traits.mode_switch_policy.empty())
        inv.argv.insert(inv.argv.end(), {"--policy", policy_path(in.support_dir)});
    set_flag_value(inv.argv, "-m", in.model);
    if (const auto& variable = m_traits.trusted_folders_variable; !variable.empty())
        inv.env[variable] = trusted_folders_path(in.support_dir);
    inv.relies_on = relies_for(*tier);
    if (*tier == Mode::default_mode) {
        inv.notes.push_back(
            "headless: actions that need approval are withheld or refused, not asked");
    } else if (*tier == Mode::accept_edits) {
        inv.notes.push_back("headless: edits run unasked; commands that need approval are withheld "
                            "or refused, not asked");
    }
    if (!in.resume_session.empty()) {
        set_flag_value(inv.argv, "--resume", in.resume_session);
        relies::add_resume(inv.relies_on);
    }
    for (const auto& note : m_traits.startup_notes)
        inv.notes.push_back(note);
    inv.prompt = PromptChannel::stdin_pipe;
    inv.report = ReportSource::stdout_text;
    return inv;
}

std::string GeminiFamily::policy_path(const std::string& support_dir) const {
    return support_dir + "/" + std::string(id()) + "-deny-mode-switch.toml";
}

std::string GeminiFamily::trusted_folders_path(const std::string& support_dir) const {
    return support_dir + "/" + std::string(id()) + "-trusted-folders.json";
}

std::vector<FileToWrite> GeminiFamily::support_files(const std::string& support_dir) const {
    std::vector<FileToWrite> files;
    if (const auto& policy = m_traits.mode_switch_policy; !policy.empty())
        files.push_back({policy_path(support_dir), policy});
    if (!m_traits.trusted_folders_variable.empty())
        files.push_back({trusted_folders_path(support_dir), "{}\n"});
    return files;
}

std::optional<McpSetup>
GeminiFamily::project_mcp(const std::string& workspace,
                          const std::vector<std::string>& server_argv) const {
    const std::string& separator = m_traits.mcp_separator;
    return McpSetup{{{workspace + "/" + m_traits.config_dir + "/settings.json",
                      project::mcp_servers_json(server_argv)}},
                    "mcp" + separator + project::k_mcp_server + separator + project::k_mcp_tool,
                    hostile_user_files(workspace)};
}

namespace {

/// The newest chat recording under `dir` (gemini's session-*.json(l), qwen's <uuid>.jsonl).
std::string newest_chat(const std::string& dir) {
    return project::newest_file(
        dir,
        [](const std::string& name) {
            return (name.ends_with(".json") || name.ends_with(".jsonl")) &&
                   (name.rfind("session-", 0) == 0 || !project::first_uuid(name).empty());
        },
        5);
}

} // namespace

RunCost GeminiFamily::run_cost(const std::string&, const std::string&,
                               const std::string& home) const {
    const auto file = newest_chat(home + "/" + m_traits.config_dir);
    if (file.empty()) return {};
    const std::string text = project::read_head(file, 64U << 20U);
    // Records are upserted: the last line of an id wins.
    std::map<std::string, std::pair<long long, long long>> turns;
    for (std::size_t at = 0; at < text.size();) {
        const auto end = std::min(text.find('\n', at), text.size());
        const auto line = parse_json(std::string_view(text).substr(at, end - at)).value_or(nullptr);
        at = end + 1;
        if (!line.is_object()) continue;
        const auto type = line.find("type");
        if (type == line.end() || !type->is_string()) continue;
        const char* in_key = nullptr;
        const char* out_key = nullptr;
        const char* id_key = nullptr;
        const nlohmann::json* usage = nullptr;
        if (*type == "gemini" && line.contains("tokens") && line["tokens"].is_object()) {
            usage = &line["tokens"];
            in_key = "input";
            out_key = "output";
            id_key = "id";
        } else if (*type == "assistant" && line.contains("usageMetadata") &&
                   line["usageMetadata"].is_object()) {
            usage = &line["usageMetadata"];
            in_key = "promptTokenCount";
            out_key = "candidatesTokenCount";
            id_key = "uuid";
        }
        if (usage == nullptr) continue;
        const auto id = line.find(id_key);
        const std::string key =
            id != line.end() && id->is_string() ? id->get<std::string>() : std::to_string(at);
        turns[key] = {project::count_member(*usage, in_key).value_or(0),
                      project::count_member(*usage, out_key).value_or(0)};
    }
    if (turns.empty()) return {};
    RunCost cost;
    cost.input_tokens = 0;
    cost.output_tokens = 0;
    for (const auto& [id, counts] : turns) {
        *cost.input_tokens += counts.first;
        *cost.output_tokens += counts.second;
    }
    return cost;
}

std::string GeminiFamily::session_id(const std::string&, const std::string&,
                                     const std::string& home, const Invocation&) const {
    // Chat recordings: gemini ~/.gemini/tmp/<project>/chats/session-*.json(l), qwen
    // ~/.qwen/projects/<project>/chats/<uuid>.jsonl; both carry "sessionId".
    const auto file = newest_chat(home + "/" + m_traits.config_dir);
    if (file.empty()) return {};
    const auto id = project::json_string_field(project::read_head(file), "sessionId");
    return id.empty() ? project::first_uuid(file.substr(file.rfind('/') + 1)) : id;
}

} // namespace sonata::adapters
