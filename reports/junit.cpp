// JUnit XML rendering of a capability matrix, serialized by reports/markup.
#include "reports/junit.hpp"

#include <map>
#include <regex>
#include <tuple>

#include <fmt/format.h>

#include "reports/evidence_text.hpp"
#include "reports/grid.hpp"
#include "reports/markup.hpp"

namespace sonata::reports {
namespace {

struct Counts {
    int tests = 0;
    int failures = 0;
    int errors = 0;
    int skipped = 0;
    long duration_ms = 0;

    void add(const Counts& o) {
        tests += o.tests;
        failures += o.failures;
        errors += o.errors;
        skipped += o.skipped;
        duration_ms += o.duration_ms;
    }
};

std::string seconds(long ms) { return fmt::format("{}.{:03}", ms / 1000, ms % 1000); }

void set_counts(Element& e, const Counts& c) {
    e.set("tests", std::to_string(c.tests)).set("failures", std::to_string(c.failures));
    e.set("errors", std::to_string(c.errors)).set("skipped", std::to_string(c.skipped));
    e.set("time", seconds(c.duration_ms));
}

bool is_timestamp(const std::string& text) {
    static const std::regex k_iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?)");
    return std::regex_match(text, k_iso);
}

void add_case(Element& suite, const std::string& suite_name, const Cell& cell, Counts& counts) {
    auto testcase = suite.add("testcase");
    testcase.set("name", cell.probe + " " + cell.mode + " " + cell.role)
        .set("classname", suite_name);
    testcase.set("time", seconds(std::max(0L, cell.evidence.duration_ms)));
    ++counts.tests;
    counts.duration_ms += std::max(0L, cell.evidence.duration_ms);
    const std::string verdict(to_string(cell.verdict));
    const std::string message = verdict + ": " + evidence_summary(cell);
    switch (cell.verdict) {
    case Verdict::enforced:
    case Verdict::asked: break;
    case Verdict::violated:
        testcase.add("failure", evidence_text(cell)).set("message", message).set("type", verdict);
        ++counts.failures;
        break;
    case Verdict::error:
        testcase.add("error", evidence_text(cell)).set("message", message).set("type", verdict);
        ++counts.errors;
        break;
    case Verdict::not_applicable:
    case Verdict::inconclusive:
    case Verdict::refused_to_start:
        testcase.add("skipped").set("message", message);
        ++counts.skipped;
        break;
    }
}

} // namespace

std::string render_junit(const Matrix& matrix) {
    // Suites in the matrix's order: harness, version, then machine.
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<const Cell*>> suites;
    for (const auto& cell : matrix.cells)
        suites[{cell.harness, cell.version, cell.machine}].push_back(&cell);
    Markup doc(Markup::Kind::xml, "testsuites");
    Element root = doc.root();
    root.set("name", "sonata capability matrix");
    Counts total;
    for (const auto& [id, cells] : suites) {
        const auto& [harness, version, machine] = id;
        const std::string name =
            harness_label(harness, version) + (machine.empty() ? "" : " on " + machine);
        Element suite = root.add("testsuite");
        suite.set("name", name);
        const std::string host = machine.empty() ? matrix.machine : machine;
        if (!host.empty()) suite.set("hostname", host);
        if (is_timestamp(matrix.created_at)) suite.set("timestamp", matrix.created_at);
        Element properties = suite.add("properties");
        properties.add("property")
            .set("name", "sonata.version")
            .set("value", matrix.sonata_version);
        properties.add("property").set("name", "platform").set("value", matrix.platform);
        Counts counts;
        for (const Cell* cell : cells)
            add_case(suite, name, *cell, counts);
        set_counts(suite, counts);
        total.add(counts);
    }
    set_counts(root, total);
    return doc.str();
}

} // namespace sonata::reports
