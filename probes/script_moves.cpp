// Resolution of a script's next move against the conversation so far: which track the request
// belongs to, which step it is at (retries and scripted replies counted), and the tool call, the
// retry or the text that carries it out; and the reading of a harness's refusals.
#include <algorithm>
#include <cctype>
#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adapters/support/tool_census.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/text.hpp"
#include "dispatch/contract.hpp"
#include "probes/schema_sample.hpp"
#include "probes/script.hpp"
#include "probes/tool_call.hpp"

namespace sonata::probes {
namespace {

using nlohmann::json;

/// Whether `pattern` (lower case; `*` stands for any run of characters within one line) occurs in
/// `lowered`.
bool line_matches(std::string_view lowered, std::string_view pattern) {
    for (std::size_t from = 0; from < lowered.size();) {
        const auto end = std::min(lowered.find('\n', from), lowered.size());
        const auto line = lowered.substr(from, end - from);
        std::size_t at = 0;
        bool found = true;
        for (std::size_t piece = 0; found && piece <= pattern.size();) {
            const auto star = std::min(pattern.find('*', piece), pattern.size());
            const auto hit = line.find(pattern.substr(piece, star - piece), at);
            found = hit != std::string_view::npos;
            at = hit + (star - piece);
            piece = star + 1;
        }
        if (found) return true;
        from = end + 1;
    }
    return false;
}

bool contains_any(const std::string& lowered, const std::vector<std::string>& needles) {
    return std::any_of(needles.begin(), needles.end(), [&](const std::string& needle) {
        return !needle.empty() && line_matches(lowered, ascii_lower(needle));
    });
}

} // namespace

const PastToolResult* result_of(const ConversationFacts& facts, std::size_t index) {
    const auto& id = facts.tool_calls[index].call_id;
    if (!id.empty()) {
        for (const auto& result : facts.tool_results) {
            if (result.call_id == id) return &result;
        }
    }
    return index < facts.tool_results.size() ? &facts.tool_results[index] : nullptr;
}

namespace {

/// Whether call `index` retried the call before it: its id says so, or (a harness that drops
/// call ids) it calls the same tool right after a refusal for arguments that was not a retry.
bool is_retry(const ConversationFacts& facts, std::size_t index,
              const adapters::RefusalTexts& refusals) {
    const auto& call = facts.tool_calls[index];
    if (!call.call_id.empty()) return call.call_id.ends_with(k_retry_suffix);
    if (index == 0 || facts.tool_calls[index - 1].name != call.name) return false;
    const auto* before = result_of(facts, index - 1);
    return before != nullptr && refused_for_arguments(before->text, refusals) &&
           !is_retry(facts, index - 1, refusals);
}

/// The well-formed arguments for retrying a delegation that `result` refused: the sub-agent named
/// by the refusal's offered choices (the harness's usual ones first). Nullopt when the refusal
/// offers no other name.
std::optional<json> corrected(const Intent& intent, const adapters::ToolVocabulary& v,
                              const json& args, const PastToolResult& result) {
    if (intent.kind != IntentKind::delegate || v.delegate_agent_field.empty()) return std::nullopt;
    const auto choices = offered_choices(result.text);
    if (choices.empty()) return std::nullopt;
    std::string pick = choices.front();
    for (const auto& agent : v.delegate_agents) {
        if (std::find(choices.begin(), choices.end(), agent) != choices.end()) {
            pick = agent;
            break;
        }
    }
    if (args.value(v.delegate_agent_field, json()) == json(pick)) return std::nullopt;
    json fixed = args;
    fixed[v.delegate_agent_field] = pick;
    return fixed;
}

std::string track_tag(const std::string& track) {
    if (track.empty()) return "main";
    std::uint32_t hash = 2166136261U; // FNV-1a: short, stable, id-safe.
    for (const unsigned char c : track)
        hash = (hash ^ c) * 16777619U;
    return fmt::format("{:08x}", hash);
}

} // namespace

std::string select_track(const Script& script, const ConversationFacts& facts) {
    // A TUI run is typed one line naming its instructions file; the model reads the task there,
    // and so does the scripted one.
    std::string task = facts.user_text;
    if (!script.subagents.empty()) {
        if (const auto file = dispatch::instructions_path_in(facts.user_text); !file.empty()) {
            if (auto text = read_file_bounded(file, 1U << 20U)) task += "\n" + *text;
        }
    }
    for (const auto& entry : script.subagents) {
        const std::string& marker = entry.first;
        if (task.find(marker) == std::string::npos) continue;
        const bool delegated_here = std::any_of(
            facts.tool_calls.begin(), facts.tool_calls.end(), [&](const PastToolCall& c) {
                return c.arguments_json.find(marker) != std::string::npos;
            });
        if (!delegated_here) return marker;
    }
    return "";
}

namespace {

/// The first step at or after `step` that the conversation does not pass over.
int next_taken(const Track& track, const ConversationFacts& facts, int step) {
    while (step < static_cast<int>(track.steps.size()) &&
           passed_over(track.steps[static_cast<std::size_t>(step)], facts))
        ++step;
    return step;
}

/// The last step before `step` that the conversation did not pass over; -1 when none.
int previous_taken(const Track& track, const ConversationFacts& facts, int step) {
    for (--step; step >= 0 && passed_over(track.steps[static_cast<std::size_t>(step)], facts);)
        --step;
    return step;
}

} // namespace

int current_step(const Track& track, const ConversationFacts& facts,
                 const adapters::RefusalTexts& refusals) {
    auto taken = static_cast<int>(facts.tool_calls.size());
    for (std::size_t i = 0; i < facts.tool_calls.size(); ++i) {
        if (is_retry(facts, i, refusals)) --taken;
    }
    for (const auto& text : facts.assistant_texts) {
        const auto said = trimmed(text);
        const bool scripted =
            std::any_of(track.steps.begin(), track.steps.end(), [&](const Intent& i) {
                return i.kind == IntentKind::reply && trimmed(i.text) == said;
            });
        if (scripted) ++taken;
    }
    int step = next_taken(track, facts, 0);
    for (; taken > 0 && step < static_cast<int>(track.steps.size()); --taken)
        step = next_taken(track, facts, step + 1);
    return step + taken; // past the end: as many steps over as calls were left
}

namespace {

/// What a call_unknown step calls: the first offered tool that `vocabulary` cannot classify and
/// the conversation has not called, as a call_tool intent; nothing when none is left.
std::optional<Intent> unknown_call(const adapters::ToolVocabulary& vocabulary,
                                   const ConversationFacts& facts) {
    for (const auto& tool : facts.tools) {
        const bool called =
            std::any_of(facts.tool_calls.begin(), facts.tool_calls.end(),
                        [&](const PastToolCall& call) { return call.name == tool.name; });
        if (called || adapters::classify_tool(vocabulary, tool.name)) continue;
        Intent call;
        call.kind = IntentKind::call_tool;
        call.tool = tool.name;
        return call;
    }
    return std::nullopt;
}

/// The tool call that carries out `intent` at `step` of `track`.
Move tool_move(const std::string& track, const Intent& intent, int step,
               const ScriptContext& context, const ConversationFacts& facts) {
    auto [choice, args, unplaced] = tool_and_args(intent, context, facts);
    if (!intent.args_json.empty()) {
        const auto extra = parse_json(intent.args_json).value_or(nullptr); // Checked when parsed.
        if (extra.is_object()) args.update(extra);
    }
    if (intent.kind == IntentKind::call_tool) {
        for (auto& [key, value] : args.items()) {
            if (value.is_string()) value = from_results(value.get<std::string>(), facts);
        }
    }
    Move move;
    move.kind = MoveKind::tool_call;
    move.track = track;
    move.step = step;
    move.tool = choice.name;
    move.tool_offered = choice.offered != nullptr;
    move.tool_kind = choice.offered ? choice.offered->kind : "function";
    move.unplaced = std::move(unplaced);
    if (intent.kind == IntentKind::write_file) move.target = intent.path;
    if (choice.offered && !choice.offered->schema_json.empty()) {
        const auto schema = parse_json(choice.offered->schema_json);
        if (schema) args = fill_required(std::move(args), *schema);
    }
    move.arguments_json = args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    move.call_id = fmt::format("sonata_{}_{}", track_tag(track), step);
    return move;
}

/// The retry of the step before `step` when the harness refused its call for its arguments and
/// named a valid choice, as a real model would make it: once, with that choice.
std::optional<Move> retry_move(const std::string& track_name, const Track& track,
                               const ScriptContext& context, const ConversationFacts& facts,
                               int step) {
    if (step > static_cast<int>(track.steps.size()) || facts.tool_calls.empty())
        return std::nullopt;
    const int last_step = previous_taken(track, facts, step);
    if (last_step < 0) return std::nullopt;
    const Intent& before = track.steps[static_cast<std::size_t>(last_step)];
    const auto last = facts.tool_calls.size() - 1;
    if (before.kind == IntentKind::reply || is_retry(facts, last, context.refusals))
        return std::nullopt;
    const auto* result = result_of(facts, last);
    if (result == nullptr || !refused_for_arguments(result->text, context.refusals))
        return std::nullopt;
    Move retry = tool_move(track_name, before, last_step, context, facts);
    const auto fixed = corrected(before, context.vocabulary,
                                 parse_json(retry.arguments_json).value_or(nullptr), *result);
    if (!fixed) return std::nullopt;
    retry.arguments_json = fixed->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    retry.call_id += k_retry_suffix;
    return retry;
}

/// `facts` with the vocabulary's tools of deferred namespaces ("multi_agent_v1.spawn_agent")
/// listed as offered, without a schema: a model may call them without a search first.
ConversationFacts with_deferred(const ConversationFacts& facts, const adapters::ToolVocabulary& v) {
    if (facts.deferred_namespaces.empty()) return facts;
    ConversationFacts out = facts;
    for (const auto* names : {&v.write, &v.shell, &v.delegate, &v.mode_switch, &v.mode_enter}) {
        for (const auto& name : *names) {
            const auto dot = name.find('.');
            if (dot == std::string::npos || find_offered(out, name) != nullptr) continue;
            const auto ns = name.substr(0, dot);
            const auto& deferred = facts.deferred_namespaces;
            if (std::find(deferred.begin(), deferred.end(), ns) == deferred.end()) continue;
            out.tools.push_back({name, "function", "", "deferred in namespace " + ns});
        }
    }
    return out;
}

} // namespace

Move resolve_move(const Script& script, const ScriptContext& context,
                  const ConversationFacts& given) {
    const ConversationFacts facts = with_deferred(given, context.vocabulary);
    Move move;
    move.track = select_track(script, facts);
    const Track& track = move.track.empty() ? script.main : script.subagents.at(move.track);
    const int step = current_step(track, facts, context.refusals);
    if (auto retry = retry_move(move.track, track, context, facts, step)) return *retry;
    std::optional<Intent> intent;
    if (step < static_cast<int>(track.steps.size()))
        intent = track.steps[static_cast<std::size_t>(step)];
    if (intent && intent->kind == IntentKind::call_unknown)
        intent = unknown_call(context.vocabulary, facts); // none left: the track is done
    if (!intent) {
        move.kind = MoveKind::final_text;
        move.text = track.final_text;
        return move;
    }
    if (intent->kind != IntentKind::reply)
        return tool_move(move.track, *intent, step, context, facts);
    move.step = step;
    move.kind = MoveKind::text;
    move.text = intent->text;
    return move;
}

bool refused_for_arguments(std::string_view result_text, const adapters::RefusalTexts& refusals) {
    // JSON-schema and zod validators' wording, as harnesses pass it on to the model.
    static const std::vector<std::string> shared{
        "inputvalidationerror", "invalid_type",
        "invalid_enum_value",   "unrecognized_keys",
        "invalid arguments",    "invalid parameters",
        "invalid params",       "must have required property",
        "missing required",     "is a required property",
        "required parameter",   "schema validation"};
    const auto text = ascii_lower(result_text);
    if (contains_any(text, refusals.not_permitted)) return false;
    return contains_any(text, refusals.bad_arguments) || contains_any(text, shared);
}

bool refused_for_permission(std::string_view result_text, const adapters::RefusalTexts& refusals) {
    return contains_any(ascii_lower(result_text), refusals.not_permitted);
}

std::vector<std::string> offered_choices(std::string_view result_text) {
    static const std::vector<std::string> openers{"available", "valid", "one of", "expected",
                                                  "must be"};
    static const std::vector<std::string> filler{
        "agent",   "agents",  "subagent", "subagents", "type",      "types",    "are",
        "is",      "one",     "of",       "the",       "following", "values",   "value",
        "or",      "and",     "be",       "valid",     "available", "expected", "must",
        "options", "choices", "names",    "name",      "include",   "s"};
    const auto text = ascii_lower(result_text);
    std::size_t from = std::string::npos;
    for (const auto& opener : openers) {
        const auto at = text.find(opener);
        if (at != std::string::npos && (from == std::string::npos || at < from)) from = at;
    }
    std::vector<std::string> choices;
    if (from == std::string::npos) return choices;
    // The original spelling, up to the end of that line.
    const auto line_end = result_text.find('\n', from);
    const auto tail = result_text.substr(
        from, line_end == std::string_view::npos ? std::string_view::npos : line_end - from);
    std::string word;
    const auto flush = [&] {
        while (!word.empty() && (word.back() == '.' || word.back() == '-' || word.back() == ':'))
            word.pop_back();
        const auto key = ascii_lower(word);
        const bool name = !word.empty() && std::isalpha(static_cast<unsigned char>(word[0])) != 0;
        if (name && std::find(filler.begin(), filler.end(), key) == filler.end() &&
            std::find(choices.begin(), choices.end(), word) == choices.end()) {
            choices.push_back(word);
        }
        word.clear();
    };
    for (const char c : tail) {
        const bool part = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
                          c == '-' || c == '.' || c == ':';
        if (part) {
            word += c;
        } else {
            flush();
        }
    }
    flush();
    return choices;
}

} // namespace sonata::probes
