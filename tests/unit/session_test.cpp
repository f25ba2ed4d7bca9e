// Session files: id validation, hook input parsing, the record format, where the hook writes and
// how plan finds the file again (on a scratch directory, no processes).
#include <filesystem>

#include <gtest/gtest.h>

#include "core/session.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

using testing::read_text;
using testing::ScratchDir;
using testing::tree;
using testing::write_text;
using Clock = std::chrono::system_clock;

constexpr std::int64_t k_t0 = 1'793'572'800; // 2026-11-01T22:40:00Z

Clock::time_point at(std::int64_t unix_seconds) {
    return Clock::time_point(std::chrono::seconds(unix_seconds));
}

std::string input(const std::string& id, const std::string& cwd, const std::string& mode) {
    return R"({"session_id":")" + id + R"(","transcript_path":"/x.jsonl","cwd":")" + cwd +
           R"(","permission_mode":")" + mode +
           R"(","hook_event_name":"PreToolUse","tool_name":"Bash",)" +
           R"("tool_input":{"command":"ls"},"tool_use_id":"toolu_1"})";
}

TEST(SessionId, AcceptsOnlySafeTokens) {
    for (const std::string& id : std::vector<std::string>{
             "a", "0b1c-DEF_9", "123e4567-e89b-12d3-a456-426614174000", std::string(128, 'x')}) {
        EXPECT_TRUE(is_safe_session_id(id)) << id;
    }
    for (const std::string& id :
         {std::string(), std::string(129, 'x'), std::string("a/b"), std::string(".."),
          std::string("../etc"), std::string("a.b"), std::string("a b"), std::string("a\nb"),
          std::string("a\x1b"
                      "b"),
          std::string("a\0b", 3), std::string("é"), std::string("a\\b")}) {
        EXPECT_FALSE(is_safe_session_id(id)) << id;
    }
}

TEST(HookInput, ParsesTheFieldsSonataUses) {
    EXPECT_EQ(parse_hook_input(input("s1", "/p", "auto")), (HookInput{"s1", "/p", "auto"}));
    EXPECT_EQ(parse_hook_input(R"({"session_id":"s1","cwd":"/p"})"), (HookInput{"s1", "/p", ""}));
}

TEST(HookInput, RejectsMalformedInput) {
    for (const std::string& text : std::vector<std::string>{
             "", "not json", "[]", "\"s\"", R"({"cwd":"/p"})", R"({"session_id":"s"})",
             R"({"session_id":1,"cwd":"/p"})", R"({"session_id":"s","cwd":["/p"]})",
             R"({"session_id":"s","cwd":"/p","permission_mode":3})",
             "{\"session_id\":\"s\xff\",\"cwd\":\"/p\"}",
             R"({"cwd":"/p","permission_mode":"plan","tool_input":{"x":"\ud83d"}})"}) {
        EXPECT_EQ(parse_hook_input(text), std::nullopt) << text;
    }
}

// Claude Code writes session_id, cwd and permission_mode before tool_input: when what follows is
// invalid (a lone surrogate), cut off or nested beyond any parser's stack, the fields read stand.
TEST(HookInput, KeepsTheFieldsReadBeforeTheInputBreaksOff) {
    const std::string head =
        R"({"session_id":"s","cwd":"/p","permission_mode":"plan","tool_input":)";
    for (const std::string& rest : {std::string(R"({"command":"\ud83d"}})"),
                                    std::string(R"({"command":"ls)"), std::string(200000, '[')}) {
        EXPECT_EQ(parse_hook_input(head + rest), (HookInput{"s", "/p", "plan", false}))
            << rest.substr(0, 20);
    }
    EXPECT_EQ(
        parse_hook_input(
            R"({"session_id":"s","tool_input":{"c":"\ud83d"},"cwd":"/p","permission_mode":"plan"})"),
        (HookInput{"s", "", "", false}));
    EXPECT_EQ(parse_hook_input(
                  R"({"session_id":"s","cwd":"/p","permission_mode":3,"tool_input":"\ud83d"})"),
              (HookInput{"s", "/p", "", false}));
}

TEST(HookInput, ASecondPermissionModeNeverWidensTheFirst) {
    EXPECT_EQ(
        parse_hook_input(
            R"({"session_id":"s","cwd":"/p","permission_mode":"plan","permission_mode":"bypassPermissions"})"),
        (HookInput{"s", "/p", "plan"}));
    EXPECT_EQ(
        parse_hook_input(
            R"({"session_id":"s","cwd":"/p","permission_mode":"bypassPermissions","permission_mode":"default"})"),
        (HookInput{"s", "/p", "default"}));
}

TEST(SessionRecord, WritesOneStableJsonObject) {
    const SessionRecord record{"s1", Mode::accept_edits, k_t0};
    EXPECT_EQ(session_record_to_json(record), "{\"session_id\":\"s1\",\"mode\":\"acceptEdits\","
                                              "\"updated_at\":\"2026-11-01T22:40:00Z\"}\n");
    EXPECT_EQ(parse_session_record(session_record_to_json(record), "f"), record);
}

TEST(SessionRecord, EveryCorruptionIsBadData) {
    for (const std::string& text : std::vector<std::string>{
             "", "{", "[]", R"({"mode":"plan","updated_at":"2026-11-01T22:40:00Z"})",
             R"({"session_id":"../x","mode":"plan","updated_at":"2026-11-01T22:40:00Z"})",
             R"({"session_id":"s","mode":"auto","updated_at":"2026-11-01T22:40:00Z"})",
             R"({"session_id":"s","mode":"Plan","updated_at":"2026-11-01T22:40:00Z"})",
             R"({"session_id":"s","mode":1,"updated_at":"2026-11-01T22:40:00Z"})",
             R"({"session_id":"s","mode":"plan"})",
             R"({"session_id":"s","mode":"plan","updated_at":1793572800})",
             R"({"session_id":"s","mode":"plan","updated_at":"2026-02-30T22:40:00Z"})",
             R"({"session_id":"s","mode":"plan","updated_at":"2026-11-01 22:40:00"})"}) {
        const auto parsed = parse_session_record(text, "the-file");
        ASSERT_FALSE(parsed) << text;
        EXPECT_EQ(parsed.error().code, ExitCode::bad_data) << text;
        EXPECT_EQ(parsed.error().message.rfind("the-file: corrupt session file (", 0), 0U)
            << parsed.error().message;
    }
}

TEST(UtcTime, RoundTripsAndRejectsOtherForms) {
    EXPECT_EQ(format_utc(k_t0), "2026-11-01T22:40:00Z");
    EXPECT_EQ(parse_utc("2026-11-01T22:40:00Z"), k_t0);
    EXPECT_EQ(parse_utc("1970-01-01T00:00:00Z"), 0);
    for (const char* bad : {"2026-11-01T22:40:00", "2026-11-01T24:00:00Z", "2026-13-01T22:40:00Z",
                            "x", "", "2026-11-01T22:40:00Z "}) {
        EXPECT_EQ(parse_utc(bad), std::nullopt) << bad;
    }
}

/// A project, a machine config dir and an environment pointing at it, all in a scratch dir.
class SessionFiles : public ::testing::Test {
protected:
    ScratchDir m_dir;
    std::string m_project = m_dir.make_dir("project");
    std::string m_machine = m_dir.path() + "/xdg/sonata";
    std::map<std::string, std::string> m_env{{"HOME", m_dir.path() + "/home"},
                                             {"XDG_CONFIG_HOME", m_dir.path() + "/xdg"}};
};

TEST_F(SessionFiles, HookWritesTheFoldedModeIntoTheProject) {
    write_text(m_project + "/sonata.toml", "");
    const auto written = record_hook_input(input("s1", m_project, "auto"), m_env, at(k_t0));
    EXPECT_EQ(written, m_project + "/.sonata/session-s1.json");
    EXPECT_EQ(read_text(m_project + "/.sonata/session-s1.json"),
              session_record_to_json({"s1", Mode::accept_edits, k_t0}));
    EXPECT_EQ(tree(m_dir.path()),
              (std::set<std::string>{"project/", "project/sonata.toml", "project/.sonata/",
                                     "project/.sonata/session-s1.json"}));
}

TEST_F(SessionFiles, HookFallsBackToTheMachineDirOnlyWithAMachineConfig) {
    const std::string elsewhere = m_dir.make_dir("elsewhere");
    EXPECT_EQ(record_hook_input(input("s1", elsewhere, "plan"), m_env, at(k_t0)), std::nullopt);
    std::filesystem::create_directories(m_machine);
    EXPECT_EQ(record_hook_input(input("s1", elsewhere, "plan"), m_env, at(k_t0)), std::nullopt);
    write_text(m_machine + "/config.toml", "");
    EXPECT_EQ(record_hook_input(input("s1", elsewhere, "plan"), m_env, at(k_t0)),
              m_machine + "/session-s1.json");
    EXPECT_EQ(read_text(m_machine + "/session-s1.json"),
              session_record_to_json({"s1", Mode::plan, k_t0}));
}

TEST_F(SessionFiles, HookRefusesASymlinkedStateDir) {
    const std::string outside = m_dir.make_dir("outside");
    std::filesystem::create_directory_symlink(outside, m_project + "/.sonata");
    EXPECT_EQ(record_hook_input(input("s1", m_project, "plan"), m_env, at(k_t0)), std::nullopt);
    EXPECT_TRUE(std::filesystem::is_empty(outside));
}

TEST_F(SessionFiles, LookupPrefersTheProjectThenTheMachineDir) {
    write_text(m_machine + "/session-s1.json", session_record_to_json({"s1", Mode::plan, k_t0}));
    auto found = find_session("s1", m_project, m_machine, std::chrono::hours(1), at(k_t0 + 10));
    ASSERT_TRUE(found && *found);
    EXPECT_EQ((*found)->path, m_machine + "/session-s1.json");
    EXPECT_EQ((*found)->record, (SessionRecord{"s1", Mode::plan, k_t0}));
    EXPECT_EQ((*found)->age, std::chrono::seconds(10));
    EXPECT_FALSE((*found)->stale);

    write_text(m_project + "/.sonata/session-s1.json",
               session_record_to_json({"s1", Mode::bypass_permissions, k_t0}));
    found = find_session("s1", m_project, m_machine, std::chrono::hours(1), at(k_t0 + 3601));
    ASSERT_TRUE(found && *found);
    EXPECT_EQ((*found)->path, m_project + "/.sonata/session-s1.json");
    EXPECT_EQ((*found)->record.mode, Mode::bypass_permissions);
    EXPECT_TRUE((*found)->stale);
}

TEST_F(SessionFiles, LookupWithoutAFileIsNoneAndCorruptIsAnError) {
    auto none = find_session("s1", m_project, m_machine, std::chrono::hours(1), at(k_t0));
    ASSERT_TRUE(none);
    EXPECT_EQ(*none, std::nullopt);

    write_text(m_project + "/.sonata/session-s1.json", "{\"session_id\":\"s1\"");
    write_text(m_machine + "/session-s1.json", session_record_to_json({"s1", Mode::plan, k_t0}));
    auto corrupt = find_session("s1", m_project, m_machine, std::chrono::hours(1), at(k_t0));
    ASSERT_FALSE(corrupt);
    EXPECT_EQ(corrupt.error().code, ExitCode::bad_data);

    write_text(m_project + "/.sonata/session-s1.json",
               session_record_to_json({"s2", Mode::plan, k_t0}));
    auto other = find_session("s1", m_project, m_machine, std::chrono::hours(1), at(k_t0));
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().code, ExitCode::bad_data);

    auto hostile = find_session("../s1", m_project, m_machine, std::chrono::hours(1), at(k_t0));
    ASSERT_FALSE(hostile);
    EXPECT_EQ(hostile.error().code, ExitCode::usage);
}

} // namespace
} // namespace sonata
