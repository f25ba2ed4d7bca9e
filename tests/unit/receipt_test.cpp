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
