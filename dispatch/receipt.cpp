// receipt.json: written and read through the receipt's one field table (receipt_fields.hpp).
#include "dispatch/receipt.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "core/decision.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/session.hpp"
#include "core/text.hpp"
#include "dispatch/receipt_fields.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::dispatch {
namespace {

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

std::string receipt_to_json(const Receipt& r) {
    return record::write_record(r).dump(2, ' ', false, record::json::error_handler_t::replace) +
           "\n";
}

Result<Receipt> parse_receipt(std::string_view text, const std::string& source) {
    auto parsed_json = parse_ordered_json(text, {.max_depth = 8});
    if (!parsed_json && parsed_json.error().fault == JsonFault::too_deep)
        return fail(ExitCode::bad_data, source + ": not a receipt (nested too deep)");
    if (!parsed_json || !parsed_json->is_object())
        return fail(ExitCode::bad_data, source + ": not a receipt (not a JSON object)");
    const record::json& j = *parsed_json;
    try {
        // The schema and the state first: they say whether the rest can be read at all.
        const auto schema = record::read_field<int>(j, "schema");
        if (schema != Receipt::k_schema) {
            return fail(ExitCode::bad_data, source + ": receipt schema " + std::to_string(schema) +
                                                " is not supported (this sonata reads schema 1)");
        }
        auto state = parse_run_state(record::read_field<std::string>(j, "state"));
        if (!state) return fail(ExitCode::bad_data, source + ": " + state.error().message);
        return record::read_record<Receipt>(j, "receipt");
    } catch (const record::BadField& e) {
        return fail(ExitCode::bad_data, source + ": malformed receipt (" + e.what() + ")");
    } catch (const record::json::exception& e) {
        return fail(ExitCode::bad_data,
                    source + ": malformed receipt (" + std::string(e.what()) + ")");
    }
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
