// The receipt's field table: every field of receipt.json, in the order it is written, with the
// member it holds and whether a receipt of schema 1 may lack it (a field added within the schema).
// Adding a receipt field is one member in receipt.hpp and one line here. Included by receipt.cpp
// (and tests) only: it carries nlohmann/json.hpp.
#pragma once

#include <string>

#include "core/json_record.hpp"
#include "dispatch/receipt.hpp"

namespace sonata::record {

/// An enum written as its spelling and read back through its parser; a spelling the parser does
/// not know is a BadField with the parser's message.
template <class E, auto Print, auto Parse> struct SpelledCodec {
    static json write(const E& value) { return json(std::string(Print(value))); }
    static E read(const json& j, const std::string& key) {
        auto value = Parse(Codec<std::string>::read(j, key));
        if (!value) throw BadField(value.error().message);
        return *value;
    }
};

inline std::string_view spell_state(dispatch::RunState s) { return dispatch::to_string(s); }
inline std::string_view spell_role_kind(RoleKind k) { return to_string(k); }
inline std::string_view spell_origin(dispatch::ReportOrigin o) { return dispatch::to_string(o); }
inline std::string spell_completion(const dispatch::Completion& c) {
    return dispatch::to_string(c);
}
inline std::string_view spell_cost_source(CostSource s) { return to_string(s); }

inline Result<dispatch::ReportOrigin> parse_report_origin(std::string_view text) {
    return parse_name(dispatch::k_report_origins, text, "report source", ExitCode::bad_data);
}
inline Result<CostSource> parse_cost_source(std::string_view text) {
    if (auto known = value_of(k_cost_sources, text)) return *known;
    return fail(ExitCode::bad_data, "unknown cost source '" + std::string(text) + "'");
}

template <>
struct Codec<dispatch::RunState>
    : SpelledCodec<dispatch::RunState, spell_state, dispatch::parse_run_state> {};
template <> struct Codec<RoleKind> : SpelledCodec<RoleKind, spell_role_kind, parse_role_kind> {};
template <>
struct Codec<dispatch::ReportOrigin>
    : SpelledCodec<dispatch::ReportOrigin, spell_origin, parse_report_origin> {};
template <>
struct Codec<dispatch::Completion>
    : SpelledCodec<dispatch::Completion, spell_completion, dispatch::parse_completion> {};
template <>
struct Codec<CostSource> : SpelledCodec<CostSource, spell_cost_source, parse_cost_source> {};

template <> struct Fields<dispatch::ReliedProbe> {
    using R = dispatch::ReliedProbe;
    static constexpr auto list = std::make_tuple(
        field("probe", &R::probe), field("verdict", &R::verdict), field("key", &R::key));
};

template <> struct Fields<dispatch::Approval> {
    using R = dispatch::Approval;
    static constexpr auto list =
        std::make_tuple(field("card", &R::card), field("answer", &R::answer), field("at", &R::at),
                        field("by", &R::by, Presence::added));
};

template <> struct Fields<dispatch::Attempt> {
    using R = dispatch::Attempt;
    static constexpr auto list =
        std::make_tuple(field("harness", &R::harness), field("why", &R::why),
                        field("run", &R::run, Presence::added));
};

template <> struct Fields<dispatch::Retry> {
    using R = dispatch::Retry;
    static constexpr auto list = std::make_tuple(
        field("why", &R::why), field("exit_code", &R::exit_code), field("at", &R::at));
};

template <> struct Fields<dispatch::WorktreeRecord> {
    using R = dispatch::WorktreeRecord;
    static constexpr auto list = std::make_tuple(
        field("path", &R::path), field("branch", &R::branch), field("repo", &R::repo),
        field("base_head", &R::base_head), field("base_snapshot", &R::base_snapshot),
        field("base_dirty", &R::base_dirty), field("head", &R::head));
};

template <> struct Fields<RunCost> {
    static constexpr auto list =
        std::make_tuple(field("value", &RunCost::usd), field("source", &RunCost::source),
                        field("input_tokens", &RunCost::input_tokens),
                        field("output_tokens", &RunCost::output_tokens));
};

/// A cost reads as a record whose value is known only where its source is.
template <> struct Codec<RunCost> {
    static json write(const RunCost& cost) { return write_record(cost); }
    static RunCost read(const json& j, const std::string& key) {
        RunCost cost = read_record<RunCost>(j, key);
        if (cost.source == CostSource::unknown && cost.usd)
            throw BadField("a cost of unknown source has a value");
        return cost;
    }
};

template <> struct Fields<dispatch::Receipt> {
    using R = dispatch::Receipt;
    static constexpr auto list = std::make_tuple(
        // What was decided and started.
        field("schema", &R::schema), field("id", &R::id), field("state", &R::state),
        field("harness", &R::harness), field("version", &R::version), field("mode", &R::mode),
        field("role", &R::role), field("role_kind", &R::role_kind),
        field("parent_mode", &R::parent_mode), field("parent_mode_source", &R::parent_mode_source),
        field("session_id", &R::session_id), field("argv", &R::argv), field("env_set", &R::env_set),
        field("env_unset", &R::env_unset), field("cwd", &R::cwd),
        field("prompt_channel", &R::prompt_channel), field("interactive", &R::interactive),
        field("relied_on", &R::relied_on), field("warnings", &R::warnings),
        // How it went.
        field("started_at", &R::started_at), field("ended_at", &R::ended_at),
        field("exit_code", &R::exit_code), field("term_signal", &R::term_signal),
        field("timed_out", &R::timed_out), field("prompt", &R::prompt),
        field("approvals", &R::approvals, Presence::added),
        field("report_source", &R::report_source), field("degraded", &R::degraded),
        field("degraded_reason", &R::degraded_reason), field("log_capped", &R::log_capped),
        field("harness_session", &R::harness_session),
        field("resumed_from", &R::resumed_from, Presence::added),
        field("attempts", &R::attempts, Presence::added),
        field("max_budget_usd", &R::max_budget_usd, Presence::added),
        field("budget_enforced", &R::budget_enforced, Presence::added),
        field("cost", &R::cost, Presence::added), field("retries", &R::retries, Presence::added),
        field("completion", &R::completion, Presence::added),
        field("queue_slot", &R::queue_slot, Presence::added),
        field("files_changed", &R::files_changed), field("worktree", &R::worktree, Presence::added),
        field("note", &R::note), field("supervisor_pid", &R::supervisor_pid),
        field("supervisor_start", &R::supervisor_start), field("harness_pgid", &R::harness_pgid),
        field("tmux_server_pid", &R::tmux_server_pid, Presence::added),
        field("tmux_server_start", &R::tmux_server_start, Presence::added),
        field("tmux_socket", &R::tmux_socket, Presence::added));
};

} // namespace sonata::record
