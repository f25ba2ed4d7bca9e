// The version cache: what its key holds, what it records (only settled keys, plain versions,
// clean answers), its bound, and that a recorded answer stands in for running the command.
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "core/version_cache.hpp"
#include "tests/support/fake_runner.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::adapters {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::FakeRunner;
using testing::write_text;

/// A settled key for a file that need not exist: only the cache file is touched.
VersionKey synthetic_key(const std::string& command) {
    VersionKey key;
    key.command = command;
    key.executable = {command, 1, 2, 3, 4, 5};
    key.args = {"--version"};
    key.settled = true;
    return key;
}

json cache_file(const std::string& path) {
    std::ifstream in(path);
    return json::parse(in);
}

class VersionCacheTest : public ::testing::Test {
protected:
    testing::ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_cache = version_cache_path(m_env);
};

TEST_F(VersionCacheTest, ItLivesInTheUsersCacheDirectory) {
    EXPECT_EQ(m_cache, m_env.at("XDG_CACHE_HOME") + "/sonata/versions.json");
    EXPECT_EQ(version_cache_path({{"HOME", "/home/u"}, {"XDG_CACHE_HOME", "relative"}}),
              "/home/u/.cache/sonata/versions.json");
    EXPECT_EQ(version_cache_path({{"HOME", "relative"}}), "");
    EXPECT_EQ(version_cache_path({}), "");
}

TEST_F(VersionCacheTest, TheKeyHoldsTheScriptItsInterpreterAndItsPackage) {
    const std::string package = m_dir.make_dir("lib/tool");
    write_text(package + "/package.json", R"({"version": "1.0.0"})");
    write_text(package + "/bin/cli.js", "#!/usr/bin/env stand-in-node --flag\n");
    const std::string first = m_dir.make_dir("runtime");
    const std::string later = m_dir.make_dir("path");
    fs::copy_file("/bin/true", first + "/stand-in-node");
    fs::copy_file("/bin/true", later + "/stand-in-node");
    fs::create_symlink(package + "/bin/cli.js", m_dir.path() + "/tool");

    const auto key = version_key({m_dir.path() + "/tool", {"-v"}, first, later + ":/usr/bin"});
    ASSERT_TRUE(key);
    EXPECT_EQ(key->command, m_dir.path() + "/tool");
    EXPECT_EQ(key->executable.path, package + "/bin/cli.js");
    EXPECT_EQ(key->executable.size, fs::file_size(package + "/bin/cli.js"));
    ASSERT_TRUE(key->interpreter);
    EXPECT_EQ(key->interpreter->path, first + "/stand-in-node") << "path_first comes first";
    ASSERT_TRUE(key->package);
    EXPECT_EQ(key->package->path, package + "/package.json");
    EXPECT_EQ(key->args, std::vector<std::string>{"-v"});
    EXPECT_FALSE(key->settled) << "its files changed within the last second";

    const auto without_runtime = version_key({m_dir.path() + "/tool", {"-v"}, "", later});
    ASSERT_TRUE(without_runtime && without_runtime->interpreter);
    EXPECT_EQ(without_runtime->interpreter->path, later + "/stand-in-node");

    const auto native = version_key({"/bin/sh", {"--version"}, "", "/usr/bin:/bin"});
    ASSERT_TRUE(native);
    EXPECT_FALSE(native->interpreter);
    EXPECT_FALSE(native->package);
    EXPECT_TRUE(native->settled);
    EXPECT_FALSE(version_key({m_dir.path() + "/missing", {}, "", ""}));
}

TEST_F(VersionCacheTest, WhatIsRecordedIsFoundForExactlyItsKey) {
    const VersionKey key = synthetic_key("/opt/tool");
    ASSERT_TRUE(record_version(m_cache, key, "1.2.3-beta.1+build"));
    EXPECT_EQ(cached_version(m_cache, key).version, "1.2.3-beta.1+build");
    EXPECT_EQ(cached_version(m_cache, key).note, "");

    const auto differs = [&](const std::function<void(VersionKey&)>& change) {
        VersionKey other = key;
        change(other);
        return cached_version(m_cache, other).version.empty();
    };
    EXPECT_TRUE(differs([](VersionKey& k) { k.executable.path = "/opt/other"; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.executable.device += 1; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.executable.inode += 1; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.executable.size += 1; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.executable.mtime_ns -= 1; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.executable.ctime_ns += 1; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.command = "/usr/bin/tool"; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.args = {"version"}; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.path_first = "/opt/node/bin"; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.interpreter = k.executable; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.package = k.executable; }));
    EXPECT_TRUE(differs([](VersionKey& k) { k.settled = false; }));
}

TEST_F(VersionCacheTest, OnlySettledKeysAndPlainVersionsAreRecorded) {
    VersionKey unsettled = synthetic_key("/opt/tool");
    unsettled.settled = false;
    EXPECT_FALSE(record_version(m_cache, unsettled, "1.0.0"));
    EXPECT_FALSE(fs::exists(m_cache));
    for (const std::string& version : std::vector<std::string>{
             "", "v1.0.0", "1.0.0 beta", "1.0.0\x1b[31m", "$(id)", "1." + std::string(80, '0')}) {
        EXPECT_FALSE(record_version(m_cache, synthetic_key("/opt/tool"), version)) << version;
    }
    EXPECT_FALSE(record_version(m_cache, synthetic_key("/opt/" + std::string(5000, 'a')), "1.0.0"))
        << "a key that would not read back is not written";
    EXPECT_FALSE(fs::exists(m_cache));
    EXPECT_FALSE(record_version("", synthetic_key("/opt/tool"), "1.0.0"));
}

TEST_F(VersionCacheTest, TheNewestSixtyFourEntriesAreKept) {
    for (int i = 0; i < 70; ++i)
        ASSERT_TRUE(record_version(m_cache, synthetic_key("/opt/" + std::to_string(i)), "1.0.0"));
    EXPECT_EQ(cache_file(m_cache).at("entries").size(), 64U);
    for (int i = 0; i < 70; ++i) {
        EXPECT_EQ(cached_version(m_cache, synthetic_key("/opt/" + std::to_string(i))).version,
                  i < 6 ? "" : "1.0.0")
            << i;
    }
    // A new answer for the same command replaces its entry instead of adding one.
    VersionKey upgraded = synthetic_key("/opt/69");
    upgraded.executable.size = 99;
    ASSERT_TRUE(record_version(m_cache, upgraded, "2.0.0"));
    EXPECT_EQ(cache_file(m_cache).at("entries").size(), 64U);
    EXPECT_EQ(cached_version(m_cache, upgraded).version, "2.0.0");
    EXPECT_EQ(cached_version(m_cache, synthetic_key("/opt/69")).version, "");
}

TEST_F(VersionCacheTest, TheFileStaysWithinItsSizeLimit) {
    for (int i = 0; i < 64; ++i) {
        VersionKey key = synthetic_key("/opt/" + std::to_string(i) + std::string(4000, 'x'));
        key.interpreter = FileIdentity{std::string(4000, 'i'), 1, 2, 3, 4, 5};
        ASSERT_TRUE(record_version(m_cache, key, "1.0.0"));
        EXPECT_EQ(cached_version(m_cache, key).version, "1.0.0") << i;
    }
    EXPECT_LE(fs::file_size(m_cache), 256U * 1024U);
    EXPECT_LT(cache_file(m_cache).at("entries").size(), 64U) << "the oldest went to make room";
}

// read_version with a fake runner: a clean answer is recorded and then stands in for the run;
// a failed, timed-out or unreadable answer is not recorded.
class ReadVersionTest : public VersionCacheTest {
protected:
    const Adapter& m_kilo = **find_adapter("kilo");
    Config m_config;

    HarnessStatus read(FakeRunner& runner) {
        // /bin/sh stands for the harness: the fake runner never starts it, and it is settled.
        HarnessStatus status{"kilo", true, "/bin/sh", {}, {}, {}, {}};
        read_version(status, m_kilo, m_config, m_env, runner);
        return status;
    }
    /// A version command that prints `out` and exits with `exit_code`.
    static FakeRunner::Script answered(const std::string& out, int exit_code,
                                       bool timed_out = false) {
        FakeRunner::Script script;
        script.chunks = {out};
        script.result.exit_code = exit_code;
        script.result.timed_out = timed_out;
        return script;
    }
};

TEST_F(ReadVersionTest, ARecordedAnswerStandsInForRunningTheCommand) {
    FakeRunner first(answered("kilo 7.7.9\n", 0));
    EXPECT_EQ(read(first).version, "7.7.9");
    EXPECT_EQ(first.requests().size(), 1U);

    FakeRunner second(answered("kilo 9.9.9\n", 0));
    const HarnessStatus status = read(second);
    EXPECT_EQ(status.version, "7.7.9");
    EXPECT_EQ(status.note, "");
    EXPECT_TRUE(second.requests().empty()) << "the version command ran on a hit";
}

TEST_F(ReadVersionTest, OnlyACleanAnswerIsRecorded) {
    FakeRunner failed(answered("kilo 7.7.9\n", 1));
    EXPECT_EQ(read(failed).version, "7.7.9") << "a failed command's version still counts";
    FakeRunner timed_out(answered("kilo 7.7.9\n", -1, true));
    EXPECT_EQ(read(timed_out).version, "");
    FakeRunner unreadable(answered("no version here\n", 0));
    EXPECT_EQ(read(unreadable).note, "version output not recognised");
    FakeRunner::Script missing = answered("", 0);
    missing.cannot_start = true;
    FakeRunner cannot_start(missing);
    EXPECT_EQ(read(cannot_start).version, "");
    EXPECT_FALSE(fs::exists(m_cache));

    FakeRunner next(answered("kilo 7.8.0\n", 0));
    EXPECT_EQ(read(next).version, "7.8.0");
    EXPECT_EQ(next.requests().size(), 1U);
}

TEST_F(ReadVersionTest, ACorruptCacheIsIgnoredWithANoteAndReplaced) {
    write_text(m_cache, "{\"schema\": 1, \"entries\": [");
    FakeRunner first(answered("kilo 7.7.9\n", 0));
    const HarnessStatus status = read(first);
    EXPECT_EQ(status.version, "7.7.9");
    EXPECT_EQ(status.note.rfind("ignored the version cache " + m_cache + ": not JSON", 0), 0U)
        << status.note;
    EXPECT_EQ(first.requests().size(), 1U);

    FakeRunner second(answered("kilo 9.9.9\n", 0));
    EXPECT_EQ(read(second).version, "7.7.9");
    EXPECT_EQ(read(second).note, "");
    EXPECT_TRUE(second.requests().empty());
}

} // namespace
} // namespace sonata::adapters
