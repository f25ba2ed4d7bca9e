// Session files: the hook's validation and atomic write, and plan's lookup. The hook writes only
// into a directory it opened itself (the project's real .sonata/ directory, never a symlink, or
// the machine config dir), under a name built from a validated id.
#include "core/session.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/config.hpp"
#include "core/fs.hpp"
#include "core/json_parse.hpp"

namespace sonata {
namespace {

using json = nlohmann::json;

constexpr std::size_t k_max_session_file = 64U * 1024U;
constexpr std::chrono::seconds k_max_clock_skew{60};
constexpr std::array<Mode, 4> k_modes{Mode::plan, Mode::default_mode, Mode::accept_edits,
                                      Mode::bypass_permissions};

/// Closes a descriptor when it goes out of scope.
struct DirFd {
    int fd = -1;
    explicit DirFd(int value) : fd(value) {}
    ~DirFd() {
        if (fd >= 0) ::close(fd);
    }
    DirFd(const DirFd&) = delete;
    DirFd& operator=(const DirFd&) = delete;
};

/// Collects the top-level session_id, cwd and permission_mode of a hook input as a streaming
/// parser meets them; whatever follows them (tool_input) may be invalid or cut off.
class HookFields : public nlohmann::json_sax<json> {
public:
    bool is_object = false;
    std::optional<std::string> session_id;
    std::optional<std::string> cwd;
    std::string permission_mode;
    bool mode_not_string = false;

    bool null() override { return scalar(); }
    bool boolean(bool) override { return scalar(); }
    bool number_integer(number_integer_t) override { return scalar(); }
    bool number_unsigned(number_unsigned_t) override { return scalar(); }
    bool number_float(number_float_t, const string_t&) override { return scalar(); }
    bool binary(binary_t&) override { return scalar(); }
    bool string(string_t& value) override {
        if (m_depth == 1 && m_key == Key::session_id) session_id = value;
        if (m_depth == 1 && m_key == Key::cwd) cwd = value;
        if (m_depth == 1 && m_key == Key::mode) take_mode(value);
        m_key = Key::other;
        return true;
    }
    bool start_object(std::size_t) override { return open(true); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& name) override {
        if (m_depth != 1) return true;
        m_key = name == "session_id"        ? Key::session_id
                : name == "cwd"             ? Key::cwd
                : name == "permission_mode" ? Key::mode
                                            : Key::other;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

private:
    enum class Key { other, session_id, cwd, mode };
    std::size_t m_depth = 0;
    Key m_key = Key::other;

    bool scalar() {
        if (m_depth == 0) return false; // a top-level scalar is not a hook input
        if (m_depth == 1 && m_key == Key::session_id) session_id.reset();
        if (m_depth == 1 && m_key == Key::cwd) cwd.reset();
        if (m_depth == 1 && m_key == Key::mode) mode_not_string = true;
        m_key = Key::other;
        return true;
    }
    bool open(bool object) {
        if (m_depth == 0 && !object) return false;
        if (m_depth == 0) is_object = true;
        if (m_depth == 1) scalar(); // a nested value under a key we read does not count
        ++m_depth;
        return true;
    }
    bool close() {
        --m_depth;
        return true;
    }
    /// A second permission_mode never widens the first: the narrower one stands.
    void take_mode(const std::string& value) {
        if (!m_mode_seen || no_wider_than(fold_mode(value), fold_mode(permission_mode)))
            permission_mode = value;
        m_mode_seen = true;
    }
    bool m_mode_seen = false;
};

/// The id as it may appear in a message: printable ASCII only, bounded.
std::string printable(std::string_view text) {
    std::string out;
    for (const char c : text.substr(0, 64))
        out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return text.size() > 64 ? out + "…" : out;
}

std::optional<Mode> mode_from_spelling(std::string_view text) {
    for (const Mode mode : k_modes) {
        if (to_string(mode) == text) return mode;
    }
    return std::nullopt;
}

/// The canonical directory for a hook's cwd: absolute, existing, a directory, symlinks resolved.
std::optional<std::string> resolve_cwd(const std::string& cwd) {
    if (cwd.empty() || cwd.front() != '/' || cwd.find('\0') != std::string::npos)
        return std::nullopt;
    if (cwd.size() >= PATH_MAX) return std::nullopt;
    char resolved[PATH_MAX];
    if (::realpath(cwd.c_str(), resolved) == nullptr) return std::nullopt;
    struct stat st {};
    if (::stat(resolved, &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
    return std::string(resolved);
}

/// Opens <project>/.sonata as a real directory (never through a symlink), creating it when the
/// project is marked only by sonata.toml. -1 when that is not possible.
int open_project_state_dir(const std::string& project_dir) {
    const DirFd project(::open(project_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (project.fd < 0) return -1;
    struct stat st {};
    if (::fstatat(project.fd, ".sonata", &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT || ::mkdirat(project.fd, ".sonata", 0755) != 0) return -1;
    } else if (!S_ISDIR(st.st_mode)) {
        return -1;
    }
    return ::openat(project.fd, ".sonata", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

std::optional<std::string> write_record(int dir_fd, const std::string& dir,
                                        const SessionRecord& record) {
    const DirFd guard(dir_fd);
    if (dir_fd < 0) return std::nullopt;
    const std::string name = session_file_name(record.session_id);
    // No fsync: the file is rewritten on every tool call, and a lost update after a crash only
    // leaves an older mode that the next tool call replaces.
    const WriteOptions options{.durability = Durability::unsynced, .parents = Parents::must_exist};
    if (!write_file_atomic_at(dir_fd, name, session_record_to_json(record), options))
        return std::nullopt;
    return dir + "/" + name;
}

Result<std::optional<SessionLookup>> read_session(const std::string& path, const std::string& id,
                                                  std::chrono::seconds max_age,
                                                  std::chrono::system_clock::time_point now) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return std::optional<SessionLookup>{};
    auto text = read_file_bounded(path, k_max_session_file);
    SONATA_TRY(text);
    auto record = parse_session_record(*text, path);
    SONATA_TRY(record);
    if (record->session_id != id) {
        return fail(ExitCode::bad_data, path + ": holds session '" + printable(record->session_id) +
                                            "', not '" + id + "'");
    }
    SessionLookup found{path, *record, {}, false};
    const auto now_s =
        std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    found.age = std::chrono::seconds(now_s - record->updated_at);
    // A file dated in the future would never go stale: beyond a small clock skew, it is stale now.
    found.stale = found.age > max_age || found.age < -k_max_clock_skew;
    return std::optional<SessionLookup>{found};
}

} // namespace

bool is_safe_session_id(std::string_view id) {
    if (id.empty() || id.size() > k_max_session_id) return false;
    for (const char c : id) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

std::string session_file_name(std::string_view id) {
    return "session-" + std::string(id) + ".json";
}

std::optional<HookInput> parse_hook_input(std::string_view text) {
    HookFields fields;
    const bool complete =
        json::sax_parse(text.begin(), text.end(), &fields, json::input_format_t::json, true);
    if (!fields.is_object || !fields.session_id) return std::nullopt;
    if (complete && (fields.mode_not_string || !fields.cwd)) return std::nullopt;
    return HookInput{*fields.session_id, fields.cwd.value_or(""), fields.permission_mode, complete};
}

// Calendar arithmetic with <chrono> rather than gmtime_r/timegm, which read the time zone
// database on first use: the hook writes a time on every call.
std::string format_utc(std::int64_t unix_seconds) {
    using namespace std::chrono;
    const sys_seconds t{seconds(unix_seconds)};
    const auto midnight = floor<days>(t);
    const year_month_day date{midnight};
    const hh_mm_ss time{t - midnight};
    char buffer[80];
    const int n = std::snprintf(
        buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
        static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
        static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
        static_cast<int>(time.seconds().count()));
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

std::optional<std::int64_t> parse_utc(std::string_view text) {
    using namespace std::chrono;
    if (text.size() != 20) return std::nullopt;
    const std::string copy(text);
    int y = 0;
    unsigned mo = 0;
    unsigned d = 0;
    int h = 0;
    int mi = 0;
    int s = 0;
    int consumed = 0;
    if (std::sscanf(copy.c_str(), "%4d-%2u-%2uT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &s,
                    &consumed) != 6 ||
        consumed != 20) {
        return std::nullopt;
    }
    const year_month_day date{year(y), month(mo), day(d)};
    if (!date.ok() || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) return std::nullopt;
    const auto total = sys_days(date).time_since_epoch() + hours(h) + minutes(mi) + seconds(s);
    const std::int64_t unix_seconds = duration_cast<seconds>(total).count();
    if (format_utc(unix_seconds) != text) return std::nullopt; // e.g. "+2026" or " 9" fields
    return unix_seconds;
}

std::string session_record_to_json(const SessionRecord& record) {
    nlohmann::ordered_json j;
    j["session_id"] = record.session_id;
    j["mode"] = to_string(record.mode);
    j["updated_at"] = format_utc(record.updated_at);
    return j.dump() + "\n";
}

Result<SessionRecord> parse_session_record(std::string_view text, const std::string& source) {
    const auto corrupt = [&](const std::string& what) {
        return fail(ExitCode::bad_data, source + ": corrupt session file (" + what +
                                            "); delete it and the next tool call rewrites it");
    };
    auto parsed = parse_json(text);
    if (!parsed && parsed.error().fault == JsonFault::too_deep) return corrupt("nested too deep");
    if (!parsed) return corrupt("not valid JSON");
    const json& doc = *parsed;
    if (!doc.is_object()) return corrupt("not a JSON object");
    SessionRecord record;
    const auto id = doc.find("session_id");
    if (id == doc.end() || !id->is_string() || !is_safe_session_id(id->get<std::string>())) {
        return corrupt("'session_id' is missing or not a safe id");
    }
    record.session_id = id->get<std::string>();
    const auto mode = doc.find("mode");
    const auto parsed_mode = mode != doc.end() && mode->is_string()
                                 ? mode_from_spelling(mode->get<std::string>())
                                 : std::nullopt;
    if (!parsed_mode)
        return corrupt(
            "'mode' is missing or not one of plan, default, acceptEdits, bypassPermissions");
    record.mode = *parsed_mode;
    const auto updated = doc.find("updated_at");
    const auto when = updated != doc.end() && updated->is_string()
                          ? parse_utc(updated->get<std::string>())
                          : std::nullopt;
    if (!when)
        return corrupt(
            "'updated_at' is missing or not an ISO 8601 UTC time like 2026-11-01T22:00:00Z");
    record.updated_at = *when;
    return record;
}

std::optional<std::string> record_hook_input(std::string_view text,
                                             const std::map<std::string, std::string>& env,
                                             std::chrono::system_clock::time_point now) {
    const auto input = parse_hook_input(text);
    if (!input || !is_safe_session_id(input->session_id)) return std::nullopt;
    // An input that broke off before its cwd still names the session: Claude Code runs hooks in
    // the project, so the hook's own directory finds the file whose mode must not stay wider.
    std::string from = input->cwd;
    if (from.empty() && !input->complete) {
        char here[PATH_MAX];
        if (::getcwd(here, sizeof here) != nullptr) from = here;
    }
    const auto cwd = resolve_cwd(from);
    if (!cwd) return std::nullopt;
    const SessionRecord record{
        input->session_id, fold_mode(input->permission_mode),
        std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count()};
    const ConfigLocation where = locate_config(*cwd, env);
    if (!where.project_dir.empty()) {
        return write_record(open_project_state_dir(where.project_dir),
                            where.project_dir + "/.sonata", record);
    }
    if (!where.machine_file.empty()) {
        return write_record(::open(where.machine_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC),
                            where.machine_dir, record);
    }
    return std::nullopt;
}

int run_hook(const std::map<std::string, std::string>& env) {
    try {
        std::string input;
        char buffer[65536];
        for (;;) {
            const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return 0;
            if (n == 0) break;
            input.append(buffer, static_cast<std::size_t>(n));
            if (input.size() >= k_max_hook_input) { // never buffer without bound: the fields
                input.resize(k_max_hook_input);     // sonata reads come first
                break;
            }
        }
        record_hook_input(input, env, std::chrono::system_clock::now());
    } catch (
        ...) { // NOLINT(bugprone-empty-catch): the hook must never fail Claude Code's tool call
    }
    return 0;
}

Result<std::optional<SessionLookup>> find_session(const std::string& session_id,
                                                  const std::string& project_dir,
                                                  const std::string& machine_dir,
                                                  std::chrono::seconds max_age,
                                                  std::chrono::system_clock::time_point now) {
    if (!is_safe_session_id(session_id)) {
        return fail(ExitCode::usage,
                    "session id '" + printable(session_id) +
                        "' is not a safe id: use 1 to 128 of the characters A-Z a-z 0-9 _ -");
    }
    const std::string name = session_file_name(session_id);
    if (!project_dir.empty()) {
        auto found = read_session(project_dir + "/.sonata/" + name, session_id, max_age, now);
        if (!found || *found) return found;
    }
    return read_session(machine_dir + "/" + name, session_id, max_age, now);
}

std::optional<std::string> freshest_session(const std::string& cwd,
                                            const std::map<std::string, std::string>& env,
                                            std::chrono::seconds fresh,
                                            std::chrono::system_clock::time_point now) {
    const auto where = locate_config(cwd, env);
    std::vector<std::string> dirs;
    if (!where.project_dir.empty()) dirs.push_back(where.project_dir + "/.sonata");
    if (!where.machine_dir.empty()) dirs.push_back(where.machine_dir);
    std::optional<SessionRecord> best;
    for (const auto& dir : dirs) {
        std::error_code ec;
        for (auto it = std::filesystem::directory_iterator(dir, ec);
             !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.rfind("session-", 0) != 0 || !name.ends_with(".json")) continue;
            auto text = read_file_bounded(it->path().string(), 4096);
            if (!text) continue;
            auto record = parse_session_record(*text, it->path().string());
            if (!record) continue;
            const auto age = std::chrono::duration_cast<std::chrono::seconds>(
                now - std::chrono::system_clock::from_time_t(record->updated_at));
            if (age > fresh || age < -fresh) continue;
            if (!best || no_wider_than(record->mode, best->mode)) best = *record;
        }
        if (best) break; // the project's files first, as find_session looks
    }
    if (!best) return std::nullopt;
    return best->session_id;
}

} // namespace sonata
