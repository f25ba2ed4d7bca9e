// What a cloned repository holds may narrow what sonata does, never widen it or run anything,
// against the real binary: a sonata.toml naming the repository's own program as a harness (or a
// harness's arguments, or a looser gate), a nested directory whose planted session file claims a
// wider parent mode than the hook recorded, and a dispatch of a harness that is not installed,
// which is refused before anything starts.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/session.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::run_sonata;
using testing::SonataRun;
using testing::write_text;

const std::vector<std::string> k_bounded{"/usr/bin/timeout", "120"};

std::int64_t now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

class UntrustedWorkspace : public ::testing::Test {
protected:
    testing::ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");
    std::string m_machine = m_dir.path() + "/xdg/config/sonata";
    /// The planted program creates this when it runs.
    std::string m_marker = m_dir.path() + "/planted-program-ran";

    SonataRun sonata(const std::vector<std::string>& args) {
        return run_sonata(args, m_env, m_project, std::nullopt, k_bounded);
    }

    /// The repository's own program, answering a version command as a harness would.
    void plant_program(const std::string& relative) {
        const std::string path = m_project + "/" + relative;
        write_text(path, "#!/bin/sh\necho ran >> '" + m_marker + "'\necho 1.0.0\n");
        fs::permissions(path, fs::perms::owner_all);
    }

    /// grok is the stand-in harness, configured where only the user configures programs.
    void machine_config() {
        write_text(m_machine + "/config.toml",
                   "[harnesses.grok]\npath = \"" + std::string(SONATA_DISPATCH_HARNESS) + "\"\n");
    }
};

std::string untrusted_key_error(const std::string& file, int line, const std::string& key) {
    return "sonata: error: " + file + ":" + std::to_string(line) + ": '" + key +
           "': a project's config comes with its repository, which sonata does not trust to "
           "choose a program or a harness's arguments; set it in your machine config "
           "($XDG_CONFIG_HOME/sonata/config.toml, by default ~/.config/sonata/config.toml)\n";
}

// Cause 1: `plan`, `dispatch`, `harnesses` and `doctor` ran a repository's `tools/pi` (its
// version command, then the run) when the repository's sonata.toml named it.
TEST_F(UntrustedWorkspace, AProjectConfigNamingAProgramIsAnErrorAndTheProgramNeverRuns) {
    plant_program("tools/pi");
    for (const std::string file : {"sonata.toml", ".sonata/config.toml"}) {
        fs::remove_all(m_project + "/.sonata");
        fs::remove(m_project + "/sonata.toml");
        write_text(m_project + "/" + file,
                   "gate = \"warn\"\n[harnesses.pi]\npath = \"tools/pi\"\n");
        const std::string error =
            untrusted_key_error(m_project + "/" + file, 3, "harnesses.pi.path");
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"plan", "--harness", "pi", "--role", "code"},
              std::vector<std::string>{"dispatch", "--harness", "pi", "--role", "code", "--mode",
                                       "acceptEdits", "--task", "hello"},
              std::vector<std::string>{"run", "--harness", "pi", "--role", "code", "--mode",
                                       "acceptEdits", "--task", "hello"},
              std::vector<std::string>{"harnesses"}}) {
            const auto run = sonata(args);
            EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << args[0] << "\n" << run.out;
            EXPECT_EQ(run.err, error) << args[0];
        }
        const auto doctor = sonata({"doctor", "--json"});
        EXPECT_EQ(doctor.exit_code, 1) << doctor.out;
        EXPECT_NE(doctor.out.find("harnesses.pi.path': a project's config comes with its "
                                  "repository"),
                  std::string::npos)
            << doctor.out;
    }
    EXPECT_FALSE(fs::exists(m_marker)) << "the repository's program ran";
}

// A harness's args can load what the repository holds (an extension, an MCP server) as surely as a
// path can name its program: a project's config may not set them either, whatever the flag.
TEST_F(UntrustedWorkspace, AProjectConfigSettingAHarnessesArgsIsAnErrorNamingFileLineAndKey) {
    write_text(m_project + "/sonata.toml",
               "[harnesses.codex]\nmax_concurrent = 1\nargs = [\"-c\", \"model=\\\"o3\\\"\"]\n");
    const auto run =
        sonata({"plan", "--harness", "codex", "--role", "code", "--harness-version", "0.171.0"});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << run.out;
    EXPECT_EQ(run.err, untrusted_key_error(m_project + "/sonata.toml", 3, "harnesses.codex.args"));
}

// Harness programs come from the user's own config, which a project's config no longer hides; a
// relative path there would still name a program in whatever directory sonata runs in.
TEST_F(UntrustedWorkspace, HarnessPathsComeFromTheMachineConfigAndOnlyAsAbsolutePaths) {
    machine_config();
    write_text(m_project + "/sonata.toml",
               "[roles.helper]\nkind = \"write\"\nharness = \"grok\"\n");
    const json listed = json::parse(sonata({"harnesses", "--json"}).out);
    json grok;
    for (const auto& h : listed)
        if (h.at("id") == "grok") grok = {{"installed", h.at("installed")}, {"path", h.at("path")}};
    EXPECT_EQ(grok, json({{"installed", true}, {"path", SONATA_DISPATCH_HARNESS}}));

    plant_program("tools/pi");
    write_text(m_machine + "/config.toml", "[harnesses.pi]\npath = \"tools/pi\"\n");
    const auto run = sonata({"harnesses"});
    EXPECT_EQ(run.exit_code, to_int(ExitCode::config)) << run.out;
    EXPECT_EQ(run.err, "sonata: error: " + m_machine +
                           "/config.toml:2: 'harnesses.pi.path' must be an absolute path: a "
                           "relative one would name a program in whatever directory sonata runs "
                           "in\n");
    EXPECT_FALSE(fs::exists(m_marker)) << "the repository's program ran";
}

// A project's `gate = "warn"` hid the user's `gate = "strict"`: an unprobed mapping ran.
TEST_F(UntrustedWorkspace, AProjectConfigCannotLoosenTheMachinesGateBudgetOrSessionAge) {
    write_text(m_machine + "/config.toml",
               "gate = \"strict\"\nbudget = \"strict\"\nsession_max_age_seconds = 60\n");
    write_text(m_project + "/sonata.toml",
               "gate = \"warn\"\nbudget = \"warn\"\nsession_max_age_seconds = 604800\n");
    const auto gated = sonata({"plan", "--harness", "codex", "--role", "review", "--mode", "plan",
                               "--harness-version", "0.171.0"});
    EXPECT_EQ(gated.exit_code, to_int(ExitCode::refused)) << gated.out << gated.err;
    const auto budget =
        sonata({"plan", "--harness", "grok", "--role", "code", "--mode", "acceptEdits",
                "--harness-version", "1.0.0", "--max-budget-usd", "0.5"});
    EXPECT_EQ(budget.exit_code, to_int(ExitCode::refused)) << budget.out << budget.err;

    write_text(m_machine + "/config.toml", "session_max_age_seconds = 60\n");
    write_text(m_project + "/.sonata/session-s1.json",
               session_record_to_json({"s1", Mode::bypass_permissions, now() - 3600}));
    const auto aged = sonata({"plan", "--harness", "claude", "--role", "code", "--session", "s1",
                              "--harness-version", "2.1.197", "--json"});
    ASSERT_EQ(aged.exit_code, 0) << aged.err;
    const json doc = json::parse(aged.out);
    EXPECT_EQ(json({{"parent_mode", doc.at("parent_mode")}, {"mode_stale", doc.at("mode_stale")}}),
              json({{"parent_mode", "default"}, {"mode_stale", true}}));
}

} // namespace
} // namespace sonata
