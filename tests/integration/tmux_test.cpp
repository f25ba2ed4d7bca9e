// TmuxSession against real tmux and sonata_test_child: a private server with a clean environment,
// argv without a shell, literal typing and named keys, pane exit status, and nothing left behind.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <map>
#include <ostream>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/process.hpp"
#include "core/tmux.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sonata {
namespace tmux_test {

using std::chrono::milliseconds;
using testing::ScratchDir;

const std::string k_child = SONATA_TEST_CHILD;

/// The lines of a capture, without the blank rows below the last printed line.
std::vector<std::string> printed_lines(const std::string& screen) {
    std::vector<std::string> lines;
    std::istringstream in(screen);
    std::string line;
    while (std::getline(in, line))
        lines.push_back(line);
    while (!lines.empty() && lines.back().empty())
        lines.pop_back();
    return lines;
}

std::function<bool(const std::string&)> contains(const std::string& needle) {
    return [needle](const std::string& screen) { return screen.find(needle) != std::string::npos; };
}

} // namespace tmux_test

void PrintTo(const PaneStatus& s, std::ostream* os) {
    *os << "{exited " << s.exited << ", exit " << s.exit_code << ", signal " << s.term_signal
        << "}";
}

namespace tmux_test {

class TmuxTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!search_path("tmux", "/usr/bin:/bin")) GTEST_SKIP() << "tmux is not installed";
    }

    TmuxSpec spec(std::vector<std::string> args) const {
        TmuxSpec spec;
        spec.argv = {k_child};
        spec.argv.insert(spec.argv.end(), args.begin(), args.end());
        spec.env = testing::hermetic_env(m_scratch);
        spec.cwd = m_scratch.make_dir("work");
        spec.socket_dir = m_scratch.make_dir("sockets");
        return spec;
    }

    std::unique_ptr<TmuxSession> start(const TmuxSpec& spec) {
        auto session = TmuxSession::start(*m_runner, spec);
        if (!session) ADD_FAILURE() << "tmux session did not start: " << session.error().message;
        return session ? std::move(*session) : nullptr;
    }

    ScratchDir m_scratch;
    std::unique_ptr<ProcessRunner> m_runner = make_system_runner();
};

TEST_F(TmuxTest, PaneGetsTheGivenEnvironmentAndOnlyWhatTmuxAdds) {
    auto request = spec({"env"});
    request.env["SPACED"] = "a b;";
    const std::vector<std::string> tmux_keys{
        "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TMUX", "TMUX_PANE", "PWD", "SHELL"};
    // `env` exits within milliseconds: tmux 3.3a may lose lines it printed while it still set the
    // pane up (see ArgvAndWorkingDirectoryReachThePaneVerbatim). A run missing lines is started
    // again, at most twice; what it printed is still compared whole.
    std::map<std::string, std::string> seen;
    for (int attempt = 0; attempt < 3; ++attempt) {
        auto session = start(request);
        ASSERT_TRUE(session);
        EXPECT_EQ(*session->wait_for_exit(milliseconds(10'000)), (PaneStatus{true, 0, 0}));
        seen.clear();
        for (const auto& line : printed_lines(*session->capture_history())) {
            const auto eq = line.find('=');
            ASSERT_NE(eq, std::string::npos) << line;
            seen[line.substr(0, eq)] = line.substr(eq + 1);
        }
        const bool whole = std::all_of(tmux_keys.begin(), tmux_keys.end(),
                                       [&](const std::string& key) { return seen.count(key); });
        if (whole) break;
    }
    auto expected = request.env;
    for (const std::string& key : tmux_keys) {
        ASSERT_EQ(seen.count(key), 1U) << key;
        expected[key] = seen[key]; // tmux's own; checked below where they are predictable
    }
    EXPECT_EQ(seen, expected);
    EXPECT_EQ(seen["PWD"], request.cwd);
    EXPECT_EQ(seen["TMUX"].rfind(request.socket_dir + "/", 0), 0U) << seen["TMUX"];
}

TEST_F(TmuxTest, ArgvAndWorkingDirectoryReachThePaneVerbatim) {
    // A child that prints and exits within milliseconds can end while tmux 3.3a still sets the
    // pane up (the race status() works around for the exit status); its output is then lost
    // with it, seen in fresh-clone CI runs under load: all of it, or all after its first line. Such
    // a run has printed a strict beginning of what it should (perhaps nothing), and is started
    // again; what a pane prints is still compared whole, and a wrong line is never retried.
    const auto lines_of = [this](const TmuxSpec& request, const std::vector<std::string>& want) {
        std::vector<std::string> lines;
        const auto cut_short = [&] {
            return lines.size() < want.size() &&
                   std::equal(lines.begin(), lines.end(), want.begin());
        };
        for (int attempt = 0; attempt < 3 && cut_short(); ++attempt) {
            auto session = start(request);
            EXPECT_TRUE(session);
            if (!session) return lines;
            EXPECT_EQ(*session->wait_for_exit(milliseconds(10'000)), (PaneStatus{true, 0, 0}));
            lines = printed_lines(*session->capture_history());
        }
        return lines;
    };
    const std::vector<std::string> args = {"args", "two words", "ends;", "ends\\;", "#{pid}", "-t"};
    std::vector<std::string> expected = {k_child};
    expected.insert(expected.end(), args.begin(), args.end());
    EXPECT_EQ(lines_of(spec(args), expected), expected);

    auto request = spec({"cwd"});
    request.cwd = m_scratch.make_dir("odd #{pid} dir;");
    const std::vector<std::string> cwd_line{request.cwd};
    EXPECT_EQ(lines_of(request, cwd_line), cwd_line);
}

TEST_F(TmuxTest, OneElementArgvIsExecutedNotHandedToAShell) {
    const std::string odd_dir = m_scratch.make_dir("dir with $(exit 99) in it");
    const std::string program = odd_dir + "/child";
    std::filesystem::create_symlink(k_child, program);
    auto request = spec({});
    request.argv = {program};
    auto session = start(request);
    ASSERT_TRUE(session);
    EXPECT_EQ(*session->wait_for_exit(milliseconds(10'000)), (PaneStatus{true, 64, 0}));
}

TEST_F(TmuxTest, ExitStatusAndSignalOfThePane) {
    auto session = start(spec({"exit", "7"}));
    ASSERT_TRUE(session);
    EXPECT_EQ(*session->wait_for_exit(milliseconds(10'000)), (PaneStatus{true, 7, 0}));

    session = start(spec({"signal", "9"}));
    ASSERT_TRUE(session);
    EXPECT_EQ(*session->wait_for_exit(milliseconds(10'000)), (PaneStatus{true, 137, 9}));

    session = start(spec({"sleep"}));
    ASSERT_TRUE(session);
    EXPECT_EQ(*session->status(), (PaneStatus{false, -1, 0}));
}

TEST_F(TmuxTest, TypesLiteralTextThenNamedKeys) {
    auto session = start(spec({"prompt"}));
    ASSERT_TRUE(session);
    ASSERT_TRUE(session->wait_until(contains("ready>"), milliseconds(10'000))->matched);
    const std::string text = "Enter C-d; $HOME 'q' ends;";
    ASSERT_TRUE(session->type_text(text));
    ASSERT_TRUE(session->send_keys({"Enter"}));
    const auto got = session->wait_until(contains("got:"), milliseconds(10'000));
    ASSERT_TRUE(got->matched) << got->screen;
    EXPECT_EQ(printed_lines(got->screen),
              (std::vector<std::string>{"ready> " + text, "got:" + text}));
    EXPECT_EQ(*session->wait_for_exit(milliseconds(10'000)), (PaneStatus{true, 0, 0}));
}

TEST_F(TmuxTest, ControlDEndsInput) {
    auto session = start(spec({"stdin"}));
    ASSERT_TRUE(session);
    ASSERT_TRUE(session->type_text("abc"));
    ASSERT_TRUE(session->send_keys({"Enter", "C-d"}));
    EXPECT_EQ(*session->wait_for_exit(milliseconds(10'000)), (PaneStatus{true, 0, 0}));
    EXPECT_EQ(printed_lines(*session->capture()), (std::vector<std::string>{"abc", "abc"}));
}

TEST_F(TmuxTest, WaitUntilGivesUpAtTheTimeoutOrWhenThePaneDies) {
    auto session = start(spec({"sleep"}));
    ASSERT_TRUE(session);
    auto begin = std::chrono::steady_clock::now();
    auto waited = session->wait_until(contains("never shown"), milliseconds(400));
    EXPECT_FALSE(waited->matched);
    EXPECT_EQ(waited->screen.rfind("pid=", 0), 0U) << waited->screen;
    EXPECT_GE(std::chrono::steady_clock::now() - begin, milliseconds(400));

    session = start(spec({"exit", "0"}));
    ASSERT_TRUE(session);
    begin = std::chrono::steady_clock::now();
    waited = session->wait_until(contains("never shown"), milliseconds(20'000));
    EXPECT_FALSE(waited->matched);
    EXPECT_LT(std::chrono::steady_clock::now() - begin, milliseconds(5'000));
}

TEST_F(TmuxTest, DestructorLeavesNothingBehind) {
    const auto request = spec({"ignore-term"}); // also ignores the SIGHUP of a closing terminal
    auto session = start(request);
    ASSERT_TRUE(session);
    ASSERT_TRUE(session->wait_until(contains("pid="), milliseconds(10'000))->matched);
    const int server = session->server_pid();
    const int pane = session->pane_pid();
    const std::string socket =
        request.socket_dir + "/tmux-" + std::to_string(::getuid()) + "/" + session->socket_name();
    ASSERT_GT(server, 0);
    ASSERT_GT(pane, 0);
    EXPECT_EQ(session->socket_name().rfind("sonata-", 0), 0U);
    ASSERT_TRUE(std::filesystem::exists(socket));

    session.reset();
    errno = 0;
    EXPECT_EQ(::kill(server, 0), -1);
    EXPECT_EQ(errno, ESRCH);
    errno = 0;
    EXPECT_EQ(::kill(-pane, 0), -1);
    EXPECT_EQ(errno, ESRCH);
    EXPECT_FALSE(std::filesystem::exists(socket));
}

TEST_F(TmuxTest, MissingProgramIsAnError) {
    auto request = spec({});
    request.argv = {"/nonexistent/program"};
    const auto session = TmuxSession::start(*m_runner, request);
    ASSERT_FALSE(session);
    EXPECT_EQ(session.error().message, "cannot start '/nonexistent/program' in tmux: not found");
}

} // namespace tmux_test
} // namespace sonata
