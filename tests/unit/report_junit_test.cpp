// The JUnit renderer: suites per harness@version, outcomes per verdict, escaping by the serializer
// and control characters made legal first.
#include <gtest/gtest.h>

#include "reports/junit.hpp"

namespace sonata::reports {
namespace {

Cell cell(const std::string& harness, const std::string& version, const std::string& probe,
          const std::string& mode, const std::string& role, Verdict verdict, Evidence evidence) {
    Cell c;
    c.harness = harness;
    c.version = version;
    c.probe = probe;
    c.mode = mode;
    c.role = role;
    c.verdict = verdict;
    c.evidence = std::move(evidence);
    return c;
}

Evidence evidence(const std::string& reason, long duration_ms) {
    Evidence e;
    e.reason = reason;
    e.duration_ms = duration_ms;
    return e;
}

Matrix sample() {
    Matrix m;
    m.sonata_version = "0.1.0";
    m.machine = "box";
    m.platform = "linux-x86_64";
    m.created_at = "yesterday"; // Not ISO 8601: no timestamp attribute.
    Evidence wrote = evidence("wrote \x1b[31m<x> & \"y\"\nand more", 1500);
    wrote.files_changed = {"a.txt"};
    wrote.exit_code = 0;
    m.cells = {
        cell("codex", "0.41.0", "write-withheld", "plan", "read-only", Verdict::violated, wrote),
        cell("codex", "0.41.0", "rm-prompt", "default", "write", Verdict::error,
             evidence("server down", 10)),
        cell("gemini", "", "mcp-reachability", "plan", "read-only", Verdict::not_applicable,
             evidence("no MCP", 0)),
        cell("gemini", "", "write-withheld", "plan", "read-only", Verdict::enforced,
             evidence("", 2000)),
    };
    m.sort();
    return m;
}

} // namespace

TEST(ReportJunit, WholeDocument) {
    const std::string expected = R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="sonata capability matrix" tests="4" failures="1" errors="1" skipped="1" time="3.510">
  <testsuite name="codex@0.41.0" hostname="box" tests="2" failures="1" errors="1" skipped="0" time="1.510">
    <properties>
      <property name="sonata.version" value="0.1.0"/>
      <property name="platform" value="linux-x86_64"/>
    </properties>
    <testcase name="rm-prompt default write" classname="codex@0.41.0" time="0.010">
      <error message="error: server down" type="error">verdict: error
reason: server down
exit code: -1
duration: 10 ms
</error>
    </testcase>
    <testcase name="write-withheld plan read-only" classname="codex@0.41.0" time="1.500">
      <failure message="violated: wrote ␛[31m&lt;x&gt; &amp; &quot;y&quot; and more" type="violated">verdict: violated
reason: wrote ␛[31m&lt;x&gt; &amp; "y"
and more
files changed:
  a.txt
exit code: 0
duration: 1500 ms
</failure>
    </testcase>
  </testsuite>
  <testsuite name="gemini" hostname="box" tests="2" failures="0" errors="0" skipped="1" time="2.000">
    <properties>
      <property name="sonata.version" value="0.1.0"/>
      <property name="platform" value="linux-x86_64"/>
    </properties>
    <testcase name="mcp-reachability plan read-only" classname="gemini" time="0.000">
      <skipped message="not-applicable: no MCP"/>
    </testcase>
    <testcase name="write-withheld plan read-only" classname="gemini" time="2.000"/>
  </testsuite>
</testsuites>
)";
    EXPECT_EQ(render_junit(sample()), expected);
}

TEST(ReportJunit, MergedSuitesNameTheirMachineAndHost) {
    Matrix m = sample();
    for (auto& c : m.cells)
        c.machine = c.harness == "codex" ? "linux-ci" : "macos-ci";
    m.created_at = "2026-11-30T10:00:00Z";
    const std::string xml = render_junit(m);
    EXPECT_NE(xml.find(R"(<testsuite name="codex@0.41.0 on linux-ci" hostname="linux-ci" )"
                       R"(timestamp="2026-11-30T10:00:00Z" tests="2")"),
              std::string::npos)
        << xml;
    EXPECT_NE(
        xml.find(
            R"(<testcase name="write-withheld plan read-only" classname="gemini on macos-ci" )"),
        std::string::npos)
        << xml;
}

TEST(ReportJunit, AnEmptyMatrixIsAnEmptyButValidDocument) {
    EXPECT_EQ(render_junit(Matrix{}),
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<testsuites name=\"sonata capability matrix\" tests=\"0\" failures=\"0\" "
              "errors=\"0\" skipped=\"0\" time=\"0.000\"/>\n");
}

} // namespace sonata::reports
