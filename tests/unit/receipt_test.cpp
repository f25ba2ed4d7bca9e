// receipt.json's closed sets (role kind, report source, completion) as enums with the spellings
// receipts on disk already carry: every spelling reads back as what was written, and a spelling
// sonata never writes is bad_data naming the field.
#include <string>

#include <gtest/gtest.h>

#include "dispatch/receipt.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::dispatch {
namespace {

/// A receipt's JSON with `key`'s string value replaced by `value`.
std::string with(const Receipt& r, const std::string& key, const std::string& value) {
    std::string json = receipt_to_json(r);
    const std::string field = "\"" + key + "\": \"";
    const auto at = json.find(field) + field.size();
    return json.replace(at, json.find('"', at) - at, value);
}

TEST(Receipt, EverySpellingOnDiskReadsBackAsItWasWritten) {
    Receipt r;
    r.id = "r1";
    for (const auto& [spelling, origin] : k_report_origins) {
        const auto read = parse_receipt(with(r, "report_source", std::string(spelling)), "r");
        ASSERT_TRUE(read) << read.error().message;
        EXPECT_EQ(read->report_source, origin) << spelling;
        EXPECT_EQ(to_string(origin), spelling);
    }
    for (const std::string kind : {"read-only", "write"}) {
        const auto read = parse_receipt(with(r, "role_kind", kind), "r");
        ASSERT_TRUE(read) << read.error().message;
        EXPECT_EQ(to_string(read->role_kind), kind);
    }
    for (const std::string completion : {"", "verified", "failed: the session was interrupted"}) {
        const auto read = parse_receipt(with(r, "completion", completion), "r");
        ASSERT_TRUE(read) << read.error().message;
        EXPECT_EQ(to_string(read->completion), completion);
    }
    const auto failed = parse_receipt(with(r, "completion", "failed: no end"), "r");
    EXPECT_EQ(failed->completion, (Completion{CompletionCheck::failed, "no end"}));
}

TEST(Receipt, ASpellingSonataNeverWritesIsBadData) {
    Receipt r;
    r.id = "r1";
    const auto role = parse_receipt(with(r, "role_kind", "writer"), "receipt.json");
    ASSERT_FALSE(role);
    EXPECT_EQ(role.error().code, ExitCode::bad_data);
    EXPECT_EQ(role.error().message,
              "receipt.json: malformed receipt (unknown role kind 'writer' (did you mean "
              "'write'?); a role is 'read-only' or 'write')");
    const auto report = parse_receipt(with(r, "report_source", "report"), "receipt.json");
    ASSERT_FALSE(report);
    EXPECT_EQ(report.error().code, ExitCode::bad_data);
    const auto completion = parse_receipt(with(r, "completion", "done"), "receipt.json");
    ASSERT_FALSE(completion);
    EXPECT_EQ(completion.error().message,
              "receipt.json: malformed receipt (unknown completion 'done' (\"\", \"verified\" or "
              "\"failed: <why>\"))");
}

TEST(Receipt, TheFirstReceiptsWrittenStillRead) {
    const auto read =
        parse_receipt(testing::read_text(std::string(SONATA_SOURCE_DIR) +
                                         "/tests/fuzz/corpus/receipt/first-schema-1.json"),
                      "first-schema-1.json");
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(read->role_kind, RoleKind::write);
    EXPECT_EQ(read->report_source, ReportOrigin::final_message);
}

} // namespace
} // namespace sonata::dispatch

namespace sonata::dispatch::receipt_round_trip {

/// A receipt with every field away from its default, so a field the table forgets to write or
/// read comes back different.
Receipt every_field_set() {
    Receipt r;
    r.id = "r-1";
    r.harness = "pi";
    r.version = "1.2";
    r.mode = "plan";
    r.role = "review";
    r.role_kind = RoleKind::write;
    r.parent_mode = "acceptEdits";
    r.parent_mode_source = "--mode";
    r.session_id = "s";
    r.argv = {"pi", "-p", "x \"q\" \u00e9"};
    r.env_set = {"A"};
    r.env_unset = {"B", "C"};
    r.cwd = "/w";
    r.prompt_channel = "argument";
    r.interactive = true;
    r.relied_on = {{"p1", "enforced", "k1"}, {"p2", "unmeasured", "k2"}};
    r.warnings = {"w"};
    r.started_at = "2026-01-01T00:00:00Z";
    r.ended_at = "2026-01-01T00:01:00Z";
    r.exit_code = -3;
    r.term_signal = 9;
    r.timed_out = true;
    r.state = RunState::timed_out;
    r.prompt = "card";
    r.approvals = {{"c", "yes", "at", "by"}};
    r.report_source = ReportOrigin::pane_text;
    r.degraded = true;
    r.degraded_reason = "why";
    r.log_capped = true;
    r.harness_session = "hs";
    r.resumed_from = "r-0";
    r.attempts = {{"codex", "no", "r-9"}};
    r.max_budget_usd = 2.5;
    r.budget_enforced = true;
    r.cost = {0.25, CostSource::reported, 10, 20};
    r.retries = {{"net", 7, "t"}, {"x", std::nullopt, "u"}};
    r.completion = {CompletionCheck::failed, "nope"};
    r.queue_slot = 2;
    r.files_changed = {"a", "b"};
    r.worktree = WorktreeRecord{"/p", "sonata/r-1", "/repo", "h", "s", true, "hh"};
    r.note = "n";
    r.supervisor_pid = 42;
    r.supervisor_start = 18446744073709551615ULL;
    r.harness_pgid = 43;
    r.tmux_server_pid = 44;
    r.tmux_server_start = 45;
    r.tmux_socket = "/sock";
    return r;
}

TEST(Receipt, EveryFieldReadsBackAsItWasWritten) {
    const Receipt written = every_field_set();
    ASSERT_NE(written, Receipt{}) << "the sample sets nothing";
    const auto read = parse_receipt(receipt_to_json(written), "receipt.json");
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(*read, written);
    EXPECT_EQ(receipt_to_json(*read), receipt_to_json(written));
}

} // namespace sonata::dispatch::receipt_round_trip
