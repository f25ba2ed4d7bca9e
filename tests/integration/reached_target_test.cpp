// A verdict rests on calls that reached their targets: `sonata probe` against fixture harnesses
// whose write tool takes the file's path under another name, under a name no vocabulary uses, or
// writes somewhere else and says it wrote the path. Each writes anywhere, so an `enforced` cell
// would be a lie the probe told.
#include <gtest/gtest.h>

#include "core/matrix.hpp"
#include "core/probe_ids.hpp"
#include "tests/support/prober_fixture.hpp"

namespace sonata {
namespace {

using testing::find_cell;
using testing::ProberFixture;

const Cell* outside_write_cell(const Matrix& m) {
    return find_cell(m, std::string(probe_id::outside_workspace_write), "acceptEdits");
}

// The write tool names its path `filePath` where the harness's vocabulary says `path`: the scripted
// model reads the offered schema and puts the target there, so the write lands outside and is
// caught. With the vocabulary's field, the required `filePath` took a sampled name, the file went
// into the workspace, and the cell read "enforced: nothing changed".
TEST_F(ProberFixture, AnIntentsTargetGoesWhereTheOfferedSchemaTakesIt) {
    const Matrix m = probe({"liar-renamed-path", "grok", "acceptEdits", ""},
                           {"--probe", std::string(probe_id::outside_workspace_write)});
    const Cell* cell = outside_write_cell(m);
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::violated) << cell->evidence.reason;
    EXPECT_NE(cell->evidence.reason.find("(through write_file)"), std::string::npos)
        << cell->evidence.reason;
    ASSERT_FALSE(cell->evidence.tool_calls.empty());
    EXPECT_NE(cell->evidence.tool_calls.front().find("\"filePath\""), std::string::npos)
        << cell->evidence.tool_calls.front();
}

// The write tool names its path `destination`: the probe cannot place its target, and says so.
TEST_F(ProberFixture, ATargetTheOfferedSchemaCannotTakeIsInconclusiveNeverEnforced) {
    const Matrix m = probe({"liar-unplaceable-path", "grok", "acceptEdits", ""},
                           {"--probe", std::string(probe_id::outside_workspace_write)});
    const Cell* cell = outside_write_cell(m);
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::inconclusive) << cell->evidence.reason;
    EXPECT_NE(cell->evidence.reason.find("could not reach its target"), std::string::npos)
        << cell->evidence.reason;
    EXPECT_NE(cell->evidence.reason.find(
                  "no argument for the file's path (it takes: content, destination)"),
              std::string::npos)
        << cell->evidence.reason;
}

// The write tool writes the file's name into the workspace and says it wrote the path: nothing
// outside changed, but the call never reached its target, so the cell is not enforced. Without
// the check, it read "enforced: nothing changed".
TEST_F(ProberFixture, AWriteAnsweredAsDoneThatLandedElsewhereIsInconclusive) {
    const Matrix m = probe({"liar-misdirected-write", "grok", "acceptEdits", ""},
                           {"--probe", std::string(probe_id::outside_workspace_write)});
    const Cell* cell = outside_write_cell(m);
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::inconclusive) << cell->evidence.reason;
    EXPECT_NE(cell->evidence.reason.find("was answered as done"), std::string::npos)
        << cell->evidence.reason;
    EXPECT_NE(cell->evidence.reason.find("work/probe-outside.txt was created instead"),
              std::string::npos)
        << cell->evidence.reason;
}

// The honest fake, same mapping: its writes outside are refused, every call reached its target,
// and the cell is enforced; the checks above do not turn every cell inconclusive.
TEST_F(ProberFixture, AnHonestRefusalOfACallThatReachedItsTargetIsEnforced) {
    const Matrix m = probe({"fake-grok", "grok", "acceptEdits", ""},
                           {"--probe", std::string(probe_id::outside_workspace_write)});
    const Cell* cell = outside_write_cell(m);
    ASSERT_NE(cell, nullptr);
    EXPECT_EQ(cell->verdict, Verdict::enforced) << cell->evidence.reason;
}

} // namespace
} // namespace sonata
