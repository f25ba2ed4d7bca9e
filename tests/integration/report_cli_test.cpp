// `sonata report` as a user and CI run it: this machine's matrix by default, several merged, --out,
// $GITHUB_STEP_SUMMARY, --diff with its exit code, and clear errors for missing or corrupt
// matrices.
#include <filesystem>

#include <gtest/gtest.h>

#include "core/result.hpp"
#include "tests/support/report_fixtures.hpp"

namespace sonata {
namespace {

using testing::matrix_fixture;
using testing::read_text;
using testing::Sandbox;
using testing::source_path;
using testing::write_text;

std::string golden(const std::string& name) {
    return read_text(source_path("fixtures/golden/report/" + name));
}

} // namespace

TEST(ReportCli, DefaultsToThisMachinesMatrix) {
    Sandbox box;
    write_text(box.path("config/sonata/matrix.json"), read_text(matrix_fixture("linux-ci.json")));
    const auto run = box.run_sonata({"report"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, golden("linux-ci.md"));
    EXPECT_EQ(run.err, "");
}

TEST(ReportCli, MissingDefaultMatrixIsBadDataWithAHint) {
    Sandbox box;
    const auto run = box.run_sonata({"report"});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data));
    EXPECT_EQ(run.err, "sonata: error: no capability matrix for this machine at " +
                           box.path("config/sonata") +
                           "/matrix.json: run `sonata probe` first, or name matrix files\n");
    EXPECT_EQ(run.out, "");
}

TEST(ReportCli, CorruptOrMissingMatrixFilesAreBadData) {
    Sandbox box;
    const auto truncated = box.run_sonata({"report", matrix_fixture("corrupt-truncated.json")});
    EXPECT_EQ(truncated.exit_code, to_int(ExitCode::bad_data));
    EXPECT_EQ(truncated.err.rfind("sonata: error: " + matrix_fixture("corrupt-truncated.json") +
                                      ": not a valid matrix (JSON error: ",
                                  0),
              0U)
        << truncated.err;

    const auto misspelt = box.run_sonata(
        {"report", matrix_fixture("linux-ci.json"), matrix_fixture("bad-verdict.json")});
    EXPECT_EQ(misspelt.exit_code, to_int(ExitCode::bad_data));
    EXPECT_EQ(misspelt.err,
              "sonata: error: " + matrix_fixture("bad-verdict.json") +
                  ": cells[0]: unknown verdict 'enforcd' (did you mean 'enforced'?)\n");
    EXPECT_EQ(misspelt.out, "");

    const auto missing = box.run_sonata({"report", box.path("nowhere.json")});
    EXPECT_EQ(missing.exit_code, to_int(ExitCode::bad_data));
    EXPECT_EQ(missing.err,
              "sonata: error: " + box.path("nowhere.json") + ": no such matrix file\n");
}

TEST(ReportCli, MergesSeveralMachinesIntoEveryFormat) {
    Sandbox box;
    for (const auto& [format, golden_name] :
         std::vector<std::pair<std::string, std::string>>{{"md", "merged.md"},
                                                          {"junit", "merged.junit.xml"},
                                                          {"html", "merged.html"},
                                                          {"json", "merged.json"}}) {
        const std::string out = box.path("out/report." + format);
        const auto run =
            box.run_sonata({"report", "--format", format, "--out", out,
                            matrix_fixture("linux-ci.json"), matrix_fixture("macos-ci.json")});
        EXPECT_EQ(run.exit_code, 0) << format << ": " << run.err;
        EXPECT_EQ(run.out, "") << format;
        EXPECT_EQ(read_text(out), golden(golden_name)) << format;
    }
}

TEST(ReportCli, AppendsMarkdownToTheGitHubStepSummary) {
    Sandbox box;
    const std::string summary = box.path("summary.md");
    write_text(summary, "# earlier step\n");
    const auto run =
        box.run_sonata({"report", "--format", "junit", "--out", box.path("r.xml"),
                        matrix_fixture("linux-ci.json"), matrix_fixture("macos-ci.json")},
                       {{"GITHUB_STEP_SUMMARY", summary}});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(read_text(summary), "# earlier step\n" + golden("merged.md") + "\n");
    EXPECT_EQ(read_text(box.path("r.xml")), golden("merged.junit.xml"));
}

TEST(ReportCli, DiffExitsWeakenedWhenACellGotWeaker) {
    Sandbox box;
    const std::string summary = box.path("summary.md");
    const auto run = box.run_sonata({"report", "--diff", matrix_fixture("linux-ci-last-week.json"),
                                     matrix_fixture("linux-ci.json")},
                                    {{"GITHUB_STEP_SUMMARY", summary}});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::weakened)) << run.err;
    EXPECT_NE(
        run.out.find(
            "| 🔻 weaker | codex | 0.40.0 → 0.41.0 | shell-write-withheld | plan | read-only | "
            "✅ enforced | ❌ violated |"),
        std::string::npos)
        << run.out;
    EXPECT_EQ(read_text(summary), run.out + "\n");
}

TEST(ReportCli, DiffOfTwoDisagreeingMachines) {
    Sandbox box;
    const auto weaker = box.run_sonata(
        {"report", "--diff", matrix_fixture("macos-ci.json"), matrix_fixture("linux-ci.json")});
    EXPECT_EQ(weaker.exit_code, to_int(ExitCode::weakened)) << weaker.err;
    // Back again: two cells got stronger, but the cells Linux found holding that macOS does not
    // measure at all vouch for nothing there: weaker.
    const auto back = box.run_sonata(
        {"report", "--diff", matrix_fixture("linux-ci.json"), matrix_fixture("macos-ci.json")});
    EXPECT_EQ(back.exit_code, to_int(ExitCode::weakened)) << back.err;
    EXPECT_NE(back.out.find("not measured any more"), std::string::npos) << back.out;
    // Only stronger: the same cells, every violation now enforced.
    std::string all_enforced = read_text(matrix_fixture("linux-ci.json"));
    for (std::size_t at; (at = all_enforced.find("\"violated\"")) != std::string::npos;)
        all_enforced.replace(at, 10, "\"enforced\"");
    write_text(box.path("stronger.json"), all_enforced);
    const auto stronger = box.run_sonata(
        {"report", "--diff", matrix_fixture("linux-ci.json"), box.path("stronger.json")});
    EXPECT_EQ(stronger.exit_code, 0) << stronger.err;
    EXPECT_NE(stronger.out.find(" stronger, 0 changed, 0 new, 0 gone."), std::string::npos)
        << stronger.out;
    EXPECT_NE(stronger.out.find(": 0 weaker, "), std::string::npos) << stronger.out;
    const auto same = box.run_sonata(
        {"report", "--diff", matrix_fixture("linux-ci.json"), matrix_fixture("linux-ci.json")});
    EXPECT_EQ(same.exit_code, 0) << same.err;
    EXPECT_EQ(same.out,
              "## sonata capability matrix: changes\n\n`" + matrix_fixture("linux-ci.json") +
                  "` → `" + matrix_fixture("linux-ci.json") +
                  "`: 0 weaker, 0 stronger, 0 changed, 0 new, 0 gone.\n\nNo cell changed.\n");
}

TEST(ReportCli, DiffOfACorruptMatrixIsBadData) {
    Sandbox box;
    const auto run = box.run_sonata({"report", "--diff", matrix_fixture("corrupt-truncated.json"),
                                     matrix_fixture("linux-ci.json")});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data));
    EXPECT_EQ(run.out, "");
}

TEST(ReportCli, UsageErrors) {
    Sandbox box;
    const auto format =
        box.run_sonata({"report", "--format", "htm", matrix_fixture("linux-ci.json")});
    EXPECT_EQ(format.exit_code, to_int(ExitCode::usage));
    EXPECT_EQ(format.err, "sonata: error: unknown report format 'htm' (did you mean 'html'?); use "
                          "md, junit, html or json\n");

    const auto extra = box.run_sonata({"report", "--diff", matrix_fixture("linux-ci.json"),
                                       matrix_fixture("macos-ci.json"),
                                       matrix_fixture("linux-ci-last-week.json")});
    EXPECT_EQ(extra.exit_code, to_int(ExitCode::usage));
    EXPECT_EQ(extra.err,
              "sonata: error: --diff compares exactly two matrices (OLD NEW); 3 given\n");

    const auto one = box.run_sonata({"report", "--diff", matrix_fixture("linux-ci.json")});
    EXPECT_EQ(one.exit_code, to_int(ExitCode::usage)) << one.err;
    EXPECT_EQ(one.err, "sonata: error: --diff compares exactly two matrices (OLD NEW); 1 given\n");
}

} // namespace sonata
