// The JUnit report validates against the JUnit XML schema in fixtures/schemas/junit.xsd, checked by
// xmllint (Debian's libxml2-utils); the schema itself is shown to reject a malformed report.
#include <gtest/gtest.h>

#include "core/process.hpp"
#include "tests/support/report_fixtures.hpp"

namespace sonata {
namespace {

using testing::matrix_fixture;
using testing::Sandbox;
using testing::source_path;
using testing::write_text;

std::optional<std::string> find_xmllint(const Sandbox& box) {
    return search_path("xmllint", box.env().count("PATH") ? box.env().at("PATH") : "");
}

ProcessResult validate(const Sandbox& box, const std::string& xmllint, const std::string& file) {
    ProcessRequest request;
    request.argv = {xmllint, "--noout", "--schema", source_path("fixtures/schemas/junit.xsd"),
                    file};
    request.env = box.env();
    request.timeout = std::chrono::seconds(60);
    auto result = make_system_runner()->run(request);
    if (!result) throw std::runtime_error(result.error().message);
    return *result;
}

} // namespace

TEST(ReportJunitSchema, ReportsFromOneAndFromTwoMachinesValidate) {
    Sandbox box;
    const auto xmllint = find_xmllint(box);
    if (!xmllint) GTEST_SKIP() << "xmllint is not installed (Debian package libxml2-utils)";
    const std::vector<std::vector<std::string>> inputs{
        {matrix_fixture("linux-ci.json")},
        {matrix_fixture("linux-ci.json"), matrix_fixture("macos-ci.json")},
        {matrix_fixture("linux-ci-last-week.json")},
    };
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string out = box.path("junit-" + std::to_string(i) + ".xml");
        std::vector<std::string> args{"report", "--format", "junit", "--out", out};
        args.insert(args.end(), inputs[i].begin(), inputs[i].end());
        const auto run = box.run_sonata(args);
        ASSERT_EQ(run.exit_code, 0) << run.err;
        const auto check = validate(box, *xmllint, out);
        EXPECT_EQ(check.exit_code, 0) << check.err;
        EXPECT_EQ(check.err, out + " validates\n");
    }
}

TEST(ReportJunitSchema, TheSchemaRejectsAMalformedReport) {
    Sandbox box;
    const auto xmllint = find_xmllint(box);
    if (!xmllint) GTEST_SKIP() << "xmllint is not installed (Debian package libxml2-utils)";
    const std::string bad = box.path("bad.xml");
    // A test case without a name, and two outcomes in one test case.
    write_text(
        bad, "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"s\" tests=\"1\">"
             "<testcase classname=\"c\"><failure/><error/></testcase></testsuite></testsuites>\n");
    const auto check = validate(box, *xmllint, bad);
    EXPECT_NE(check.exit_code, 0);
    EXPECT_NE(check.err.find("The attribute 'name' is required but missing"), std::string::npos)
        << check.err;
    EXPECT_NE(check.err.find(bad + " fails to validate"), std::string::npos) << check.err;
}

} // namespace sonata
