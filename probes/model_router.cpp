// Routing and answering for the scripted model server: model requests go to the protocol that
// serves their path; conversations with tools follow the script; requests without tools (titles,
// summaries, routers, classifiers) get a well-formed answer that moves nothing forward.
#include "probes/model_router.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "core/json_parse.hpp"
#include "core/text.hpp"
#include "probes/schema_sample.hpp"

namespace sonata::probes::wire {
namespace {

using nlohmann::json;

constexpr std::string_view k_side_text = "sonata probe";
constexpr std::string_view k_classifier_text = "<block>no"; // "do not block": the harness decides.
constexpr std::string_view k_classifier_stop = "</block>";

std::uint64_t estimate_tokens(std::size_t bytes) { return std::max<std::uint64_t>(1, bytes / 4); }

HttpReply json_reply(unsigned status, const json& body) {
    HttpReply reply;
    reply.status = status;
    reply.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return reply;
}

HttpReply not_found(std::string_view method, std::string_view target) {
    return json_reply(
        404,
        {{"type", "error"},
         {"error",
          {{"type", "not_found_error"},
           {"code", 404},
           {"message", fmt::format("sonata model-server: no route for {} {}", method, target)}}}});
}

json model_list(const std::string& model) {
    json entry = {{"id", model},         {"object", "model"},
                  {"type", "model"},     {"display_name", model},
                  {"created", 0},        {"created_at", "1970-01-01T00:00:00Z"},
                  {"owned_by", "sonata"}};
    return {{"object", "list"},
            {"data", json::array({entry})},
            {"has_more", false},
            {"first_id", model},
            {"last_id", model}};
}

json gemini_model_list(const std::string& model) {
    return {{"models", json::array({{{"name", "models/" + model},
                                     {"displayName", model},
                                     {"supportedGenerationMethods",
                                      {"generateContent", "streamGenerateContent", "countTokens"}},
                                     {"inputTokenLimit", 1048576},
                                     {"outputTokenLimit", 65536}}})}};
}

const char* kind_name(RequestKind kind) {
    switch (kind) {
    case RequestKind::turn: return "turn";
    case RequestKind::side: return "side";
    case RequestKind::classifier: return "classifier";
    case RequestKind::structured: return "structured";
    }
    return "side";
}

Move text_move(std::string text) {
    Move move;
    move.kind = MoveKind::text;
    move.text = std::move(text);
    return move;
}

} // namespace

Router::Router(Script script, ScriptContext context, std::string model)
    : m_script(std::move(script)), m_context(std::move(context)), m_model(std::move(model)) {
    m_protocols.push_back(make_anthropic_protocol());
    m_protocols.push_back(make_openai_responses_protocol());
    m_protocols.push_back(make_openai_chat_protocol());
    m_protocols.push_back(make_gemini_protocol());
}

Outcome Router::handle(std::string_view method, std::string_view target, std::string_view body) {
    const auto started = std::chrono::steady_clock::now();
    const auto path = target.substr(0, target.find('?'));
    RequestRecord record;
    record.method = std::string(method);
    record.target = std::string(target);
    {
        std::lock_guard lock(m_mutex);
        record.index = ++m_arrivals;
    }
    Outcome outcome;
    if (method == "HEAD") {
        record.kind = "probe";
        outcome.reply.status = path == "/" ? 200 : 404;
    } else if (method == "GET") {
        outcome = handle_get(path, record);
    } else if (method == "POST" &&
               (path == "/v1/messages/count_tokens" || path.ends_with(":countTokens"))) {
        record.kind = "count-tokens";
        const auto tokens = estimate_tokens(body.size());
        outcome.reply =
            json_reply(200, path == "/v1/messages/count_tokens" ? json{{"input_tokens", tokens}}
                                                                : json{{"totalTokens", tokens}});
    } else {
        const auto protocol = std::find_if(m_protocols.begin(), m_protocols.end(),
                                           [&](const auto& p) { return p->serves(path); });
        if (method == "POST" && protocol != m_protocols.end()) {
            outcome = handle_model(**protocol, path, body, record);
        } else {
            record.kind = "not-found";
            outcome.reply = not_found(method, target);
        }
    }
    record.status = outcome.reply.status;
    record.handling_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    keep(std::move(record));
    return outcome;
}

Outcome Router::handle_get(std::string_view path, RequestRecord& record) const {
    Outcome outcome;
    record.kind = "models";
    if (path == "/v1/models" || path == "/models") {
        outcome.reply = json_reply(200, model_list(m_model));
    } else if (path == "/v1beta/models") {
        outcome.reply = json_reply(200, gemini_model_list(m_model));
    } else if (path.substr(0, 11) == "/v1/models/" && path.size() > 11) {
        outcome.reply = json_reply(200, model_list(std::string(path.substr(11)))["data"][0]);
    } else if (path == "/") {
        record.kind = "probe";
        outcome.reply = json_reply(200, {{"server", "sonata model-server"}});
    } else {
        record.kind = "not-found";
        outcome.reply = not_found("GET", path);
    }
    return outcome;
}

Outcome Router::handle_model(const Protocol& protocol, std::string_view path, std::string_view body,
                             RequestRecord& record) {
    record.protocol = std::string(adapters::to_string(protocol.id()));
    for (const auto& text : m_script.watch) {
        if (body.find(text) != std::string_view::npos) record.watched.push_back(text);
    }
    Outcome outcome;
    const auto fault = take_fault();
    if (fault && fault->kind == FaultKind::http_status) {
        record.fault = "http-status";
        record.kind = "fault";
        outcome.reply = protocol.error(fault->status, "sonata model-server: injected fault");
        return outcome;
    }
    auto body_json = parse_json(body);
    if (!body_json && body_json.error().fault == JsonFault::too_deep) {
        record.kind = "bad-request";
        outcome.reply = protocol.error(
            400, fmt::format("sonata model-server: request JSON nests deeper than {} levels",
                             k_max_json_depth));
        return outcome;
    }
    if (!body_json) {
        record.kind = "bad-request";
        outcome.reply = protocol.error(400, "sonata model-server: unreadable request: " +
                                                body_json.error().message);
        return outcome;
    }
    ParsedRequest parsed;
    try {
        parsed = protocol.parse(*body_json, path);
    } catch (const json::exception& e) {
        record.kind = "bad-request";
        outcome.reply = protocol.error(
            400, std::string("sonata model-server: unreadable request: ") + e.what());
        return outcome;
    }
    try {
        outcome = answer_and_render(protocol, parsed, body.size(), record);
    } catch (const std::exception& e) {
        outcome.reply =
            protocol.error(500, std::string("sonata model-server: internal error: ") + e.what());
        return outcome;
    }
    if (fault && fault->kind == FaultKind::truncated_stream) {
        record.fault = "truncated-stream";
        outcome.truncate = true;
    }
    return outcome;
}

Outcome Router::answer_and_render(const Protocol& protocol, const ParsedRequest& parsed,
                                  std::size_t body_size, RequestRecord& record) const {
    record.kind = kind_name(parsed.kind);
    record.model = parsed.model;
    record.stream = parsed.stream;
    for (const auto& tool : parsed.facts.tools)
        record.tools_offered.push_back(tool.name);
    const Answer reply = answer(parsed, record);
    for (auto& call : record.tool_calls)
        call.call_id = std::string(protocol.call_prefix()) + call.call_id;

    RenderInfo info;
    info.model = parsed.model.empty() ? m_model : parsed.model;
    info.id = fmt::format("sonata-{}", record.index);
    info.input_tokens = m_script.input_tokens ? m_script.input_tokens : estimate_tokens(body_size);
    info.output_tokens = estimate_tokens(reply.move.text.size() + reply.move.arguments_json.size());
    info.created = static_cast<std::int64_t>(std::time(nullptr));
    info.stream_usage = parsed.stream_usage;
    Outcome outcome;
    outcome.reply = protocol.render(reply, info, parsed.stream);
    return outcome;
}

void Router::await_subagents(const Move& move, const ConversationFacts& facts) const {
    std::unique_lock lock(m_mutex);
    if (!move.track.empty()) {
        m_tracks_started.insert(move.track);
        if (move.kind == MoveKind::final_text) m_tracks_finished.insert(move.track);
        m_track_changed.notify_all();
        return;
    }
    if (move.kind != MoveKind::final_text) return;
    // Sub-agents this conversation handed work to, and the harness did not refuse: a harness
    // that runs them in the background (codex) answers the delegation before they start.
    std::set<std::string> delegated;
    for (std::size_t i = 0; i < facts.tool_calls.size(); ++i) {
        const auto& call = facts.tool_calls[i];
        const auto* result = result_of(facts, i);
        const bool refused =
            result != nullptr && (result->is_error || refused_for_arguments(result->text, {}) ||
                                  refused_for_permission(result->text, m_context.refusals));
        for (const auto& [marker, track] : m_script.subagents) {
            if (!refused && call.arguments_json.find(marker) != std::string::npos)
                delegated.insert(marker);
        }
    }
    const auto started = [&] {
        return m_released || std::all_of(delegated.begin(), delegated.end(), [&](const auto& m) {
                   return m_tracks_started.count(m) > 0;
               });
    };
    const auto finished = [&] {
        return m_released || std::includes(m_tracks_finished.begin(), m_tracks_finished.end(),
                                           m_tracks_started.begin(), m_tracks_started.end());
    };
    m_track_changed.wait_for(lock, k_subagent_start, started);
    m_track_changed.wait_for(lock, k_subagent_wait, finished);
}

void Router::release() {
    std::lock_guard lock(m_mutex);
    m_released = true;
    m_track_changed.notify_all();
}

Answer Router::answer(const ParsedRequest& parsed, RequestRecord& record) const {
    record.track = select_track(m_script, parsed.facts);
    for (auto result : parsed.results) {
        result.track = record.track;
        record.tool_results.push_back(std::move(result));
    }
    // The conversation with the tool results it holds, for the move and the sub-agent wait.
    ConversationFacts facts = parsed.facts;
    for (const auto& result : parsed.results)
        facts.tool_results.push_back(
            {result.call_id, result.text, result.is_error.value_or(false)});
    Answer out;
    switch (parsed.kind) {
    case RequestKind::turn: out.move = resolve_move(m_script, m_context, facts); break;
    case RequestKind::side: out.move = text_move(std::string(k_side_text)); break;
    case RequestKind::classifier:
        out.move = text_move(std::string(k_classifier_text));
        out.stop_sequence = std::string(k_classifier_stop);
        break;
    case RequestKind::structured:
        out.move = text_move(schema_sample(parsed.schema, SampleFields::all)
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        break;
    }
    if (parsed.kind == RequestKind::turn) await_subagents(out.move, facts);
    record.step = out.move.step;
    if (out.move.kind == MoveKind::tool_call) {
        record.tool_calls.push_back({out.move.call_id, out.move.tool, out.move.arguments_json,
                                     out.move.tool_offered, out.move.unplaced, out.move.target});
    } else {
        record.text = out.move.text;
    }
    return out;
}

std::optional<Fault> Router::take_fault() {
    std::lock_guard lock(m_mutex);
    const auto n = ++m_model_requests;
    const auto it = std::find_if(m_faults.begin(), m_faults.end(),
                                 [&](const Fault& f) { return f.request == n; });
    if (it == m_faults.end()) return std::nullopt;
    return *it;
}

void Router::keep(RequestRecord record) {
    std::lock_guard lock(m_mutex);
    for (const auto& result : record.tool_results) {
        const auto id = result.call_id.empty() ? result.tool + "\n" + result.text : result.call_id;
        if (m_result_keys.insert({result.track, id}).second) m_results.push_back(result);
    }
    const auto at =
        std::upper_bound(m_records.begin(), m_records.end(), record.index,
                         [](std::size_t index, const RequestRecord& r) { return index < r.index; });
    m_records.insert(at, std::move(record));
}

void Router::inject_fault(const Fault& fault) {
    std::lock_guard lock(m_mutex);
    m_faults.push_back(fault);
}

std::vector<RequestRecord> Router::recording() const {
    std::lock_guard lock(m_mutex);
    return m_records;
}

std::vector<ToolResultRecord> Router::tool_results() const {
    std::lock_guard lock(m_mutex);
    return m_results;
}

} // namespace sonata::probes::wire
