// sonata's own inputs, tried as an attacker would, against the real binary: a repository's
// sonata.toml, a matrix merged from several machines, a caller passing values shaped like flags,
// files that are FIFOs, devices or nested beyond any parser's stack, a settings.json that links
// out of the project or holds numbers that would not survive a rewrite, an environment with no
// usable HOME. Each gets a clear error (or the narrower decision) and loses nothing.
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/matrix.hpp"
#include "core/result.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace hostile_inputs_test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::run_sonata;
using testing::ScratchDir;
using testing::SonataRun;
using testing::tree;
using testing::write_text;

/// A run that would hang (a FIFO read) ends after this, as exit 124, instead of holding the suite.
const std::vector<std::string> k_bounded{"/usr/bin/timeout", "30"};

class HostileInputs : public ::testing::Test {
protected:
    ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");
    std::string m_machine = m_dir.path() + "/xdg/config/sonata";

    SonataRun sonata(const std::vector<std::string>& args) {
        return run_sonata(args, m_env, m_project, std::nullopt, k_bounded);
    }

    SonataRun plan(const std::string& harness, const std::string& mode, const std::string& role,
                   const std::string& version, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"plan", "--harness", harness, "--mode",
                                      mode,   "--role",    role,    "--harness-version",
                                      version};
        args.insert(args.end(), extra.begin(), extra.end());
        return sonata(args);
    }

    /// The probes `plan` says codex 0.171.0's read-only mapping relies on.
    std::vector<std::string> codex_plan_relies() {
        const auto run = plan("codex", "plan", "review", "0.171.0", {"--json"});
        EXPECT_EQ(run.exit_code, 0) << run.err;
        return json::parse(run.out).at("relies_on").get<std::vector<std::string>>();
    }

    /// A matrix of one machine with every relied-on cell of codex's read-only mapping at `verdict`,
    /// except `odd` at `odd_verdict`.
    static Matrix codex_matrix(const std::string& machine, const std::vector<std::string>& relies,
                               const std::string& odd, Verdict odd_verdict) {
        Matrix m;
        m.machine = machine;
        for (const auto& probe : relies) {
            Cell c;
            c.harness = "codex";
            c.version = "0.171.0";
            c.probe = probe;
            c.mode = "plan";
            c.role = "read-only";
            c.verdict = probe == odd ? odd_verdict : Verdict::enforced;
            c.evidence.files_changed = {
                probe == odd && odd_verdict == Verdict::violated ? "created work/x" : ""};
            m.cells.push_back(c);
        }
        return m;
    }
};

struct WideningArgs {
    std::string harness;
    std::string mode;
    std::string toml_args; ///< The `args = …` value as TOML.
};

// Each of these reached the argv before; codex's writable_roots and exclude_slash_tmp ones turned
// its outside-workspace-write cell from enforced to violated in acceptEdits and default.
TEST_F(HostileInputs, ConfiguredArgsThatWidenAreConfigErrorsNamingFileLineAndKey) {
    const std::vector<WideningArgs> cases{
        {"codex", "acceptEdits", R"(['-csandbox_workspace_write.writable_roots=["/"]'])"},
        {"codex", "default", R"(['-capproval_policy="never"'])"},
        {"codex", "acceptEdits", R"(['--config=sandbox_workspace_write.writable_roots=["/"]'])"},
        {"codex", "acceptEdits", R"(['-c', ' sandbox_workspace_write.exclude_slash_tmp=false'])"},
        {"gemini", "acceptEdits", R"(['-dy=true'])"},
        {"qwen", "plan", R"(['-yy=true'])"},
        {"opencode", "acceptEdits", R"(['-cc=true'])"},
        {"pi", "plan", R"(['-ca=1'])"},
        {"pi", "plan", R"(['-e', 'x.ts'])"},
    };
    for (const auto& c : cases) {
        write_text(m_project + "/sonata.toml",
                   "gate = \"warn\"\n[harnesses." + c.harness + "]\nargs = " + c.toml_args + "\n");
        const auto run = plan(c.harness, c.mode, "code", "1.0.0");
        EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << c.toml_args << "\n" << run.out;
        EXPECT_EQ(run.err.rfind("sonata: error: " + m_project + "/sonata.toml:3: 'harnesses." +
                                    c.harness + ".args': ",
                                0),
                  0U)
            << run.err;
    }
}

TEST_F(HostileInputs, BuiltInReadOnlyRolesCannotBecomeWriteRoles) {
    for (const std::string role : {"read-only", "review", "explore", "plan"}) {
        write_text(m_project + "/sonata.toml", "[roles." + role + "]\nkind = \"write\"\n");
        const auto run = plan("codex", "bypassPermissions", role, "0.171.0");
        EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << role << "\n" << run.out;
        EXPECT_EQ(run.err.rfind("sonata: error: " + m_project + "/sonata.toml:2: 'roles." + role +
                                    ".kind': ",
                                0),
                  0U)
            << run.err;
    }
    // Setting a built-in role's harness, or adding a write role, is still what config is for.
    write_text(m_project + "/sonata.toml", "[roles.review]\nkind = \"read-only\"\nharness = "
                                           "\"codex\"\n[roles.writer]\nkind = \"write\"\n");
    const auto review = sonata({"plan", "--mode", "bypassPermissions", "--role", "review",
                                "--harness-version", "0.171.0", "--json"});
    ASSERT_EQ(review.exit_code, 0) << review.err;
    EXPECT_EQ(json::parse(review.out).at("mode"), "plan");
}

// `sonata report --format json a.json b.json` merges machines; the gate then looks only at the
// machine it runs on, and a duplicate cell never hides a violated one.
TEST_F(HostileInputs, MergedAndDuplicatedMatricesGateOnTheWeakestCellOfThisMachine) {
    const auto relies = codex_plan_relies();
    ASSERT_FALSE(relies.empty());
    const std::string odd = relies.front();
    const auto merged_of = [&](const Matrix& a, const Matrix& b) {
        EXPECT_TRUE(save_matrix(a, m_dir.path() + "/a.json"));
        EXPECT_TRUE(save_matrix(b, m_dir.path() + "/b.json"));
        const auto run =
            sonata({"report", "--format", "json", "--out", m_dir.path() + "/merged.json",
                    m_dir.path() + "/a.json", m_dir.path() + "/b.json"});
        EXPECT_EQ(run.exit_code, 0) << run.err;
        return m_dir.path() + "/merged.json";
    };
    const auto gate = [&](const std::string& matrix) {
        return plan("codex", "plan", "review", "0.171.0", {"--matrix", matrix}).exit_code;
    };
    const std::string here = this_machine();
    EXPECT_EQ(gate(merged_of(codex_matrix(here, relies, odd, Verdict::violated),
                             codex_matrix("other-box", relies, odd, Verdict::enforced))),
              to_int(ExitCode::refused));
    EXPECT_EQ(gate(merged_of(codex_matrix("other-box", relies, odd, Verdict::enforced),
                             codex_matrix(here, relies, odd, Verdict::violated))),
              to_int(ExitCode::refused));
    EXPECT_EQ(gate(merged_of(codex_matrix(here, relies, odd, Verdict::enforced),
                             codex_matrix("other-box", relies, odd, Verdict::violated))),
              0);
    const auto elsewhere =
        plan("codex", "plan", "review", "0.171.0",
             {"--matrix", merged_of(codex_matrix("box-a", relies, odd, Verdict::enforced),
                                    codex_matrix("box-b", relies, odd, Verdict::enforced))});
    EXPECT_EQ(elsewhere.exit_code, to_int(ExitCode::refused));
    EXPECT_NE(elsewhere.out.find("holds no cell of this machine (" + here + ")"), std::string::npos)
        << elsewhere.out;

    for (const Verdict first : {Verdict::enforced, Verdict::inconclusive}) {
        Matrix one = codex_matrix(here, relies, odd, first);
        const Matrix bad = codex_matrix(here, relies, odd, Verdict::violated);
        one.cells.push_back(bad.cells.front()); // a second cell for the same key, after the first
        ASSERT_TRUE(save_matrix(one, m_dir.path() + "/dup.json"));
        EXPECT_EQ(gate(m_dir.path() + "/dup.json"), to_int(ExitCode::refused)) << to_string(first);
    }
}

TEST_F(HostileInputs, ValuesShapedLikeFlagsAndBadBudgetsAreUsageErrors) {
    const std::vector<std::vector<std::string>> cases{
        {"gemini", "--model=-yy=true"},
        {"qwen", "--model=-yy=true"},
        {"codex", "--model=-csandbox_workspace_write.writable_roots=[\"/\"]"},
        {"pi", "--resume=-ca=1"},
        {"claude", "--max-budget-usd=nan"},
        {"claude", "--max-budget-usd=inf"},
        {"claude", "--max-budget-usd=-1"},
        {"claude", "--max-budget-usd=0"},
    };
    for (const auto& c : cases) {
        const auto run = plan(c[0], "acceptEdits", "code", "1.0.0", {c[1]});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::usage)) << c[1] << "\n" << run.out;
        const bool budget = c[1].rfind("--max-budget-usd", 0) == 0;
        EXPECT_NE(run.err.find(budget ? "must be a finite number of dollars above 0"
                                      : "may not look like a flag"),
                  std::string::npos)
            << run.err;
    }
}

TEST_F(HostileInputs, FilesNestedBeyondAnyStackAreBadData) {
    const std::string deep(60000, '[');
    const std::string matrix =
        R"({"schema":1,"cells":[{"harness":"codex","version":"0.171.0","probe":"p",)"
        R"("mode":"plan","role":"read-only","verdict":"enforced","evidence":{"x":)" +
        deep + "}}]}";
    write_text(m_dir.path() + "/deep.json", matrix);
    EXPECT_EQ(plan("codex", "plan", "review", "0.171.0", {"--matrix", m_dir.path() + "/deep.json"})
                  .exit_code,
              to_int(ExitCode::bad_data));
    EXPECT_EQ(sonata({"report", m_dir.path() + "/deep.json"}).exit_code,
              to_int(ExitCode::bad_data));
    const std::string settings =
        "{\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
    write_text(m_project + "/.claude/settings.json", settings);
    const auto before = tree(m_dir.path());
    EXPECT_EQ(sonata({"init", "--yes"}).exit_code, to_int(ExitCode::bad_data));
    EXPECT_EQ(read_text(m_project + "/.claude/settings.json"), settings);
    EXPECT_EQ(tree(m_dir.path()), before);
}

TEST_F(HostileInputs, FifosAndDevicesAreRefusedNotReadForever) {
    const std::string fifo = m_dir.path() + "/fifo.json";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const std::string& path : {fifo, std::string("/dev/zero")}) {
        const auto run = plan("codex", "plan", "review", "0.171.0", {"--matrix", path});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << path << ": " << run.err;
        EXPECT_NE(run.err.find("not a regular file"), std::string::npos) << run.err;
    }
    fs::create_directories(m_machine);
    ASSERT_EQ(::mkfifo((m_machine + "/matrix.json").c_str(), 0600), 0);
    EXPECT_EQ(plan("codex", "plan", "review", "0.171.0").exit_code, to_int(ExitCode::bad_data));
    fs::remove(m_machine + "/matrix.json");
    for (const std::string& config :
         {m_project + "/sonata.toml", m_project + "/.sonata/config.toml"}) {
        fs::create_directories(m_project + "/.sonata");
        ASSERT_EQ(::mkfifo(config.c_str(), 0600), 0);
        const auto run = plan("codex", "plan", "review", "0.171.0");
        EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << config << ": " << run.err;
        EXPECT_NE(run.err.find("not a regular file"), std::string::npos) << run.err;
        fs::remove(config);
    }
}

TEST_F(HostileInputs, InitNeverEditsThroughASymlinkOutOfTheProject) {
    const std::string outside = m_dir.make_dir("elsewhere");
    write_text(outside + "/settings.json", "{\"model\": \"opus\"}\n");
    for (const bool link_dir : {true, false}) {
        fs::remove_all(m_project + "/.claude");
        if (link_dir) {
            fs::create_directory_symlink(outside, m_project + "/.claude");
        } else {
            fs::create_directories(m_project + "/.claude");
            fs::create_symlink(outside + "/settings.json", m_project + "/.claude/settings.json");
        }
        const auto run = sonata({"init", "--yes"});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << run.out;
        EXPECT_NE(run.err.find("leads out of the project"), std::string::npos) << run.err;
        EXPECT_EQ(read_text(outside + "/settings.json"), "{\"model\": \"opus\"}\n");
        EXPECT_FALSE(fs::exists(m_project + "/sonata.toml"));
    }
}

TEST_F(HostileInputs, InitRefusesWhatItCannotRewriteFaithfully) {
    const std::string settings = m_project + "/.claude/settings.json";
    std::string nested = "{\n\"x\": ";
    for (int i = 0; i < 500; ++i)
        nested += "[\n";
    for (int i = 0; i < 500; ++i)
        nested += "]\n";
    nested += "}\n";
    for (const std::string& text :
         {std::string("{\n  \"big\": 12345678901234567890123\n}\n"),
          std::string("{\n  \"precise\": 0.1000000000000000000001\n}\n"), nested}) {
        write_text(settings, text);
        const auto run = sonata({"init", "--yes"});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << text.substr(0, 40);
        EXPECT_EQ(read_text(settings), text);
    }
    // Numbers whose value survives (as the same decimal) are fine, and one line stays one line.
    write_text(settings, R"({"n":12345678901234567890,"f":0.5,"e":1.5e3,"neg":-0})");
    const auto run = sonata({"init", "--yes"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::string after = read_text(settings);
    EXPECT_EQ(after.find('\n'), std::string::npos) << after;
    EXPECT_NE(after.find("\"n\":12345678901234567890,"), std::string::npos) << after;
}

TEST_F(HostileInputs, AnUnreadableMachineConfigIsAnErrorNotNoData) {
    if (::geteuid() == 0 && !fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "root without setpriv";
    const std::vector<std::string> as_nobody =
        ::geteuid() == 0 ? std::vector<std::string>{"/usr/bin/setpriv", "--reuid=65534",
                                                    "--regid=65534", "--clear-groups", "--"}
                         : std::vector<std::string>{};
    fs::permissions(m_dir.path(),
                    fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
    fs::create_directories(m_machine);
    write_text(m_machine + "/config.toml", "gate = \"strict\"\n");
    fs::remove_all(m_project);
    const std::string cwd = m_dir.make_dir("elsewhere");
    fs::permissions(m_dir.path() + "/xdg", fs::perms::all);
    fs::permissions(m_dir.path() + "/xdg/config", fs::perms::all);
    const auto args = std::vector<std::string>{"plan",   "--harness", "codex",  "--mode",
                                               "plan",   "--role",    "review", "--harness-version",
                                               "0.171.0"};
    fs::permissions(m_machine, fs::perms::all);
    const auto readable = run_sonata(args, m_env, cwd, std::nullopt, as_nobody);
    EXPECT_EQ(readable.exit_code, to_int(ExitCode::refused))
        << "control: strict refuses unmeasured\n"
        << readable.err;
    fs::permissions(m_machine, fs::perms::none);
    const auto run = run_sonata(args, m_env, cwd, std::nullopt, as_nobody);
    fs::permissions(m_machine, fs::perms::owner_all);
    EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << run.out << run.err;
    EXPECT_NE(run.err.find("cannot be examined"), std::string::npos) << run.err;
}

TEST_F(HostileInputs, NoUsableHomeIsAClearErrorNotARootPath) {
    const auto args = std::vector<std::string>{"plan",  "--harness", "gemini", "--mode",
                                               "plan",  "--role",    "review", "--harness-version",
                                               "0.61.0"};
    Environment no_home = m_env;
    no_home.erase("HOME");
    no_home.erase("XDG_CONFIG_HOME");
    auto run = run_sonata(args, no_home, m_project);
    EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << run.out;
    EXPECT_NE(run.err.find("neither HOME nor XDG_CONFIG_HOME is set"), std::string::npos)
        << run.err;
    Environment relative = m_env;
    relative["XDG_CONFIG_HOME"] = "cfg";
    run = run_sonata(args, relative, m_project);
    EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << run.out;
    EXPECT_NE(run.err.find("XDG_CONFIG_HOME is a relative path"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(m_project + "/cfg"));
}

TEST_F(HostileInputs, MatrixNumbersOutOfRangeAreBadData) {
    for (const std::string& evidence :
         {std::string(R"("duration_ms":9223372036854775000)"), std::string(R"("duration_ms":-5)"),
          std::string(R"("duration_ms":1.5)"), std::string(R"("exit_code":4294967296)")}) {
        write_text(
            m_dir.path() + "/m.json",
            R"({"schema":1,"cells":[{"harness":"codex","version":"1","probe":"p","mode":"plan",)"
            R"("role":"read-only","verdict":"enforced","evidence":{)" +
                evidence + "}}]}");
        const auto run = sonata({"report", "--format", "junit", m_dir.path() + "/m.json"});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << evidence << "\n" << run.out;
    }
}

TEST_F(HostileInputs, ConfigValuesOfTheWrongTypeAreRefused) {
    write_text(m_project + "/sonata.toml", "gate = \"warn\"\nsession_max_age_seconds = true\n");
    const auto run = plan("codex", "plan", "review", "0.171.0");
    EXPECT_EQ(run.exit_code, to_int(ExitCode::config));
    EXPECT_EQ(run.err.rfind("sonata: error: " + m_project +
                                "/sonata.toml:2: 'session_max_age_seconds' must be",
                            0),
              0U)
        << run.err;
}

} // namespace hostile_inputs_test
} // namespace sonata
