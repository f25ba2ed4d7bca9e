// Fuzzes the PreToolUse hook's input: parse_hook_input and record_hook_input on any bytes, and
// parse_session_record on the same bytes and on every record the hook writes, which must read back
// as the session and mode it was given. The hook's cwd is rebased into a scratch tree (projects
// marked by sonata.toml, by .sonata/, by a .sonata symlink, and a plain dir that falls back to the
// machine dir), and the process works in that tree's plain dir, so that no input can make the hook
// write outside it.
#include <climits>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/config.hpp"
#include "core/fs.hpp"
#include "core/mode.hpp"
#include "core/session.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using sonata::fuzz::check;
using sonata::fuzz::scratch_dir;

void make_dir(const std::string& path) { check(::mkdir(path.c_str(), 0755) == 0, "mkdir " + path); }

void make_file(const std::string& path) { std::ofstream(path) << "# fuzz\n"; }

/// HOME and XDG_CONFIG_HOME inside the scratch dir, with a machine config.toml so that a cwd
/// outside every project still records. Built once per process.
const std::map<std::string, std::string>& hook_env() {
    static const std::map<std::string, std::string> env = [] {
        const std::string& root = scratch_dir();
        for (const char* dir :
             {"/home", "/xdg", "/xdg/sonata", "/tmp", "/plain", "/project", "/project/sub",
              "/dotted", "/dotted/.sonata", "/linked", "/elsewhere"})
            make_dir(root + dir);
        make_file(root + "/xdg/sonata/config.toml");
        make_file(root + "/project/sonata.toml");
        make_file(root + "/linked/sonata.toml");
        check(::symlink((root + "/elsewhere").c_str(), (root + "/linked/.sonata").c_str()) == 0,
              "symlink");
        std::map<std::string, std::string> e{{"HOME", root + "/home"},
                                             {"XDG_CONFIG_HOME", root + "/xdg"}};
        // Above the scratch dir nothing may mark a project, or the hook would write there.
        check(sonata::locate_config(root + "/plain", e).project_dir.empty(),
              "an ancestor of " + root + " holds sonata.toml or .sonata/");
        // A hook input cut off before its cwd may record in the process's own cwd.
        check(::chdir((root + "/plain").c_str()) == 0, "chdir " + root + "/plain");
        return e;
    }();
    return env;
}

/// `cwd` as a path inside the scratch dir, or nullopt when it resolves outside it ("/../..").
std::optional<std::string> rebase(const std::string& cwd) {
    const std::string path = scratch_dir() + "/" + cwd;
    if (path.size() >= PATH_MAX || path.find('\0') != std::string::npos) return std::nullopt;
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr) return path; // missing: the hook refuses
    const std::string real(resolved);
    if (real != scratch_dir() && real.rfind(scratch_dir() + "/", 0) != 0) return std::nullopt;
    return path;
}

/// The record the hook wrote must read back as what it was given; then it goes, so the scratch
/// dir does not fill up.
void check_written(const std::string& path, const sonata::HookInput& input) {
    const auto text = sonata::read_file_bounded(path, 1U << 16U);
    check(text.has_value(), "cannot read back " + path);
    const auto record = sonata::parse_session_record(*text, path);
    check(record.has_value(), "the hook wrote a record it cannot parse: " + *text);
    check(record->session_id == input.session_id &&
              record->mode == sonata::fold_mode(input.permission_mode),
          "the record does not say what the hook was given: " + *text);
    check(path.rfind(scratch_dir() + "/", 0) == 0,
          "the hook wrote outside the scratch dir: " + path);
    check(path.rfind(scratch_dir() + "/linked/", 0) != 0,
          "the hook wrote through a symlink: " + path);
    std::remove(path.c_str());
}

bool same_fields(const sonata::HookInput& a, const sonata::HookInput& b) {
    return a.session_id == b.session_id && a.cwd == b.cwd && a.permission_mode == b.permission_mode;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = sonata::fuzz::as_text(data, size);
    const auto& env = hook_env();
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
    (void)sonata::parse_session_record(text, "fuzz.json");
    const auto input = sonata::parse_hook_input(text);
    if (!input) {
        check(!sonata::record_hook_input(text, env, now), "recorded input that does not parse");
        return 0;
    }
    char resolved[PATH_MAX];
    const bool cwd_exists =
        input->cwd.size() < PATH_MAX && ::realpath(input->cwd.c_str(), resolved) != nullptr;
    if (!input->cwd.empty() && !cwd_exists) {
        // No such directory: the hook must refuse as it is, so no rebasing is needed.
        check(!sonata::record_hook_input(text, env, now), "recorded a cwd that does not exist");
        return 0;
    }
    if (input->cwd.empty()) {
        // Only an input cut off before its cwd may record, in the process's cwd: the scratch dir.
        if (const auto written = sonata::record_hook_input(text, env, now))
            check_written(*written, *input);
        return 0;
    }
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return 0; // cannot rebase: never run it as it is
    const auto cwd = rebase(input->cwd);
    if (!cwd) return 0;
    // Duplicate keys: the DOM keeps the last, the hook may not; say what the hook read.
    doc["session_id"] = input->session_id;
    doc["cwd"] = *cwd;
    if (doc.contains("permission_mode")) doc["permission_mode"] = input->permission_mode;
    auto rebased = *input;
    rebased.cwd = *cwd;
    const std::string rewritten =
        doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const auto reparsed = sonata::parse_hook_input(rewritten);
    check(reparsed && same_fields(*reparsed, rebased), "hook input does not survive a dump");
    if (const auto written = sonata::record_hook_input(rewritten, env, now))
        check_written(*written, *input);
    return 0;
}
