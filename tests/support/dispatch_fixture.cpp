#include "tests/support/dispatch_fixture.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/support/nothing_left.hpp"

namespace sonata::testing {

void DispatchFixture::use_stand_in(const std::vector<std::string>& harnesses,
                                   const std::string& program, const std::string& extra) {
    std::string toml = extra;
    for (const auto& id : harnesses)
        toml += "[harnesses." + id + "]\npath = \"" + program + "\"\n";
    write_machine_config(toml);
}

void DispatchFixture::write_machine_config(const std::string& toml) {
    std::filesystem::create_directories(m_project + "/.sonata");
    write_text(m_env.at("XDG_CONFIG_HOME") + "/sonata/config.toml", toml);
}

SonataRun DispatchFixture::sonata(const std::vector<std::string>& args,
                                  const std::optional<std::string>& in) {
    return run_sonata(args, m_env, m_project, in, {"/usr/bin/timeout", "120"});
}

SonataRun DispatchFixture::dispatch(const std::string& harness, const std::string& role,
                                    const std::string& mode, const std::string& task,
                                    const std::vector<std::string>& extra) {
    std::vector<std::string> args{"dispatch", "--harness", harness,  "--role", role,
                                  "--mode",   mode,        "--task", task,     "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return sonata(args);
}

std::string DispatchFixture::start(const std::string& harness, const std::string& mode,
                                   const std::string& task) {
    const auto started =
        sonata({"run", "--harness", harness, "--role", "code", "--mode", mode, "--task", task});
    EXPECT_EQ(started.exit_code, 0) << started.err;
    return started.out.substr(0, started.out.find('\n'));
}

nlohmann::json DispatchFixture::receipt_of(const SonataRun& run) {
    return json::parse(run.out).at("receipt");
}

nlohmann::json DispatchFixture::status(const std::string& id) {
    return json::parse(sonata({"status", id, "--json"}).out);
}

nlohmann::json DispatchFixture::await(const std::string& id,
                                      const std::function<bool(const json&)>& ready) {
    json r;
    for (int i = 0; i < 200; ++i) {
        r = status(id);
        if (ready(r)) return r;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "the run never got there: " << r.dump(2);
    return r;
}

std::string DispatchFixture::run_dir(const std::string& id) const {
    return m_project + "/.sonata/runs/" + id;
}

void DispatchFixture::expect_nothing_left(std::optional<int> tmux_server) {
    sonata::testing::expect_nothing_left(m_dir.path(), tmux_server);
}

void DispatchFixture::init_git_project() {
    m_env["GIT_AUTHOR_NAME"] = m_env["GIT_COMMITTER_NAME"] = "user";
    m_env["GIT_AUTHOR_EMAIL"] = m_env["GIT_COMMITTER_EMAIL"] = "user@example.com";
    git({"init", "--quiet", "-b", "main"});
    write_text(m_project + "/a.txt", "one\n");
    write_text(m_project + "/.gitignore", ".sonata/\n");
    git({"add", "-A"});
    git({"commit", "--quiet", "-m", "first"});
}

std::string DispatchFixture::git(const std::vector<std::string>& args) {
    return git_in(m_project, args, m_env);
}

} // namespace sonata::testing
