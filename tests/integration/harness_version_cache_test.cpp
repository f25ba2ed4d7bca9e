// `sonata harnesses`, `plan` and `doctor` take a harness's version from the version cache while
// the files its version command runs are unchanged, and run the command again when one changes:
// an upgrade, a downgrade to an older file time, another file renamed over it, a launcher link
// retargeted, another interpreter on PATH, a rewritten package.json. A cache file that is not
// what sonata writes is ignored with a note and replaced; runs at once leave a whole file.
//
// The stand-in harness is a `#!` script that appends a line to a file each time it starts.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "tests/support/harness_list.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::read_text;
using testing::run_sonata;
using testing::write_text;

class HarnessVersionCache : public ::testing::Test {
protected:
    testing::ScratchDir m_dir;
    Environment m_env = testing::hermetic_env(m_dir);
    std::string m_project = m_dir.make_dir("project");
    std::string m_bin = m_dir.make_dir("bin");
    std::string m_kilo = m_bin + "/kilo";
    std::string m_starts = m_dir.path() + "/starts";
    std::string m_cache = m_env.at("XDG_CACHE_HOME") + "/sonata/versions.json";

    void SetUp() override { m_env["PATH"] = m_bin + ":/usr/bin:/bin"; }

    /// A harness at `path` that prints "<name> <version>" and counts its starts.
    void stand_in(const std::string& path, const std::string& version,
                  const std::string& interpreter = "/bin/sh", const std::string& name = "kilo") {
        write_text(path, "#!" + interpreter + "\necho " + name + " >> '" + m_starts + "'\necho '" +
                             name + " " + version + "'\n");
        ::chmod(path.c_str(), 0755);
    }

    /// How often the stand-ins started.
    int starts() const {
        if (!fs::exists(m_starts)) return 0;
        const std::string text = read_text(m_starts);
        return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    }

    /// A key is recorded only once its files are a second old (see VersionKey::settled).
    static void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(1100)); }

    json harness(const std::string& id = "kilo") {
        return testing::listed_harness(id, m_env, m_project);
    }

    std::string version() { return harness().at("version"); }

    /// A stand-in kilo of `version`, settled and its answer recorded; its stat.
    struct stat recorded_kilo(const std::string& version) {
        stand_in(m_kilo, version);
        settle();
        EXPECT_EQ(this->version(), version);
        return stat_of(m_kilo);
    }

    static struct stat stat_of(const std::string& path) {
        struct stat st {};
        ::stat(path.c_str(), &st);
        return st;
    }
};

TEST_F(HarnessVersionCache, AHitStartsNothing) {
    recorded_kilo("7.7.9");
    EXPECT_EQ(starts(), 1);

    const json kilo = harness();
    EXPECT_EQ(kilo.at("version"), "7.7.9");
    EXPECT_EQ(kilo.at("note"), "");
    const auto plan =
        run_sonata({"plan", "--harness", "kilo", "--role", "review", "--mode", "plan", "--json"},
                   m_env, m_project);
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_EQ(json::parse(plan.out).at("version"), "7.7.9");
    const auto doctor = run_sonata({"doctor"}, m_env, m_project);
    EXPECT_NE(doctor.out.find("7.7.9 at " + m_bin + "/kilo"), std::string::npos) << doctor.out;
    EXPECT_EQ(starts(), 1) << "harnesses, plan and doctor started the harness again";
}

TEST_F(HarnessVersionCache, AnUpgradeInPlaceIsReadAgain) {
    const struct stat old_stat = recorded_kilo("7.7.9");
    stand_in(m_kilo, "7.7.10");
    ASSERT_EQ(stat_of(m_kilo).st_ino, old_stat.st_ino) << "the same file, rewritten";
    EXPECT_EQ(version(), "7.7.10");
    EXPECT_EQ(starts(), 2);
    const auto doctor = run_sonata({"doctor"}, m_env, m_project);
    EXPECT_NE(doctor.out.find("7.7.10 at "), std::string::npos) << doctor.out;
}

TEST_F(HarnessVersionCache, ADowngradeToAnOlderFileTimeIsReadAgain) {
    const struct stat old_stat = recorded_kilo("7.7.9");
    stand_in(m_kilo, "7.7.8"); // as long as 7.7.9, in the same file, dated a day earlier
    timespec times[2] = {old_stat.st_atim, old_stat.st_mtim};
    times[0].tv_sec -= 86400;
    times[1].tv_sec -= 86400;
    ASSERT_EQ(::utimensat(AT_FDCWD, m_kilo.c_str(), times, 0), 0);
    const struct stat new_stat = stat_of(m_kilo);
    ASSERT_EQ(new_stat.st_ino, old_stat.st_ino);
    ASSERT_EQ(new_stat.st_size, old_stat.st_size);
    EXPECT_EQ(version(), "7.7.8");
    EXPECT_EQ(starts(), 2);
}

TEST_F(HarnessVersionCache, AnotherFileRenamedOverItIsReadAgain) {
    stand_in(m_dir.path() + "/other", "7.7.8");
    recorded_kilo("7.7.9");
    ASSERT_EQ(::rename((m_dir.path() + "/other").c_str(), m_kilo.c_str()), 0);
    EXPECT_EQ(version(), "7.7.8");
    EXPECT_EQ(starts(), 2);
}

TEST_F(HarnessVersionCache, ALauncherLinkRetargetedIsReadAgain) {
    const std::string first = m_dir.path() + "/pkgs/kilo-7.7.9/kilo.sh";
    const std::string second = m_dir.path() + "/pkgs/kilo-7.7.8/kilo.sh";
    stand_in(first, "7.7.9");
    stand_in(second, "7.7.8");
    fs::create_symlink(first, m_bin + "/kilo");
    settle();
    EXPECT_EQ(version(), "7.7.9");
    EXPECT_EQ(version(), "7.7.9");
    EXPECT_EQ(starts(), 1);

    fs::create_symlink(second, m_bin + "/kilo.new");
    fs::rename(m_bin + "/kilo.new", m_bin + "/kilo");
    EXPECT_EQ(version(), "7.7.8");
    EXPECT_EQ(starts(), 2);
}

TEST_F(HarnessVersionCache, TheInterpreterOnPathIsPartOfTheKey) {
    for (const char* dir : {"one", "two"})
        fs::copy_file("/bin/sh", m_dir.make_dir(dir) + "/kilo-sh");
    stand_in(m_bin + "/kilo", "7.7.9", "/usr/bin/env kilo-sh");
    m_env["PATH"] = m_bin + ":" + m_dir.path() + "/one:/usr/bin:/bin";
    settle();
    EXPECT_EQ(version(), "7.7.9");
    EXPECT_EQ(version(), "7.7.9");
    EXPECT_EQ(starts(), 1);

    m_env["PATH"] = m_bin + ":" + m_dir.path() + "/two:/usr/bin:/bin";
    EXPECT_EQ(version(), "7.7.9");
    EXPECT_EQ(starts(), 2) << "another kilo-sh runs it now";
}

TEST_F(HarnessVersionCache, ARewrittenPackageJsonIsReadAgain) {
    const std::string package = m_dir.path() + "/lib/node_modules/kilo";
    write_text(package + "/package.json", R"({"name": "kilo", "version": "7.7.9"})");
    stand_in(package + "/bin/kilo.sh", "7.7.9");
    fs::create_symlink(package + "/bin/kilo.sh", m_bin + "/kilo");
    settle();
    EXPECT_EQ(version(), "7.7.9");
    EXPECT_EQ(version(), "7.7.9");
    EXPECT_EQ(starts(), 1);

    write_text(package + "/package.json", R"({"name": "kilo", "version": "7.7.8"})");
    EXPECT_EQ(version(), "7.7.9");
    EXPECT_EQ(starts(), 2);
}

/// One way to spoil a cache file: given the file sonata wrote, leaves another in its place.
struct Spoiler {
    std::string name;
    std::function<void(const std::string& cache, const std::string& scratch)> spoil;
};

void PrintTo(const Spoiler& spoiler, std::ostream* out) { *out << spoiler.name; }

void edit(const std::string& cache, const std::function<void(json&)>& change) {
    json doc = json::parse(read_text(cache));
    change(doc);
    write_text(cache, doc.dump());
}

std::vector<Spoiler> spoilers() {
    return {
        {"NotJson", [](const std::string& c, auto&) { write_text(c, R"({"schema": 1, "ent)"); }},
        {"Binary",
         [](const std::string& c, auto&) { write_text(c, std::string("\0\xff\xfe", 3)); }},
        {"InvalidUtf8",
         [](const std::string& c, auto&) {
             std::string text = read_text(c);
             text.replace(text.find("kilo"), 4, "\xff\xfe");
             write_text(c, text);
         }},
        {"AnArray", [](const std::string& c, auto&) { write_text(c, "[]"); }},
        {"Deep", [](const std::string& c, auto&) { write_text(c, std::string(100000, '[')); }},
        {"OtherSchema",
         [](const std::string& c, auto&) { edit(c, [](json& d) { d["schema"] = 2; }); }},
        {"InodeAsText",
         [](const std::string& c, auto&) {
             edit(c, [](json& d) {
                 auto& inode = d["entries"][0]["key"]["executable"]["inode"];
                 inode = std::to_string(inode.get<std::uint64_t>());
             });
         }},
        {"NegativeSize",
         [](const std::string& c, auto&) {
             edit(c, [](json& d) { d["entries"][0]["key"]["executable"]["size"] = -1; });
         }},
        {"ExtraField", [](const std::string& c,
                          auto&) { edit(c, [](json& d) { d["entries"][0]["by"] = "me"; }); }},
        {"AbsurdCommand",
         [](const std::string& c, auto&) {
             edit(c, [](json& d) { d["entries"][0]["key"]["command"] = std::string(5000, 'a'); });
         }},
        {"HostileVersion",
         [](const std::string& c, auto&) {
             edit(c, [](json& d) { d["entries"][0]["version"] = "9.9.9\x1b]0;owned\x07"; });
         }},
        {"TooManyEntries",
         [](const std::string& c, auto&) {
             edit(c, [](json& d) {
                 for (int i = 0; i < 64; ++i)
                     d["entries"].push_back(d["entries"][0]);
             });
         }},
        {"Huge", [](const std::string& c,
                    auto&) { write_text(c, read_text(c) + std::string(300 * 1024, ' ')); }},
        {"ASymlink",
         [](const std::string& c, const std::string& scratch) {
             write_text(scratch + "/elsewhere.json", read_text(c));
             fs::remove(c);
             fs::create_symlink(scratch + "/elsewhere.json", c);
         }},
        {"AFifo",
         [](const std::string& c, auto&) {
             fs::remove(c);
             ::mkfifo(c.c_str(), 0644);
         }},
    };
}

class SpoiledVersionCache : public HarnessVersionCache,
                            public ::testing::WithParamInterface<Spoiler> {};

TEST_P(SpoiledVersionCache, IsIgnoredWithANoteAndReplaced) {
    recorded_kilo("7.7.9");
    const std::string valid = read_text(m_cache);
    GetParam().spoil(m_cache, m_dir.path());

    const json spoiled = harness();
    EXPECT_EQ(spoiled.at("version"), "7.7.9") << spoiled.dump();
    const std::string note = spoiled.at("note");
    EXPECT_EQ(note.rfind("ignored the version cache " + m_cache + ": ", 0), 0U) << note;
    EXPECT_EQ(starts(), 2) << "the harness was not asked";

    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(m_cache)));
    EXPECT_EQ(read_text(m_cache), valid) << "the next answer replaces the file";
    EXPECT_EQ(harness().at("note"), "");
    EXPECT_EQ(starts(), 2);
    if (fs::exists(m_dir.path() + "/elsewhere.json")) {
        EXPECT_EQ(read_text(m_dir.path() + "/elsewhere.json"), valid) << "a link's target is kept";
    }
}

INSTANTIATE_TEST_SUITE_P(Spoilers, SpoiledVersionCache, ::testing::ValuesIn(spoilers()),
                         [](const auto& param) { return param.param.name; });

// Four `sonata harnesses` at once, each with harnesses of its own on its PATH, each recording
// three answers into an empty cache: none of them reads a torn file (it would be ignored with a
// note), the file is whole after every round, and nothing is left beside it.
TEST_F(HarnessVersionCache, RunsAtOnceLeaveAWholeFile) {
    const std::vector<std::string> names{"kilo", "reasonix", "droid"};
    for (int run = 1; run <= 4; ++run) {
        for (std::size_t i = 0; i < names.size(); ++i) {
            stand_in(m_dir.path() + "/bin" + std::to_string(run) + "/" + names[i],
                     std::to_string(run) + ".0." + std::to_string(i), "/bin/sh", names[i]);
        }
    }
    settle();
    const std::string four = "for i in 1 2 3 4; do PATH='" + m_dir.path() +
                             "'/bin$i:/usr/bin:/bin '" + std::string(SONATA_BIN) +
                             "' harnesses --json > out.$i & done; wait";
    m_env["PATH"] = m_dir.path() + "/bin1:/usr/bin:/bin";
    for (int round = 0; round < 5; ++round) {
        fs::remove(m_cache);
        const auto run = testing::run_program({"/bin/sh", "-c", four}, m_env, m_project);
        ASSERT_EQ(run.exit_code, 0) << run.err;
        const std::string text = read_text(m_cache);
        ASSERT_TRUE(json::accept(text)) << "round " << round << ":\n" << text;
        EXPECT_LE(json::parse(text).at("entries").size(), 12U);
        for (int i = 1; i <= 4; ++i) {
            for (const auto& h : json::parse(read_text(m_project + "/out." + std::to_string(i)))) {
                const bool installed = h.at("installed");
                EXPECT_TRUE(!installed || h.at("note") == "")
                    << "round " << round << ", run " << i << ": " << h.dump();
            }
        }
        EXPECT_EQ(harness().at("note"), "") << round;
    }
    std::vector<std::string> beside;
    for (const auto& entry : fs::directory_iterator(fs::path(m_cache).parent_path()))
        beside.push_back(entry.path().filename().string());
    EXPECT_EQ(beside, std::vector<std::string>{"versions.json"});

    for (std::size_t i = 0; i < names.size(); ++i)
        EXPECT_EQ(harness(names[i]).at("version"), "1.0." + std::to_string(i));
    const int before = starts();
    for (std::size_t i = 0; i < names.size(); ++i)
        EXPECT_EQ(harness(names[i]).at("version"), "1.0." + std::to_string(i));
    EXPECT_EQ(starts(), before) << "every answer was recorded";
}

} // namespace
} // namespace sonata
