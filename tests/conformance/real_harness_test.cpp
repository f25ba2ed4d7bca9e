// The conformance tier: the whole probe catalogue against the pinned real harness CLIs
// (tests/conformance/harnesses.json, installed by scripts/install-harnesses), through the real
// `sonata probe`, compared cell by cell with the committed expected matrix
// (tests/conformance/expected/<harness>.json). A changed verdict fails with the Markdown diff of
// the cells that changed, so a harness upgrade is a reviewed change to the pins and the expected
// matrix together. A harness that is not installed is skipped with the reason.
//
// Real processes are slow and a loaded machine can starve one cell into a timeout, so a cell that
// differs is measured once more; only a cell that differs twice fails.
//
// SONATA_UPDATE_EXPECTED=1 rewrites the harness's expected matrix (and fails, so the change is read
// in `git diff` before it is committed).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/matrix.hpp"
#include "core/node_runtime.hpp"
#include "core/process.hpp"
#include "reports/diff.hpp"
#include "tests/support/pins.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using testing::Pin;
using testing::pin_name;
using testing::pins;

std::string source(const std::string& relative) {
    return std::string(SONATA_SOURCE_DIR) + "/" + relative;
}

std::string expected_path(const std::string& id) {
    return source("tests/conformance/expected/" + id + ".json");
}

std::string env_or(const char* name, const std::string& fallback) {
    const char* value = std::getenv(name);
    return value == nullptr ? fallback : std::string(value);
}

/// Only the cells of one harness version.
Matrix cells_of(const Matrix& m, const Pin& pin) {
    Matrix out;
    for (const auto& c : m.cells) {
        if (c.harness == pin.id && c.version == pin.version) out.cells.push_back(c);
    }
    return out;
}

/// What the expected matrix keeps of a cell: the verdict and the reason, with this run's scratch
/// directory written as <scratch>, also where the reason's length limit cut it short.
Cell expected_form(Cell cell, const std::regex& scratch, const std::regex& cut_scratch) {
    Evidence kept;
    kept.reason = std::regex_replace(cell.evidence.reason, scratch, "<scratch>");
    kept.reason = std::regex_replace(kept.reason, cut_scratch, "<scratch>");
    cell.evidence = kept;
    return cell;
}

class RealHarness : public ::testing::TestWithParam<Pin> {
protected:
    void SetUp() override {
        const Pin& pin = GetParam();
        m_bin = search_path(pin.binary, env_or("PATH", "/usr/bin:/bin")).value_or("");
        if (m_bin.empty()) {
            const std::string why = testing::missing_harness_skip_reason();
            if (why.empty()) {
                FAIL() << pin.id << " " << pin.version << " is not installed (no '" << pin.binary
                       << "' on PATH) although the npm registry answered";
            }
            GTEST_SKIP() << pin.id << " " << pin.version << " is not installed (no '" << pin.binary
                         << "' on PATH): " << why;
        }
    }

    /// `sonata probe --harness ID [--probe P]...`, with its own HOME, XDG dirs and TMPDIR.
    Matrix probe(const std::vector<std::string>& only) {
        const Pin& pin = GetParam();
        const std::string out = m_dir.path() + "/run.json";
        std::vector<std::string> args{"probe",
                                      "--harness",
                                      pin.id,
                                      "--bin",
                                      pin.id + "=" + m_bin,
                                      "--no-save",
                                      "--jobs",
                                      env_or("SONATA_CONFORMANCE_JOBS", "1"),
                                      "--out",
                                      out};
        for (const auto& p : only)
            args.insert(args.end(), {"--probe", p});
        // The parent measured is the reference every child is also measured on (what it guards
        // in each mode): claude's expected matrix holds its cells, read and never written here.
        if (pin.id != "claude") args.insert(args.end(), {"--matrix", expected_path("claude")});
        Environment env = testing::hermetic_env(m_dir);
        env["PATH"] = env_or("PATH", "/usr/bin:/bin");
        // The machine's harness cache, as a user's HOME has it: a harness that unpacks its own
        // package (copilot) unpacks it there once, outside the scratch world checked below.
        if (const auto cache = harness_cache_dir(current_environment()); !cache.empty())
            env["SONATA_HARNESS_CACHE"] = cache;
        ProcessRequest request;
        request.argv = {SONATA_BIN};
        request.argv.insert(request.argv.end(), args.begin(), args.end());
        request.env = env;
        request.cwd = m_dir.path();
        request.timeout = std::chrono::minutes(45); // the catalogue of one slow harness, loaded
        auto result = make_system_runner()->run(request);
        if (!result) {
            ADD_FAILURE() << "cannot run sonata: " << result.error().message;
            return {};
        }
        const auto& run = *result;
        EXPECT_EQ(run.exit_code, 0) << run.err;
        auto m = load_matrix(out);
        EXPECT_TRUE(m) << (m ? "" : m.error().message) << "\n" << run.err;
        expect_nothing_left();
        return m ? *m : Matrix{};
    }

    /// Probing leaves nothing behind: no file in sonata's HOME, XDG dirs or TMPDIR (the harnesses
    /// had their own, inside the removed scratch tree) but sonata's own version cache, and no
    /// process working under this test's directory.
    void expect_nothing_left() const {
        const std::string versions = m_dir.path() + "/xdg/cache/sonata/versions.json";
        for (const char* dir :
             {"home", "tmp", "xdg/cache", "xdg/config", "xdg/data", "xdg/state"}) {
            std::error_code ec;
            for (const auto& entry :
                 fs::recursive_directory_iterator(m_dir.path() + "/" + dir, ec)) {
                const std::string path = entry.path().string();
                if (path == versions || versions.starts_with(path + "/")) continue;
                ADD_FAILURE() << "sonata probe left " << entry.path();
            }
        }
        EXPECT_TRUE(fs::is_regular_file(versions)) << "the version the probe ran on was cached";
        for (const auto& left : testing::processes_working_under(m_dir.path())) {
            ADD_FAILURE() << "process still running: " << left;
        }
    }

    testing::ScratchDir m_dir;
    std::string m_bin;
};

TEST_P(RealHarness, CatalogueMatchesTheExpectedMatrix) {
    const Pin& pin = GetParam();
    const std::string tmp =
        std::regex_replace(m_dir.path() + "/tmp", std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
    const std::regex scratch(tmp + "/sonata-probe-[A-Za-z0-9]{6}(/sonata-cell-[A-Za-z0-9]{6})?");
    const std::regex cut_scratch(tmp + "/sonata-[A-Za-z0-9-]*(?=…)");
    Matrix actual = probe({});
    ASSERT_FALSE(actual.cells.empty()) << "no cell was measured";
    std::cout << "[ real cells ] " << pin.id << " " << pin.version << ": " << actual.cells.size()
              << " cells probed\n";
    for (auto& c : actual.cells) {
        EXPECT_EQ(c.version, pin.version) << pin.id << ": installed version differs from the pin";
        c = expected_form(c, scratch, cut_scratch);
    }

    const std::string expected_file = expected_path(pin.id);
    if (env_or("SONATA_UPDATE_EXPECTED", "") == "1") {
        // The harness's other pinned lines keep their cells.
        Matrix updated;
        if (auto before = load_matrix(expected_file)) {
            for (const auto& c : before->cells) {
                if (c.version != pin.version) updated.cells.push_back(c);
            }
        }
        updated.merge(actual.cells);
        ASSERT_TRUE(save_matrix(updated, expected_file));
        FAIL() << "rewrote tests/conformance/expected/" << pin.id << ".json: read `git diff`, "
               << "then run again without SONATA_UPDATE_EXPECTED";
    }
    auto expected_all = load_matrix(expected_file);
    ASSERT_TRUE(expected_all) << expected_all.error().message;
    const Matrix expected = cells_of(*expected_all, pin);
    ASSERT_FALSE(expected.cells.empty())
        << "the expected matrix has no cell for " << pin.id << " " << pin.version;

    auto changes = reports::diff_matrices(expected, actual);
    if (!changes.empty()) { // measure the changed probes once more
        std::set<std::string> again;
        for (const auto& change : changes)
            again.insert(change.after ? change.after->probe : change.before->probe);
        Matrix second = probe({again.begin(), again.end()});
        for (auto& c : second.cells)
            c = expected_form(c, scratch, cut_scratch);
        actual.merge(second.cells);
        changes = reports::diff_matrices(expected, actual);
    }
    EXPECT_TRUE(changes.empty()) << "verdicts changed twice in a row for " << pin.id << " "
                                 << pin.version << ":\n"
                                 << reports::render_diff_markdown(
                                        changes, "expected/" + pin.id + ".json", "this run");
}

INSTANTIATE_TEST_SUITE_P(Pinned, RealHarness, ::testing::ValuesIn(pins()), pin_name);

// With the expected matrix as this machine's (the pin's cells and the parent's, claude's), every
// mapping `sonata plan` would run stands on cells that are enforced (or asked, or explained as not
// applicable) for every probe the gate checked, what the mapping relies on and what the parent
// guards in that mode, and everything else is a refusal that says why. Needs no harness
// installed: it reads the committed matrices.
class ExpectedMatrix : public ::testing::TestWithParam<Pin> {};

TEST_P(ExpectedMatrix, EveryMappingSonataRunsStandsOnEnforcedCells) {
    const Pin& pin = GetParam();
    auto expected = load_matrix(expected_path(pin.id));
    ASSERT_TRUE(expected) << expected.error().message;
    auto parent = load_matrix(expected_path("claude"));
    ASSERT_TRUE(parent) << parent.error().message;
    for (const auto& c : parent->cells) {
        if (c.role == k_parent_role) expected->merge({c});
    }
    testing::ScratchDir dir;
    const std::string expected_file = dir.path() + "/with-parent.json";
    ASSERT_TRUE(save_matrix(*expected, expected_file));
    const Environment env = testing::hermetic_env(dir);
    const std::vector<std::pair<std::string, std::string>> cells{{"plan", "read-only"},
                                                                 {"default", "write"},
                                                                 {"acceptEdits", "write"},
                                                                 {"bypassPermissions", "write"}};
    for (const auto& [mode, role] : cells) {
        const auto run = testing::run_sonata({"plan", "--harness", pin.id, "--mode", mode, "--role",
                                              role, "--harness-version", pin.version, "--matrix",
                                              expected_file, "--json"},
                                             env, dir.path());
        ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 4) << run.err;
        const auto doc = json::parse(run.out);
        if (doc.at("decision") == "refuse") {
            EXPECT_FALSE(doc.at("reason").get<std::string>().empty()) << pin.id << " " << mode;
            continue;
        }
        ASSERT_EQ(doc.at("notes").dump().find("no cell of the parent"), std::string::npos)
            << pin.id << " " << mode << ": the parent's cells were not the reference";
        for (const auto& [property, verdict] : doc.at("gate").at("probes").items()) {
            const Cell* cell = expected->find(pin.id, pin.version, property, mode,
                                              mode == "plan" ? "read-only" : role);
            ASSERT_NE(cell, nullptr) << pin.id << " " << mode << ": sonata runs it, but "
                                     << property << " is not in the expected matrix";
            // A harness that loads what a repository holds (its configs, or its MCP servers) runs
            // only from a workspace that holds none of it (this one is empty), and the decision
            // says so.
            const bool loads_nothing_here =
                (property == "hostile-workspace" || property == "mcp-reachability") &&
                cell->verdict == Verdict::violated &&
                doc.at("notes").dump().find(property + " measured 'violated'") !=
                    std::string::npos &&
                doc.at("notes").dump().find("this workspace holds none of") != std::string::npos;
            const bool holds =
                cell->verdict == Verdict::enforced || cell->verdict == Verdict::asked ||
                (cell->verdict == Verdict::not_applicable && !cell->evidence.reason.empty()) ||
                loads_nothing_here;
            EXPECT_TRUE(holds) << pin.id << " " << mode << ": sonata runs it, but " << property
                               << " is " << to_string(cell->verdict) << ": "
                               << cell->evidence.reason;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Pinned, ExpectedMatrix, ::testing::ValuesIn(pins()), pin_name);

} // namespace
} // namespace sonata
