// The fixture of every test that dispatches through the real sonata binary: a hermetic scratch
// home and project, harnesses pointed at a stand-in program by the machine config, a `sonata()`
// runner, the receipt a --json dispatch prints, and the check that nothing a run started is left.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::testing {

class DispatchFixture : public ::testing::Test {
protected:
    using json = nlohmann::json;

    ScratchDir m_dir;
    Environment m_env = hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");

    /// Writes the machine config (a project's may not name a program): each of `harnesses` runs
    /// `program`, after `extra` (top-level keys come before the first table). The project is
    /// marked by its .sonata/.
    void use_stand_in(const std::vector<std::string>& harnesses, const std::string& program,
                      const std::string& extra = "");
    /// Writes `toml` as the machine config and marks the project.
    void write_machine_config(const std::string& toml);

    /// `sonata args...` in the project, killed after 120 s.
    SonataRun sonata(const std::vector<std::string>& args,
                     const std::optional<std::string>& in = std::nullopt);
    /// `sonata dispatch --harness H --role R --mode M --task T --json` and `extra`.
    SonataRun dispatch(const std::string& harness, const std::string& role, const std::string& mode,
                       const std::string& task, const std::vector<std::string>& extra = {});
    /// `sonata run` of `task` by `harness` in the code role: the id it printed.
    std::string start(const std::string& harness, const std::string& mode, const std::string& task);
    /// The receipt a --json dispatch or wait printed.
    static json receipt_of(const SonataRun& run);
    /// `sonata status ID --json`.
    json status(const std::string& id);
    /// Waits until the run's receipt satisfies `ready` (at most 20 s); a failure when it never
    /// does.
    json await(const std::string& id, const std::function<bool(const json&)>& ready);
    std::string run_dir(const std::string& id) const;

    /// Makes the project a git repository, as a user's with a git identity in the environment:
    /// branch main, one commit of a.txt ("one") and a .gitignore of .sonata/.
    void init_git_project();
    /// `git ARGS` in the project; its output.
    std::string git(const std::vector<std::string>& args);

    /// Nothing a run started runs: no process under the scratch directory, and, for a TUI run
    /// (`tmux_server`), its private tmux server (whose working directory is elsewhere) is gone.
    void expect_nothing_left(std::optional<int> tmux_server = std::nullopt);
};

} // namespace sonata::testing
