// `sonata hook` and `sonata-hook` as Claude Code runs them: the real binaries, hook JSON on
// stdin, their own HOME, XDG dirs and working directory. Every run must exit 0 and print nothing;
// every hostile input must leave the whole scratch tree exactly as it was.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/session.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_program;
using testing::run_sonata;
using testing::ScratchDir;
using testing::SonataRun;
using testing::tree;
using testing::write_text;

/// Claude Code's PreToolUse input, with the JSON for each field given raw (so tests can break it).
std::string hook_json(const std::string& id_json, const std::string& cwd_json,
                      const std::string& mode_json,
                      const std::string& tool_input = R"({"command":"ls"})") {
    std::string fields =
        R"({"session_id":)" + id_json + R"(,"transcript_path":"/t.jsonl","cwd":)" + cwd_json;
    if (!mode_json.empty()) fields += R"(,"permission_mode":)" + mode_json;
    return fields + R"(,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":)" +
           tool_input + R"(,"tool_use_id":"toolu_01"})";
}

std::string json_string(const std::string& text) { return "\"" + text + "\""; }

/// The two ways to run the hook: `sonata hook`, and the statically linked `sonata-hook` that
/// `sonata init` installs when it is there. Both must keep every rule below.
struct EntryPoint {
    const char* name;
    std::vector<std::string> argv;
};

std::vector<EntryPoint> entry_points() {
    return {{"SonataHook", {SONATA_BIN, "hook"}}, {"SonataHookBinary", {SONATA_HOOK_BIN}}};
}

class HookBase : public ::testing::Test {
protected:
    std::vector<std::string> m_entry{SONATA_BIN, "hook"};
    ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");
    std::string m_machine = m_dir.path() + "/xdg/config/sonata";
    std::string m_runner_cwd = m_dir.make_dir("runner-cwd");

    /// Runs the hook and checks the contract that holds for every input: exit 0, no output.
    void hook(const std::string& input, const std::vector<std::string>& wrapper = {}) {
        const SonataRun run = run_program(m_entry, m_env, m_runner_cwd, input, wrapper);
        EXPECT_EQ(run.exit_code, 0) << run.err;
        EXPECT_EQ(run.out, "");
        EXPECT_EQ(run.err, "");
    }

    SessionRecord record_at(const std::string& path) {
        auto parsed = parse_session_record(read_text(path), path);
        if (!parsed) throw std::runtime_error(parsed.error().message);
        return *parsed;
    }

    /// The record the hook just wrote must carry `mode` and a time within the run.
    void expect_record(const std::string& path, const std::string& id, Mode mode,
                       std::int64_t before) {
        const SessionRecord record = record_at(path);
        const std::int64_t after = std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count();
        EXPECT_GE(record.updated_at, before);
        EXPECT_LE(record.updated_at, after);
        EXPECT_EQ(record, (SessionRecord{id, mode, record.updated_at}));
    }

    static std::int64_t now() {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }
};

class Hook : public HookBase, public ::testing::WithParamInterface<EntryPoint> {
protected:
    void SetUp() override { m_entry = GetParam().argv; }
};

TEST_P(Hook, ProjectWithSonataTomlGetsAStateDirAndTheFoldedMode) {
    write_text(m_project + "/sonata.toml", "");
    const auto before = now();
    hook(hook_json(json_string("s-1"), json_string(m_project), json_string("auto")));
    expect_record(m_project + "/.sonata/session-s-1.json", "s-1", Mode::accept_edits, before);
    EXPECT_EQ(tree(m_project),
              (std::set<std::string>{"sonata.toml", ".sonata/", ".sonata/session-s-1.json"}));
}

TEST_P(Hook, EveryModeIsFoldedAsDesignSays) {
    fs::create_directory(m_project + "/.sonata");
    const std::vector<std::pair<std::string, Mode>> cases{
        {json_string("plan"), Mode::plan},
        {json_string("default"), Mode::default_mode},
        {json_string("acceptEdits"), Mode::accept_edits},
        {json_string("bypassPermissions"), Mode::bypass_permissions},
        {json_string("auto"), Mode::accept_edits},
        {json_string("dontAsk"), Mode::plan},
        {json_string("yolo"), Mode::default_mode},
        {"", Mode::default_mode}, // field absent
    };
    for (const auto& [raw, folded] : cases) {
        const auto before = now();
        hook(hook_json(json_string("s1"), json_string(m_project), raw));
        expect_record(m_project + "/.sonata/session-s1.json", "s1", folded, before);
    }
    EXPECT_EQ(tree(m_project), (std::set<std::string>{".sonata/", ".sonata/session-s1.json"}));
}

TEST_P(Hook, FromASubdirectoryWritesToTheProjectLikePlanLooksThere) {
    write_text(m_project + "/sonata.toml", "");
    const std::string sub = m_dir.make_dir("project/src/deep");
    const auto before = now();
    hook(hook_json(json_string("s1"), json_string(sub), json_string("plan")));
    expect_record(m_project + "/.sonata/session-s1.json", "s1", Mode::plan, before);
    EXPECT_EQ(tree(sub), std::set<std::string>{});
}

TEST_P(Hook, OutsideAProjectWritesBesideTheMachineConfig) {
    write_text(m_machine + "/config.toml", "");
    const auto before = now();
    hook(hook_json(json_string("s1"), json_string(m_project), json_string("bypassPermissions")));
    expect_record(m_machine + "/session-s1.json", "s1", Mode::bypass_permissions, before);
    EXPECT_EQ(tree(m_project), std::set<std::string>{});
    EXPECT_EQ(tree(m_machine), (std::set<std::string>{"config.toml", "session-s1.json"}));
}

TEST_P(Hook, WithNeitherProjectNorMachineConfigWritesNothing) {
    fs::create_directories(m_machine); // the dir alone is not a machine config
    const auto before = tree(m_dir.path());
    hook(hook_json(json_string("s1"), json_string(m_project), json_string("plan")));
    EXPECT_EQ(tree(m_dir.path()), before);
}

/// Hostile or malformed inputs, each run against a project that would otherwise be written to.
using HostileInput = std::pair<const char*, std::string>;
class HookHostile : public HookBase,
                    public ::testing::WithParamInterface<std::tuple<EntryPoint, HostileInput>> {
protected:
    void SetUp() override { m_entry = std::get<0>(GetParam()).argv; }
};

std::vector<HostileInput> hostile_inputs() {
    const std::string project = "@PROJECT@";
    return {
        {"Empty", ""},
        {"NotJson", "session_id=s1 cwd=/"},
        {"JsonArray",
         "[" + hook_json(json_string("s1"), json_string(project), json_string("plan")) + "]"},
        {"NoSessionId", R"({"cwd":")" + project + R"(","permission_mode":"plan"})"},
        {"NumericSessionId", hook_json("42", json_string(project), json_string("plan"))},
        {"EmptySessionId", hook_json(json_string(""), json_string(project), json_string("plan"))},
        {"SessionIdWithSlash",
         hook_json(json_string("a/b"), json_string(project), json_string("plan"))},
        {"SessionIdDotDot",
         hook_json(json_string(".."), json_string(project), json_string("plan"))},
        {"SessionIdEscapes",
         hook_json(json_string("../../../outside"), json_string(project), json_string("plan"))},
        {"SessionIdNul",
         hook_json(json_string("s1\\u0000x"), json_string(project), json_string("plan"))},
        {"SessionIdNewline",
         hook_json(json_string("s1\\nx"), json_string(project), json_string("plan"))},
        {"SessionIdEscapeChar",
         hook_json(json_string("s1\\u001b[2J"), json_string(project), json_string("plan"))},
        {"SessionIdTooLong",
         hook_json(json_string(std::string(129, 'a')), json_string(project), json_string("plan"))},
        {"SessionIdInvalidUtf8",
         hook_json(json_string("s\xff"), json_string(project), json_string("plan"))},
        {"NoCwd", R"({"session_id":"s1","permission_mode":"plan"})"},
        {"RelativeCwd", hook_json(json_string("s1"), json_string("project"), json_string("plan"))},
        {"MissingCwd",
         hook_json(json_string("s1"), json_string(project + "/gone"), json_string("plan"))},
        {"CwdIsAFile",
         hook_json(json_string("s1"), json_string(project + "/sonata.toml"), json_string("plan"))},
        {"CwdWithNul",
         hook_json(json_string("s1"), json_string(project + "\\u0000/x"), json_string("plan"))},
        {"CwdNotAString", hook_json(json_string("s1"), "{}", json_string("plan"))},
        {"ModeNotAString", hook_json(json_string("s1"), json_string(project), "[\"plan\"]")},
    };
}

TEST_P(HookHostile, WritesNothingAnywhere) {
    write_text(m_project + "/sonata.toml", "");
    write_text(m_machine + "/config.toml", "");
    std::string input = std::get<1>(GetParam()).second;
    for (auto at = input.find("@PROJECT@"); at != std::string::npos; at = input.find("@PROJECT@")) {
        input.replace(at, 9, m_project);
    }
    const auto before = tree(m_dir.path());
    hook(input);
    EXPECT_EQ(tree(m_dir.path()), before);
}

INSTANTIATE_TEST_SUITE_P(Inputs, HookHostile,
                         ::testing::Combine(::testing::ValuesIn(entry_points()),
                                            ::testing::ValuesIn(hostile_inputs())),
                         [](const auto& param_info) {
                             return std::string(std::get<0>(param_info.param).name) + "_" +
                                    std::get<1>(param_info.param).first;
                         });

TEST_P(Hook, InputJustUnderTheLimitIsStillRecorded) {
    write_text(m_project + "/sonata.toml", "");
    const std::string padding(k_max_hook_input - 1024, 'x');
    const auto before = now();
    hook(hook_json(json_string("s1"), json_string(m_project), json_string("plan"),
                   R"({"content":")" + padding + R"("})"));
    expect_record(m_project + "/.sonata/session-s1.json", "s1", Mode::plan, before);
}

// After a bypassPermissions call, a narrower call whose tool_input the hook cannot parse (a lone
// surrogate, more than k_max_hook_input bytes, nesting no parser's stack survives) must not leave
// bypass standing: the mode it read before tool_input is recorded, else default.
TEST_P(Hook, InputItCannotParseWholeStillNarrowsTheMode) {
    write_text(m_project + "/sonata.toml", "");
    const std::string file = m_project + "/.sonata/session-s1.json";
    const std::vector<std::pair<std::string, Mode>> narrower{
        {hook_json(json_string("s1"), json_string(m_project), json_string("plan"),
                   R"({"command":"\ud83d"})"),
         Mode::plan},
        {hook_json(json_string("s1"), json_string(m_project), json_string("plan"),
                   R"({"content":")" + std::string(k_max_hook_input, 'x') + R"("})"),
         Mode::plan},
        {hook_json(json_string("s1"), json_string(m_project), json_string("acceptEdits"),
                   std::string(300000, '[')),
         Mode::accept_edits},
        {R"({"session_id":"s1","cwd":")" + m_project +
             R"(","tool_input":{"c":"\ud83d"},"permission_mode":"bypassPermissions"})",
         Mode::default_mode},
    };
    for (const auto& [input, mode] : narrower) {
        hook(
            hook_json(json_string("s1"), json_string(m_project), json_string("bypassPermissions")));
        ASSERT_EQ(record_at(file).mode, Mode::bypass_permissions);
        const auto before = now();
        hook(input);
        expect_record(file, "s1", mode, before);
    }
}

// Cut off inside its cwd: the session is known, its directory is not. Claude Code runs hooks in
// the project, so the hook's own directory stands in, and the mode read is none, so default.
TEST_P(Hook, InputCutOffBeforeItsCwdUsesTheHooksDirectoryAndDefault) {
    write_text(m_runner_cwd + "/sonata.toml", "");
    const std::string input =
        hook_json(json_string("s1"), json_string(m_project), json_string("plan"));
    const auto before = now();
    hook(input.substr(0, input.find("\"cwd\"") + 10));
    expect_record(m_runner_cwd + "/.sonata/session-s1.json", "s1", Mode::default_mode, before);
}

TEST_P(Hook, NeverWritesThroughASymlinkedStateDir) {
    const std::string outside = m_dir.make_dir("outside");
    write_text(m_project + "/sonata.toml", "");
    fs::create_directory_symlink(outside, m_project + "/.sonata");
    const auto before = tree(m_dir.path());
    hook(hook_json(json_string("s1"), json_string(m_project), json_string("plan")));
    EXPECT_EQ(tree(m_dir.path()), before);
}

TEST_P(Hook, ReplacesASymlinkedSessionFileInsteadOfWritingThroughIt) {
    const std::string victim = m_dir.path() + "/victim.txt";
    write_text(victim, "precious\n");
    fs::create_directory(m_project + "/.sonata");
    fs::create_symlink(victim, m_project + "/.sonata/session-s1.json");
    const auto before = now();
    hook(hook_json(json_string("s1"), json_string(m_project), json_string("plan")));
    EXPECT_EQ(read_text(victim), "precious\n");
    EXPECT_FALSE(fs::is_symlink(m_project + "/.sonata/session-s1.json"));
    expect_record(m_project + "/.sonata/session-s1.json", "s1", Mode::plan, before);
}

/// Read-only directories. As root every directory is writable, so the hook then runs as nobody
/// (setpriv), and a writable control run proves that this setup can write at all.
class HookReadOnly : public Hook {
protected:
    std::vector<std::string> m_wrapper;

    void SetUp() override {
        Hook::SetUp();
        if (::geteuid() != 0) return;
        m_wrapper = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
        if (!fs::exists(m_wrapper[0]))
            GTEST_SKIP() << "running as root without setpriv: cannot drop privileges";
        fs::permissions(m_dir.path(), fs::perms::owner_all | fs::perms::group_read |
                                          fs::perms::group_exec | fs::perms::others_read |
                                          fs::perms::others_exec);
        const auto probe = run_sonata({"--version"}, m_env, "/", std::nullopt, m_wrapper);
        if (probe.exit_code != 0)
            GTEST_SKIP() << "the sonata binary is not reachable as nobody: " << probe.err;
    }

    void TearDown() override { // so that a non-root run can clean up
        for (const auto& entry : fs::recursive_directory_iterator(m_dir.path())) {
            if (entry.is_directory() && !entry.is_symlink())
                fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add);
        }
    }

    static void set_mode(const std::string& path, fs::perms perms) { fs::permissions(path, perms); }
    static constexpr fs::perms k_read_only = fs::perms::owner_read | fs::perms::owner_exec |
                                             fs::perms::group_read | fs::perms::group_exec |
                                             fs::perms::others_read | fs::perms::others_exec;
};

TEST_P(HookReadOnly, ProjectDirWhereTheStateDirCannotBeCreated) {
    write_text(m_project + "/sonata.toml", "");
    set_mode(m_project, fs::perms::all); // control: writable for everyone
    hook(hook_json(json_string("s1"), json_string(m_project), json_string("plan")), m_wrapper);
    ASSERT_TRUE(fs::exists(m_project + "/.sonata/session-s1.json"));
    fs::remove_all(m_project + "/.sonata");

    set_mode(m_project, k_read_only);
    const auto before = tree(m_dir.path());
    hook(hook_json(json_string("s1"), json_string(m_project), json_string("plan")), m_wrapper);
    EXPECT_EQ(tree(m_dir.path()), before);
}

TEST_P(HookReadOnly, ReadOnlyStateDirKeepsTheOldFile) {
    const std::string state = m_dir.make_dir("project/.sonata");
    const std::string old = session_record_to_json({"s1", Mode::plan, 1'000'000'000});
    write_text(state + "/session-s1.json", old);
    set_mode(state, k_read_only);
    const auto before = tree(m_dir.path());
    hook(hook_json(json_string("s1"), json_string(m_project), json_string("bypassPermissions")),
         m_wrapper);
    EXPECT_EQ(tree(m_dir.path()), before);
    EXPECT_EQ(read_text(state + "/session-s1.json"), old);
}

TEST_P(HookReadOnly, ReadOnlyMachineDir) {
    write_text(m_machine + "/config.toml", "");
    set_mode(m_machine, k_read_only);
    const auto before = tree(m_dir.path());
    hook(hook_json(json_string("s1"), json_string(m_project), json_string("plan")), m_wrapper);
    EXPECT_EQ(tree(m_dir.path()), before);
}

TEST_P(Hook, ConcurrentHooksForOneSessionNeverLeaveATornFile) {
    write_text(m_project + "/sonata.toml", "");
    const std::string file = m_project + "/.sonata/session-s1.json";
    const std::vector<std::string> modes{"plan", "default", "acceptEdits", "bypassPermissions"};
    std::atomic<bool> writing{true};
    std::atomic<int> reads{0};
    std::atomic<int> torn{0};
    std::thread reader([&] {
        while (writing) {
            std::error_code ec;
            if (!fs::exists(file, ec)) continue;
            if (!parse_session_record(read_text(file), file)) ++torn;
            ++reads;
        }
    });
    constexpr int k_threads = 8;
    constexpr int k_runs_each = 6;
    std::vector<std::thread> writers;
    std::atomic<int> failures{0};
    for (int t = 0; t < k_threads; ++t) {
        writers.emplace_back([&, t] {
            for (int i = 0; i < k_runs_each; ++i) {
                const auto input = hook_json(json_string("s1"), json_string(m_project),
                                             json_string(modes[(t + i) % modes.size()]));
                const auto run = run_program(m_entry, m_env, m_runner_cwd, input);
                if (run.exit_code != 0 || !run.out.empty() || !run.err.empty()) ++failures;
            }
        });
    }
    for (auto& writer : writers)
        writer.join();
    writing = false;
    reader.join();
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(torn, 0) << "of " << reads << " reads";
    EXPECT_GT(reads, 0);
    const SessionRecord last = record_at(file);
    EXPECT_NE(std::find(modes.begin(), modes.end(), std::string(to_string(last.mode))),
              modes.end());
    EXPECT_EQ(tree(m_project),
              (std::set<std::string>{"sonata.toml", ".sonata/", ".sonata/session-s1.json"}));
}

using HookCli = HookBase;

TEST_F(HookCli, HelpStillGoesThroughTheCommandLineParser) {
    const SonataRun run = run_sonata({"hook", "--help"}, m_env, m_runner_cwd);
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_NE(run.out.find("PreToolUse"), std::string::npos) << run.out;
}

TEST_F(HookCli, SonataHookAnswersHelpAndVersionWithoutReadingStdin) {
    // Output the hook itself never prints: the flags are answered before any stdin is read.
    const SonataRun help = run_program({SONATA_HOOK_BIN, "--help"}, m_env, m_runner_cwd);
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("PreToolUse"), std::string::npos) << help.out;
    const SonataRun version = run_program({SONATA_HOOK_BIN, "--version"}, m_env, m_runner_cwd);
    EXPECT_EQ(version.out, std::string("sonata-hook ") + SONATA_VERSION + "\n");
}

const auto k_entry_name = [](const auto& param_info) { return std::string(param_info.param.name); };
INSTANTIATE_TEST_SUITE_P(EntryPoints, Hook, ::testing::ValuesIn(entry_points()), k_entry_name);
INSTANTIATE_TEST_SUITE_P(EntryPoints, HookReadOnly, ::testing::ValuesIn(entry_points()),
                         k_entry_name);

} // namespace
} // namespace sonata
