// receipt.json: writing with a stable field order, reading with full validation.
#include "dispatch/receipt.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/decision.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/session.hpp"
#include "core/text.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::dispatch {
namespace {

using nlohmann::ordered_json;

constexpr std::size_t k_max_receipt_bytes = 4U << 20U;

constexpr EnumNames<RunState, 10> k_states{{
    {"starting", RunState::starting},
    {"queued", RunState::queued},
    {"running", RunState::running},
    {"paused", RunState::paused},
    {"stalled", RunState::stalled},
    {"done", RunState::done},
    {"failed", RunState::failed},
    {"timed-out", RunState::timed_out},
    {"cancelled", RunState::cancelled},
    {"lost", RunState::lost},
}};

/// A field that is missing or not of the type (and range) sonata writes there: thrown by the
/// readers below, caught in parse_receipt.
struct BadField : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// True when `v` holds a T as sonata writes it: no conversion, no narrowing.
template <class T> bool holds(const ordered_json& v) {
    if constexpr (std::is_same_v<T, bool>) {
        return v.is_boolean();
    } else if constexpr (std::is_integral_v<T>) {
        if (v.is_number_unsigned()) return std::in_range<T>(v.get<std::uint64_t>());
        return v.is_number_integer() && std::in_range<T>(v.get<std::int64_t>());
    } else if constexpr (std::is_floating_point_v<T>) {
        return v.is_number();
    } else if constexpr (std::is_same_v<T, std::string>) {
        return v.is_string();
    } else {
        static_assert(std::is_same_v<T, std::vector<std::string>>,
                      "a receipt field of a new type: say in holds() what it must hold");
        return v.is_array() &&
               std::all_of(v.begin(), v.end(), [](const ordered_json& e) { return e.is_string(); });
    }
}

template <class T> std::string expected_type() {
    if constexpr (std::is_same_v<T, bool>) return "is not true or false";
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        return "is not an integer in its range";
    if constexpr (std::is_floating_point_v<T>) return "is not a number";
    if constexpr (std::is_same_v<T, std::string>) return "is not a string";
    return "is not an array of strings";
}

/// j[key], present and of type T.
template <class T> T field(const ordered_json& j, const char* key) {
    const auto found = j.find(key);
    if (found == j.end()) throw BadField("'" + std::string(key) + "' is missing");
    if (!holds<T>(*found)) throw BadField("'" + std::string(key) + "' " + expected_type<T>());
    return found->get<T>();
}

/// j[key] where sonata writes null for "none".
template <class T> std::optional<T> nullable(const ordered_json& j, const char* key) {
    const auto found = j.find(key);
    if (found != j.end() && found->is_null()) return std::nullopt;
    return field<T>(j, key);
}

/// Reads one field strictly: present and of the type of `out`.
template <class T> void take(const ordered_json& j, const char* key, T& out) {
    out = field<T>(j, key);
}

/// Reads a field added within schema 1 (absent from the first receipts): absent keeps `out`.
template <class T> void take_added(const ordered_json& j, const char* key, T& out) {
    if (j.contains(key)) take(j, key, out);
}

/// j[key], a string, as `parse` reads it; what it does not read is a bad field.
template <class Parse> auto named(const ordered_json& j, const char* key, Parse parse) {
    auto value = parse(field<std::string>(j, key));
    if (!value) throw BadField(value.error().message);
    return *value;
}

/// j[key] as an array of objects (each then read with field()); absent is none when `added`.
std::vector<ordered_json> objects(const ordered_json& j, const char* key, bool added = false) {
    const auto found = j.find(key);
    if (found == j.end() && added) return {};
    if (found == j.end()) throw BadField("'" + std::string(key) + "' is missing");
    if (!found->is_array() || !std::all_of(found->begin(), found->end(),
                                           [](const ordered_json& e) { return e.is_object(); }))
        throw BadField("'" + std::string(key) + "' is not an array of objects");
    return {found->begin(), found->end()};
}

/// The receipt's cost object; a source it does not know is an error, like any bad field.
RunCost parse_cost(const ordered_json& j) {
    if (!j.is_object()) throw BadField("'cost' is not an object");
    RunCost cost;
    const auto source = field<std::string>(j, "source");
    const auto known = value_of(k_cost_sources, source);
    if (!known) throw BadField("unknown cost source '" + source + "'");
    cost.source = *known;
    cost.usd = nullable<double>(j, "value");
    cost.input_tokens = nullable<long long>(j, "input_tokens");
    cost.output_tokens = nullable<long long>(j, "output_tokens");
    if (cost.source == CostSource::unknown && cost.usd)
        throw BadField("a cost of unknown source has a value");
    return cost;
}

} // namespace

std::string_view to_string(ReportOrigin origin) {
    return name_of(k_report_origins, origin, "none");
}

std::string to_string(const Completion& completion) {
    switch (completion.check) {
    case CompletionCheck::none: return "";
    case CompletionCheck::verified: return "verified";
    case CompletionCheck::failed: return "failed: " + completion.why;
    }
    return "";
}

Result<Completion> parse_completion(std::string_view text) {
    constexpr std::string_view k_failed = "failed: ";
    if (text.empty()) return Completion{};
    if (text == "verified") return Completion{CompletionCheck::verified};
    if (text.substr(0, k_failed.size()) == k_failed)
        return Completion{CompletionCheck::failed, std::string(text.substr(k_failed.size()))};
    return fail(ExitCode::bad_data, "unknown completion '" + std::string(text) +
                                        "' (\"\", \"verified\" or \"failed: <why>\")");
}

std::string_view to_string(RunState state) { return name_of(k_states, state, "lost"); }

Result<RunState> parse_run_state(std::string_view text) {
    return parse_name(k_states, text, "run state", ExitCode::bad_data);
}

bool is_final(RunState state) {
    return state == RunState::done || state == RunState::failed || state == RunState::timed_out ||
           state == RunState::cancelled || state == RunState::lost;
}

Receipt receipt_for(const Decision& d) {
    Receipt r;
    r.harness = d.harness;
    r.version = d.version;
    r.mode = std::string(to_string(d.effective_mode));
    r.role = d.role.name;
    r.role_kind = d.role.kind;
    r.parent_mode = std::string(to_string(d.parent_mode));
    r.warnings = d.warnings;
    return r;
}

namespace {

/// What was decided and started: the fields up to `warnings`.
void what_ran_to_json(const Receipt& r, ordered_json& j) {
    ordered_json relied = ordered_json::array();
    for (const auto& p : r.relied_on)
        relied.push_back({{"probe", p.probe}, {"verdict", p.verdict}, {"key", p.key}});
    j["schema"] = r.schema;
    j["id"] = r.id;
    j["state"] = to_string(r.state);
    j["harness"] = r.harness;
    j["version"] = r.version;
    j["mode"] = r.mode;
    j["role"] = r.role;
    j["role_kind"] = to_string(r.role_kind);
    j["parent_mode"] = r.parent_mode;
    j["parent_mode_source"] = r.parent_mode_source;
    j["session_id"] = r.session_id;
    j["argv"] = r.argv;
    j["env_set"] = r.env_set;
    j["env_unset"] = r.env_unset;
    j["cwd"] = r.cwd;
    j["prompt_channel"] = r.prompt_channel;
    j["interactive"] = r.interactive;
    j["relied_on"] = relied;
    j["warnings"] = r.warnings;
}

/// How it went: the fields from `started_at` on.
void how_it_went_to_json(const Receipt& r, ordered_json& j) {
    j["started_at"] = r.started_at;
    j["ended_at"] = r.ended_at;
    j["exit_code"] = r.exit_code ? ordered_json(*r.exit_code) : ordered_json(nullptr);
    j["term_signal"] = r.term_signal;
    j["timed_out"] = r.timed_out;
    j["prompt"] = r.prompt;
    ordered_json approvals = ordered_json::array();
    for (const auto& a : r.approvals)
        approvals.push_back({{"card", a.card}, {"answer", a.answer}, {"at", a.at}, {"by", a.by}});
    j["approvals"] = approvals;
    j["report_source"] = to_string(r.report_source);
    j["degraded"] = r.degraded;
    j["degraded_reason"] = r.degraded_reason;
    j["log_capped"] = r.log_capped;
    j["harness_session"] = r.harness_session;
    j["resumed_from"] = r.resumed_from;
    ordered_json attempts = ordered_json::array();
    for (const auto& a : r.attempts)
        attempts.push_back({{"harness", a.harness}, {"why", a.why}, {"run", a.run}});
    j["attempts"] = attempts;
    j["max_budget_usd"] =
        r.max_budget_usd ? ordered_json(*r.max_budget_usd) : ordered_json(nullptr);
    j["budget_enforced"] = r.budget_enforced;
    const auto number = [](const auto& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
    j["cost"] = {{"value", number(r.cost.usd)},
                 {"source", to_string(r.cost.source)},
                 {"input_tokens", number(r.cost.input_tokens)},
                 {"output_tokens", number(r.cost.output_tokens)}};
    ordered_json retries = ordered_json::array();
    for (const auto& t : r.retries)
        retries.push_back({{"why", t.why}, {"exit_code", number(t.exit_code)}, {"at", t.at}});
    j["retries"] = retries;
    j["completion"] = to_string(r.completion);
    j["queue_slot"] = r.queue_slot;
    j["files_changed"] = r.files_changed;
    if (r.worktree) {
        const auto& w = *r.worktree;
        j["worktree"] = {{"path", w.path},
                         {"branch", w.branch},
                         {"repo", w.repo},
                         {"base_head", w.base_head},
                         {"base_snapshot", w.base_snapshot},
                         {"base_dirty", w.base_dirty},
                         {"head", w.head}};
    } else {
        j["worktree"] = nullptr;
    }
    j["note"] = r.note;
    j["supervisor_pid"] = r.supervisor_pid;
    j["supervisor_start"] = r.supervisor_start;
    j["harness_pgid"] = r.harness_pgid;
    j["tmux_server_pid"] = r.tmux_server_pid;
    j["tmux_server_start"] = r.tmux_server_start;
    j["tmux_socket"] = r.tmux_socket;
}

} // namespace

std::string receipt_to_json(const Receipt& r) {
    ordered_json j;
    what_ran_to_json(r, j);
    how_it_went_to_json(r, j);
    return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

namespace {

/// What was decided and started: the fields from `id` to `warnings`.
void read_what_ran(const ordered_json& j, Receipt& r) {
    take(j, "id", r.id);
    take(j, "harness", r.harness);
    take(j, "version", r.version);
    take(j, "mode", r.mode);
    take(j, "role", r.role);
    r.role_kind = named(j, "role_kind", parse_role_kind);
    take(j, "parent_mode", r.parent_mode);
    take(j, "parent_mode_source", r.parent_mode_source);
    take(j, "session_id", r.session_id);
    take(j, "argv", r.argv);
    take(j, "env_set", r.env_set);
    take(j, "env_unset", r.env_unset);
    take(j, "cwd", r.cwd);
    take(j, "prompt_channel", r.prompt_channel);
    take(j, "interactive", r.interactive);
    for (const auto& p : objects(j, "relied_on")) {
        r.relied_on.push_back({field<std::string>(p, "probe"), field<std::string>(p, "verdict"),
                               field<std::string>(p, "key")});
    }
    take(j, "warnings", r.warnings);
}

/// How it went: the fields from `started_at` to `harness_pgid`.
void read_how_it_went(const ordered_json& j, Receipt& r) {
    take(j, "started_at", r.started_at);
    take(j, "ended_at", r.ended_at);
    r.exit_code = nullable<int>(j, "exit_code");
    take(j, "term_signal", r.term_signal);
    take(j, "timed_out", r.timed_out);
    take(j, "prompt", r.prompt);
    for (const auto& a : objects(j, "approvals", true)) {
        Approval approval{field<std::string>(a, "card"), field<std::string>(a, "answer"),
                          field<std::string>(a, "at")};
        take_added(a, "by", approval.by);
        r.approvals.push_back(std::move(approval));
    }
    r.report_source = named(j, "report_source", [](std::string_view spelled) {
        return parse_name(k_report_origins, spelled, "report source", ExitCode::bad_data);
    });
    take(j, "degraded", r.degraded);
    take(j, "degraded_reason", r.degraded_reason);
    take(j, "log_capped", r.log_capped);
    take(j, "harness_session", r.harness_session);
    take(j, "files_changed", r.files_changed);
    take(j, "note", r.note);
    take(j, "supervisor_pid", r.supervisor_pid);
    take(j, "supervisor_start", r.supervisor_start);
    take(j, "harness_pgid", r.harness_pgid);
}

/// The fields added within schema 1: absent from the first receipts.
void read_added(const ordered_json& j, Receipt& r) {
    take_added(j, "tmux_server_pid", r.tmux_server_pid);
    take_added(j, "tmux_server_start", r.tmux_server_start);
    take_added(j, "tmux_socket", r.tmux_socket);
    take_added(j, "resumed_from", r.resumed_from);
    for (const auto& a : objects(j, "attempts", true)) {
        Attempt attempt{field<std::string>(a, "harness"), field<std::string>(a, "why")};
        take_added(a, "run", attempt.run);
        r.attempts.push_back(std::move(attempt));
    }
    if (j.contains("max_budget_usd")) r.max_budget_usd = nullable<double>(j, "max_budget_usd");
    take_added(j, "budget_enforced", r.budget_enforced);
    if (j.contains("cost")) r.cost = parse_cost(j.at("cost"));
    for (const auto& t : objects(j, "retries", true)) {
        r.retries.push_back({field<std::string>(t, "why"), nullable<int>(t, "exit_code"),
                             field<std::string>(t, "at")});
    }
    if (j.contains("completion")) r.completion = named(j, "completion", parse_completion);
    take_added(j, "queue_slot", r.queue_slot);
    if (j.contains("worktree") && !j.at("worktree").is_null()) {
        const ordered_json& w = j.at("worktree");
        r.worktree = WorktreeRecord{
            field<std::string>(w, "path"),          field<std::string>(w, "branch"),
            field<std::string>(w, "repo"),          field<std::string>(w, "base_head"),
            field<std::string>(w, "base_snapshot"), field<bool>(w, "base_dirty"),
            field<std::string>(w, "head")};
    }
}

} // namespace

Result<Receipt> parse_receipt(std::string_view text, const std::string& source) {
    auto parsed_json = parse_ordered_json(text, {.max_depth = 8});
    if (!parsed_json && parsed_json.error().fault == JsonFault::too_deep)
        return fail(ExitCode::bad_data, source + ": not a receipt (nested too deep)");
    if (!parsed_json || !parsed_json->is_object())
        return fail(ExitCode::bad_data, source + ": not a receipt (not a JSON object)");
    const ordered_json& j = *parsed_json;
    Receipt r;
    try {
        take(j, "schema", r.schema);
        if (r.schema != Receipt::k_schema) {
            return fail(ExitCode::bad_data, source + ": receipt schema " +
                                                std::to_string(r.schema) +
                                                " is not supported (this sonata reads schema 1)");
        }
        std::string state;
        take(j, "state", state);
        auto parsed = parse_run_state(state);
        if (!parsed) return fail(ExitCode::bad_data, source + ": " + parsed.error().message);
        r.state = *parsed;
        read_what_ran(j, r);
        read_how_it_went(j, r);
        read_added(j, r);
    } catch (const BadField& e) {
        return fail(ExitCode::bad_data, source + ": malformed receipt (" + e.what() + ")");
    } catch (const ordered_json::exception& e) {
        return fail(ExitCode::bad_data,
                    source + ": malformed receipt (" + std::string(e.what()) + ")");
    }
    return r;
}

std::string utc_now() {
    return format_utc(std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count());
}

Result<Receipt> load_receipt(const RunDirectory& dir) {
    auto text = dir.read("receipt.json", k_max_receipt_bytes);
    SONATA_TRY(text);
    auto receipt = parse_receipt(*text, dir.path() + "/receipt.json");
    if (receipt && receipt->id != dir.name()) {
        return fail(ExitCode::bad_data, dir.path() + "/receipt.json: names run '" +
                                            receipt->id.substr(0, 64) +
                                            "', not the run of its directory");
    }
    return receipt;
}

Result<Receipt> load_receipt(const std::string& run_dir) {
    auto dir = RunDirectory::open(run_dir);
    SONATA_TRY(dir);
    return load_receipt(*dir);
}

Result<void> save_receipt(const RunDirectory& dir, const Receipt& receipt) {
    // Rewritten at every change of state; only the last one is synced.
    return dir.write("receipt.json", receipt_to_json(receipt),
                     is_final(receipt.state) ? Durability::synced : Durability::unsynced);
}

Result<void> save_receipt(const std::string& run_dir, const Receipt& receipt) {
    auto dir = RunDirectory::open(run_dir);
    SONATA_TRY(dir);
    return save_receipt(*dir, receipt);
}

} // namespace sonata::dispatch
