// A harness that needs a newer Node.js than the machine's (pi 1.x needs 22.19; on 20 it dies with a
// SyntaxError): sonata reads the need from the harness's own package, runs it with a Node.js from
// its harness cache — the version command, `plan` and a dispatch alike — and, when there is none,
// says what is missing instead of starting a process that dies.
//
// The stand-in: a package whose engines.node asks for 99.0.0 and whose `#!/usr/bin/env node` script
// fails unless it runs under the cache's "node 99.1.0" (a shell stub that marks the environment and
// runs the machine's node).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/node_runtime.hpp"
#include "tests/support/harness_list.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::run_sonata;
using testing::write_text;

constexpr const char* k_script = R"(#!/usr/bin/env node
if (process.env.SONATA_TEST_NODE !== "99.1.0") {
  console.error("SyntaxError: The requested module 'node:module' does not provide an export named 'enableCompileCache'");
  process.exit(1);
}
if (process.argv.includes("--version")) {
  console.log("1.6.0");
} else {
  console.log("final answer under node " + process.env.SONATA_TEST_NODE);
}
)";

void make_executable(const std::string& path) { ::chmod(path.c_str(), 0755); }

class HarnessRuntime : public ::testing::Test {
protected:
    testing::ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");
    std::string m_bin = m_dir.make_dir("bin");
    std::string m_cache = m_dir.path() + "/cache";
    std::string m_runtime_bin = m_cache + "/runtimes/node-99.1.0/bin";

    void SetUp() override {
        const std::string package = m_dir.path() + "/lib/node_modules/pi-coding-agent";
        write_text(
            package + "/package.json",
            R"({"name": "pi-coding-agent", "version": "1.6.0", "engines": {"node": ">=99.0.0"}})");
        write_text(package + "/dist/cli.js", k_script);
        make_executable(package + "/dist/cli.js");
        fs::create_symlink(package + "/dist/cli.js", m_bin + "/pi");
        m_env["PATH"] = m_bin + ":/usr/bin:/bin";
        m_env["SONATA_HARNESS_CACHE"] = m_cache;
        m_env.erase("SONATA_RUNTIMES_DIR"); // the runtimes are the test's own, under its cache
    }

    void install_runtime() {
        write_text(m_runtime_bin + "/node",
                   "#!/bin/sh\n"
                   "if [ \"$1\" = --version ]; then echo v99.1.0; exit 0; fi\n"
                   "SONATA_TEST_NODE=99.1.0 exec /usr/bin/node \"$@\"\n");
        make_executable(m_runtime_bin + "/node");
    }

    json harness(const std::string& id) { return testing::listed_harness(id, m_env, m_project); }
};

TEST_F(HarnessRuntime, TheNeedComesFromTheHarnesssOwnPackage) {
    const auto need = node_need(m_bin + "/pi");
    ASSERT_TRUE(need);
    EXPECT_EQ(need->minimum, "99.0.0");
    EXPECT_EQ(need->package_version, "1.6.0");
    EXPECT_FALSE(node_need("/bin/sh")) << "a native program needs no Node.js";

    // Only ">=" ranges are read; any other form is not a need sonata can check.
    const std::string other = m_dir.path() + "/other";
    write_text(other + "/package.json",
               R"({"version": "1.0.0", "engines": {"node": "^20 || >=22"}})");
    write_text(other + "/cli.js", "#!/usr/bin/env node\n");
    EXPECT_FALSE(node_need(other + "/cli.js"));
    write_text(other + "/package.json", R"({"version": "1.0.0", "engines": {"node": ">= 22"}})");
    ASSERT_TRUE(node_need(other + "/cli.js"));
    EXPECT_EQ(node_need(other + "/cli.js")->minimum, "22.0.0");
    write_text(other + "/package.json", R"({"engines": ["not", "an", "object"]})");
    EXPECT_FALSE(node_need(other + "/cli.js"));
}

TEST_F(HarnessRuntime, WithoutARuntimeEverySurfaceSaysWhatIsMissing) {
    const json pi = harness("pi");
    EXPECT_EQ(pi.at("installed"), true);
    EXPECT_EQ(pi.at("runs_here"), false);
    EXPECT_EQ(pi.at("version"), "1.6.0") << "the package's version: the harness was not run";
    const std::string note = pi.at("note");
    EXPECT_NE(note.find("pi 1.6.0 needs Node.js >= 99.0.0; found "), std::string::npos) << note;
    EXPECT_NE(note.find("fix: scripts/setup.sh installs one into " + m_cache + "/runtimes"),
              std::string::npos)
        << note;
    EXPECT_EQ(note.find("SyntaxError"), std::string::npos) << note;

    const auto run = run_sonata({"dispatch", "--harness", "pi", "--role", "code", "--mode",
                                 "acceptEdits", "--task", "say hello"},
                                m_env, m_project);
    EXPECT_EQ(run.exit_code, 5) << run.err;
    EXPECT_NE(run.err.find("needs Node.js >= 99.0.0"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(m_project + "/.sonata/runs")) << "nothing was started";

    const auto doctor = run_sonata({"doctor"}, m_env, m_project);
    EXPECT_NE(doctor.out.find("pi 1.6.0 needs Node.js >= 99.0.0"), std::string::npos) << doctor.out;
}

// engines.node is the package's word: a harness that answers its version command on an older
// Node.js anyway is measured to run, and runs, with the shortfall as its note.
TEST_F(HarnessRuntime, AHarnessThatRunsOnAnOlderNodeAnywayIsNotRefused) {
    write_text(m_dir.path() + "/lib/node_modules/pi-coding-agent/dist/cli.js",
               "#!/usr/bin/env node\nconsole.log('1.6.0');\n");
    const json pi = harness("pi");
    EXPECT_EQ(pi.at("runs_here"), true) << pi.dump();
    EXPECT_EQ(pi.at("version"), "1.6.0");
    const std::string note = pi.at("note");
    EXPECT_NE(note.find("needs Node.js >= 99.0.0"), std::string::npos) << note;
    EXPECT_NE(note.find("answered its version command anyway"), std::string::npos) << note;
}

TEST_F(HarnessRuntime, TheCachesRuntimeRunsTheVersionCommandThePlanAndTheDispatch) {
    install_runtime();
    const json pi = harness("pi");
    EXPECT_EQ(pi.at("runs_here"), true) << pi.dump();
    EXPECT_EQ(pi.at("version"), "1.6.0") << pi.dump();
    EXPECT_EQ(pi.at("path_first"), m_runtime_bin);

    const auto plan =
        run_sonata({"plan", "--harness", "pi", "--role", "code", "--mode", "acceptEdits", "--json"},
                   m_env, m_project);
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_EQ(json::parse(plan.out).at("path_first"), m_runtime_bin) << plan.out;

    const auto run = run_sonata({"dispatch", "--harness", "pi", "--role", "code", "--mode",
                                 "acceptEdits", "--task", "say hello", "--json"},
                                m_env, m_project);
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const json out = json::parse(run.out);
    EXPECT_EQ(out.at("receipt").at("state"), "done") << run.out;
    EXPECT_NE(out.at("report").get<std::string>().find("final answer under node 99.1.0"),
              std::string::npos)
        << run.out;
}

// A machine whose own node is new enough keeps it: nothing is put first on PATH.
TEST_F(HarnessRuntime, PathsOwnNodeIsKeptWhenNewEnough) {
    install_runtime();
    auto runner = make_system_runner();
    const NodeChoice old_enough = choose_node({"18.0.0", "1.6.0"}, m_env, *runner);
    EXPECT_EQ(old_enough.path_first, "");
    EXPECT_EQ(old_enough.unmet, "");
    const NodeChoice newer = choose_node({"99.0.0", "1.6.0"}, m_env, *runner);
    EXPECT_EQ(newer.path_first, m_runtime_bin);
    const NodeChoice none = choose_node({"100.0.0", "1.6.0"}, m_env, *runner);
    EXPECT_EQ(none.path_first, "");
    EXPECT_NE(none.unmet.find("needs Node.js >= 100.0.0"), std::string::npos) << none.unmet;
}

// A runtime's version is asked once while its node is unchanged; a node replaced is asked again.
TEST_F(HarnessRuntime, AnUnchangedRuntimeIsNotStartedAgainToAskItsVersion) {
    const std::string starts = m_dir.path() + "/node-starts";
    const auto runtime = [&](const std::string& version) {
        write_text(m_runtime_bin + "/node.new",
                   "#!/bin/sh\necho >> \"" + starts + "\"\necho v" + version + "\n");
        make_executable(m_runtime_bin + "/node.new");
        fs::rename(m_runtime_bin + "/node.new", m_runtime_bin + "/node");
        // The cache keeps no answer about a file changed within the last second.
        std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    };
    const auto started = [&] {
        std::ifstream in(starts);
        return std::count(std::istreambuf_iterator<char>(in), {}, '\n');
    };
    runtime("99.1.0");
    auto runner = make_system_runner();
    EXPECT_EQ(choose_node({"99.0.0", "1.6.0"}, m_env, *runner).path_first, m_runtime_bin);
    EXPECT_EQ(started(), 1);
    EXPECT_EQ(choose_node({"99.0.0", "1.6.0"}, m_env, *runner).path_first, m_runtime_bin);
    EXPECT_EQ(started(), 1) << "an unchanged node was started again";
    runtime("98.0.0"); // another file at the same path: asked again, and now too old
    EXPECT_EQ(choose_node({"99.0.0", "1.6.0"}, m_env, *runner).path_first, "");
    EXPECT_EQ(started(), 2);
}

} // namespace
} // namespace sonata
