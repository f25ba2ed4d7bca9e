// `sonata plan` taking the parent's mode from a session file: --mode wins, then --session or
// $CLAUDE_CODE_SESSION_ID (project .sonata/ first, then the machine dir), then default. Stale files
// only narrow; corrupt files and hostile ids are errors. The real binary, its own HOME and cwd.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/session.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

using json = nlohmann::json;
using testing::run_sonata;
using testing::ScratchDir;
using testing::SonataRun;
using testing::write_text;

std::int64_t now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

class SessionLookup : public ::testing::Test {
protected:
    ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");
    std::string m_machine = m_dir.path() + "/xdg/config/sonata";

    void SetUp() override {
        write_text(m_project + "/sonata.toml", "session_max_age_seconds = 600\n");
    }

    std::string project_file(const std::string& id) {
        return m_project + "/.sonata/session-" + id + ".json";
    }
    std::string machine_file(const std::string& id) {
        return m_machine + "/session-" + id + ".json";
    }

    static void put(const std::string& path, const std::string& id, Mode mode,
                    std::int64_t age_seconds = 5) {
        write_text(path, session_record_to_json({id, mode, now() - age_seconds}));
    }

    SonataRun plan(std::vector<std::string> extra, const std::string& cwd = {}) {
        std::vector<std::string> args{"plan", "--harness",         "claude",  "--role",
                                      "code", "--harness-version", "2.1.197", "--json"};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_sonata(args, m_env, cwd.empty() ? m_project : cwd);
    }

    /// The mode-related part of plan's JSON, as one value.
    static json mode_view(const SonataRun& run) {
        const json doc = json::parse(run.out);
        return {{"parent_mode", doc.at("parent_mode")},
                {"mode_source", doc.at("mode_source")},
                {"session_id", doc.at("session_id")},
                {"session_file", doc.at("session_file")},
                {"mode_stale", doc.at("mode_stale")}};
    }

    static std::vector<std::string> session_warnings(const SonataRun& run) {
        std::vector<std::string> found;
        const json doc = json::parse(run.out); // a range-for over parse(...).at() would dangle
        for (const auto& warning : doc.at("warnings")) {
            const auto text = warning.get<std::string>();
            if (text.find("session") != std::string::npos) found.push_back(text);
        }
        return found;
    }

    static json view(const char* mode, const char* source, const json& id, const json& file,
                     bool stale) {
        return {{"parent_mode", mode},
                {"mode_source", source},
                {"session_id", id},
                {"session_file", file},
                {"mode_stale", stale}};
    }
};

// The caller of plan is the parent's model: --mode may narrow the session's mode, never widen it.
TEST_F(SessionLookup, ModeFlagOnlyNarrowsTheSessionFile) {
    put(project_file("s1"), "s1", Mode::plan);
    auto run = plan({"--mode", "bypassPermissions", "--session", "s1"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("plan", "session-file", "s1", project_file("s1"), false));
    EXPECT_EQ(session_warnings(run),
              std::vector<std::string>{"--mode bypassPermissions is wider than session s1's plan; "
                                       "--mode may only narrow, so plan is used"});
    put(project_file("s2"), "s2", Mode::accept_edits);
    run = plan({"--mode", "plan", "--session", "s2"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("plan", "--mode", "s2", project_file("s2"), false));
}

TEST_F(SessionLookup, ModeFlagWithAKnownSessionButNoFileNarrowsDefault) {
    m_env["CLAUDE_CODE_SESSION_ID"] = "no-file";
    const auto run = plan({"--mode", "bypassPermissions"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("default", "default", "no-file", nullptr, false));
}

TEST_F(SessionLookup, ModeFlagWithNoSessionIsTakenAsGiven) {
    const auto run = plan({"--mode", "acceptEdits"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("acceptEdits", "--mode", nullptr, nullptr, false));
}

TEST_F(SessionLookup, ASessionFileDatedInTheFutureIsStale) {
    put(project_file("future"), "future", Mode::bypass_permissions, -3600);
    const auto run = plan({"--session", "future"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run),
              view("default", "session-file", "future", project_file("future"), true));
    put(project_file("skew"), "skew", Mode::accept_edits, -20); // within the clock skew allowed
    const auto skewed = plan({"--session", "skew"});
    EXPECT_EQ(mode_view(skewed),
              view("acceptEdits", "session-file", "skew", project_file("skew"), false));
}

TEST_F(SessionLookup, SessionFlagReadsTheProjectFile) {
    put(project_file("s1"), "s1", Mode::accept_edits);
    const auto run = plan({"--session", "s1"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("acceptEdits", "session-file", "s1", project_file("s1"), false));
    EXPECT_EQ(session_warnings(run), std::vector<std::string>{});
}

TEST_F(SessionLookup, EnvironmentVariableNamesTheSessionAndTheFlagOverridesIt) {
    put(project_file("from-env"), "from-env", Mode::plan);
    put(project_file("from-flag"), "from-flag", Mode::accept_edits);
    m_env["CLAUDE_CODE_SESSION_ID"] = "from-env";
    auto run = plan({});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run),
              view("plan", "session-file", "from-env", project_file("from-env"), false));
    run = plan({"--session", "from-flag"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run),
              view("acceptEdits", "session-file", "from-flag", project_file("from-flag"), false));
}

TEST_F(SessionLookup, ProjectFileComesBeforeTheMachineFile) {
    put(machine_file("s1"), "s1", Mode::accept_edits);
    auto run = plan({"--session", "s1"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("acceptEdits", "session-file", "s1", machine_file("s1"), false));
    put(project_file("s1"), "s1", Mode::plan);
    run = plan({"--session", "s1"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("plan", "session-file", "s1", project_file("s1"), false));
}

TEST_F(SessionLookup, FromASubdirectoryTheProjectIsStillFound) {
    put(project_file("s1"), "s1", Mode::plan);
    const auto run = plan({"--session", "s1"}, m_dir.make_dir("project/src"));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("plan", "session-file", "s1", project_file("s1"), false));
}

TEST_F(SessionLookup, NoSessionAtAllIsDefaultWithoutWarning) {
    const auto run = plan({});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("default", "default", nullptr, nullptr, false));
    EXPECT_EQ(session_warnings(run), std::vector<std::string>{});
}

TEST_F(SessionLookup, MissingSessionFileIsDefaultWithAWarning) {
    const auto run = plan({"--session", "s1"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("default", "default", "s1", nullptr, false));
    EXPECT_EQ(session_warnings(run),
              std::vector<std::string>{
                  "no session file for session s1 (from --session): assuming default; "
                  "`sonata init` installs the hook that records it"})
        << run.out;
}

TEST_F(SessionLookup, StaleWideModeNarrowsToDefault) {
    put(project_file("s1"), "s1", Mode::bypass_permissions, 3600);
    const auto run = plan({"--session", "s1"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("default", "session-file", "s1", project_file("s1"), true));
    const auto warnings = session_warnings(run);
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_EQ(warnings[0].rfind("session file " + project_file("s1") + " is stale (updated 36", 0),
              0U)
        << warnings[0];
    EXPECT_NE(warnings[0].find(
                  "limit 600s): its mode bypassPermissions may no longer hold, so default is used"),
              std::string::npos)
        << warnings[0];
}

TEST_F(SessionLookup, StalePlanStaysPlan) {
    put(project_file("s1"), "s1", Mode::plan, 3600);
    const auto run = plan({"--session", "s1"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run), view("plan", "session-file", "s1", project_file("s1"), true));
}

TEST_F(SessionLookup, CorruptSessionFileIsAnErrorNotADefault) {
    for (const std::string& text : std::vector<std::string>{
             "", "{not json",
             R"({"session_id":"s1","mode":"sudo","updated_at":"2026-11-01T22:40:00Z"})",
             R"({"session_id":"s2","mode":"plan","updated_at":"2026-11-01T22:40:00Z"})"}) {
        write_text(project_file("s1"), text);
        const auto run = plan({"--session", "s1"});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::bad_data)) << text << "\n" << run.out;
        EXPECT_EQ(run.out, "");
        EXPECT_EQ(run.err.rfind("sonata: error: " + project_file("s1") + ": ", 0), 0U) << run.err;
    }
}

TEST_F(SessionLookup, HostileSessionIdsAreUsageErrors) {
    for (const std::string& id : std::vector<std::string>{"../s1", "a/b", "..", "a b", "s1\x01",
                                                          std::string(129, 'a'), "/etc/passwd"}) {
        auto run = plan({"--session", id});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::usage)) << id << "\n" << run.out;
        EXPECT_EQ(
            run.err,
            "sonata: error: --session: session id is not a safe id: use 1 to 128 of the characters "
            "A-Z a-z 0-9 _ -\n");
        m_env["CLAUDE_CODE_SESSION_ID"] = id;
        run = plan({});
        EXPECT_EQ(run.exit_code, to_int(ExitCode::usage)) << id;
        EXPECT_EQ(
            run.err,
            "sonata: error: $CLAUDE_CODE_SESSION_ID: session id is not a safe id: use 1 to 128 of "
            "the characters A-Z a-z 0-9 _ -\n");
        m_env.erase("CLAUDE_CODE_SESSION_ID");
    }
}

TEST_F(SessionLookup, WhatTheHookWritesPlanReads) {
    const std::string input =
        R"({"session_id":"abc-123","cwd":")" + m_project +
        R"(","permission_mode":"auto","hook_event_name":"PreToolUse","tool_name":"Read"})";
    const auto hook = run_sonata({"hook"}, m_env, m_dir.path(), input);
    ASSERT_EQ(hook.exit_code, 0);
    m_env["CLAUDE_CODE_SESSION_ID"] = "abc-123";
    const auto run = plan({});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(mode_view(run),
              view("acceptEdits", "session-file", "abc-123", project_file("abc-123"), false));
}

} // namespace
} // namespace sonata
