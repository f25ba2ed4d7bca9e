#include "tests/support/claude_tui.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>

#include "core/tmux.hpp"
#include "dispatch/tui_driver.hpp"

namespace sonata::testing {
namespace {

using std::chrono::seconds;

/// Claude Code 2.1.332's screen: its footer shows the shortcut hint while the input box is empty
/// and no turn runs (in default mode; in the other modes the mode and how to cycle it; while a
/// background task runs, the tasks and how to manage them instead), and the box's line starts
/// with "❯" and a no-break space.
adapters::ScreenPatterns claude_screen() {
    adapters::ScreenPatterns patterns;
    patterns.ready = {"? for shortcuts", "(shift+tab to cycle)", "↓ to manage"};
    patterns.input_marker = "❯\u00a0";
    return patterns;
}

/// The footer says the input box waits and no turn runs ("esc to interrupt" shows while one does).
bool idle(const std::string& screen) {
    return dispatch::screen_shows(screen, claude_screen().ready) &&
           screen.find("esc to interrupt") == std::string::npos;
}

/// The screen once `matches` holds for it; nullopt, with a failure naming `what` and the last
/// screen, when `bound` passes or the pane exits first.
std::optional<std::string> await_screen(TmuxSession& session, std::string_view what, seconds bound,
                                        const std::function<bool(const std::string&)>& matches) {
    const auto wait = session.wait_until(matches, bound);
    if (!wait) {
        ADD_FAILURE() << what << ": " << wait.error().message;
        return std::nullopt;
    }
    if (wait->matched) return wait->screen;
    const auto status = session.status();
    const bool exited = status && status->exited;
    ADD_FAILURE() << "claude's TUI: " << what << " did not happen within " << bound.count() << " s"
                  << (exited ? " (claude exited " + std::to_string(status->exit_code) + ")" : "")
                  << "; the last screen:\n"
                  << wait->screen;
    return std::nullopt;
}

/// Types `text` and sends Enter once the input box shows it; false (a failure) when it did not.
bool submit(TmuxSession& session, const std::string& text) {
    const auto typed = session.type_text(text);
    EXPECT_TRUE(typed) << typed.error().message;
    const auto shown =
        typed &&
        await_screen(session, "the typed \"" + text + "\"", seconds(10), [&](const std::string& s) {
            return dispatch::typed_text_waits(s, claude_screen(), text);
        });
    if (!shown) return false;
    const auto sent = session.send_keys({"Enter"});
    EXPECT_TRUE(sent) << sent.error().message;
    return bool(sent);
}

/// Waits up to 300 s for `tui.finished`, pressing what `tui.respond` says at each screen that
/// asks for it; false (a failure) when it did not finish.
bool await_finish(TmuxSession& session, const ClaudeTui& tui) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(300);
    std::vector<std::string> keys;
    for (;;) {
        const auto left =
            std::chrono::duration_cast<seconds>(deadline - std::chrono::steady_clock::now());
        const auto screen =
            await_screen(session, "the model's final answer", std::max(left, seconds(1)),
                         [&](const std::string& s) {
                             keys = tui.respond ? tui.respond(s) : std::vector<std::string>{};
                             return tui.finished() || !keys.empty();
                         });
        if (!screen) return false;
        if (keys.empty()) return true;
        const auto sent = session.send_keys(keys);
        EXPECT_TRUE(sent) << sent.error().message;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
}

/// From the started TUI to its end; `out.out` gets the screen the finished turn left. False
/// (with a failure) when a step did not happen in its time.
bool drive(TmuxSession& session, const ClaudeTui& tui, SonataRun& out) {
    // Start-up is over (the MCP servers connected) once the footer shows the idle hint.
    if (!await_screen(session, "the input box", seconds(60), idle)) return false;
    if (!tui.prompt.empty() && !submit(session, tui.prompt)) return false;
    if (!await_finish(session, tui)) return false;
    const auto turn = await_screen(session, "the end of the turn", seconds(60), [&](const auto& s) {
        return s.find(tui.final_text) != std::string::npos && idle(s);
    });
    if (!turn) return false;
    out.out = *turn;
    if (tui.end == TuiEnd::close_terminal) return true; // run_claude_tui's session closes it
    if (!submit(session, "/exit")) return false;
    const auto status = session.wait_for_exit(seconds(30));
    if (status && status->exited) {
        out.exit_code = status->exit_code;
        return true;
    }
    const auto screen = session.capture();
    ADD_FAILURE() << "claude's TUI did not exit within 30 s of /exit"
                  << (status ? "" : " (" + status.error().message + ")") << "; the last screen:\n"
                  << (screen ? *screen : screen.error().message);
    return false;
}

} // namespace

bool run_claude_tui(const ClaudeTui& tui, SonataRun& out, int& tmux_server) {
    auto runner = make_system_runner();
    TmuxSpec spec;
    spec.argv = tui.argv;
    spec.env = tui.env;
    spec.cwd = tui.cwd;
    spec.socket_dir = tui.socket_dir;
    auto session = TmuxSession::start(*runner, spec);
    if (!session) {
        ADD_FAILURE() << "tmux: " << session.error().message;
        return false;
    }
    tmux_server = (*session)->server_pid();
    const bool driven = drive(**session, tui, out);
    // The TUI draws on the alternate screen: what stays in the pane after it is what claude printed
    // on exit.
    if (auto history = (*session)->capture_history()) out.out += *history;
    return driven;
}

} // namespace sonata::testing
