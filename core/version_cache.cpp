// The version cache: a version command's identity (stat of every file it runs) and one bounded
// JSON file of answers. Everything read back is checked field by field against what this file
// writes; one entry that is not is reason to ignore the whole file.
#include "core/version_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/node_runtime.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int k_schema = 1;
constexpr std::size_t k_max_entries = 64;
constexpr std::size_t k_max_file_bytes = 256U * 1024U;
constexpr std::size_t k_max_string = 4096; // PATH_MAX
constexpr std::size_t k_max_args = 32;
constexpr std::size_t k_max_version = 64;
constexpr std::int64_t k_settle_ns = 1'000'000'000;

std::int64_t nanoseconds(const timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::optional<FileIdentity> identity_of(const std::string& path) {
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    struct stat st {};
    if (ec || ::stat(real.c_str(), &st) != 0) return std::nullopt;
    return FileIdentity{real.string(),
                        static_cast<std::uint64_t>(st.st_dev),
                        static_cast<std::uint64_t>(st.st_ino),
                        static_cast<std::uint64_t>(st.st_size),
                        nanoseconds(st.st_mtim),
                        nanoseconds(st.st_ctim)};
}

/// The program a `#!` line runs: its first word, or for `/usr/bin/env [options] NAME`, NAME
/// looked up on `search`; empty when it names none.
std::string interpreter_of(const std::string& line, const std::string& search) {
    std::istringstream words(line.substr(2));
    std::string word;
    if (!(words >> word)) return {};
    if (fs::path(word).filename() != "env") return word;
    while (words >> word) {
        if (word.front() == '-' || word.find('=') != std::string::npos) continue;
        if (word.find('/') != std::string::npos) return word;
        return search_path(word, search).value_or("");
    }
    return {};
}

/// A version as the adapters' parsers give it: a digit first, then digits, letters, '.', '+',
/// '-'; at most k_max_version characters.
bool plain_version(const std::string& version) {
    if (version.empty() || version.size() > k_max_version) return false;
    if (version.front() < '0' || version.front() > '9') return false;
    for (const char c : version) {
        const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                        (c >= 'A' && c <= 'Z') || c == '.' || c == '+' || c == '-';
        if (!ok) return false;
    }
    return true;
}

json identity_json(const FileIdentity& id) {
    return {{"path", id.path}, {"device", id.device},     {"inode", id.inode},
            {"size", id.size}, {"mtime_ns", id.mtime_ns}, {"ctime_ns", id.ctime_ns}};
}

json optional_identity_json(const std::optional<FileIdentity>& id) {
    return id ? identity_json(*id) : json(nullptr);
}

json key_json(const VersionKey& key) {
    return {{"command", key.command},
            {"executable", identity_json(key.executable)},
            {"interpreter", optional_identity_json(key.interpreter)},
            {"package", optional_identity_json(key.package)},
            {"args", key.args},
            {"path_first", key.path_first}};
}

/// A string of at most k_max_string bytes at `doc[name]`.
std::optional<std::string> string_at(const json& doc, const char* name) {
    const auto it = doc.find(name);
    if (it == doc.end() || !it->is_string()) return std::nullopt;
    auto text = it->get<std::string>();
    if (text.size() > k_max_string) return std::nullopt;
    return text;
}

std::optional<std::uint64_t> unsigned_at(const json& doc, const char* name) {
    const auto it = doc.find(name);
    if (it == doc.end() || !it->is_number_unsigned()) return std::nullopt;
    return it->get<std::uint64_t>();
}

std::optional<std::int64_t> signed_at(const json& doc, const char* name) {
    const auto it = doc.find(name);
    if (it == doc.end() || !it->is_number_integer()) return std::nullopt;
    if (it->is_number_unsigned() &&
        it->get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return std::nullopt;
    return it->get<std::int64_t>();
}

std::optional<FileIdentity> identity_from(const json& doc) {
    if (!doc.is_object() || doc.size() != 6) return std::nullopt;
    const auto path = string_at(doc, "path");
    const auto device = unsigned_at(doc, "device");
    const auto inode = unsigned_at(doc, "inode");
    const auto size = unsigned_at(doc, "size");
    const auto mtime = signed_at(doc, "mtime_ns");
    const auto ctime = signed_at(doc, "ctime_ns");
    if (!path || !device || !inode || !size || !mtime || !ctime) return std::nullopt;
    return FileIdentity{*path, *device, *inode, *size, *mtime, *ctime};
}

/// `doc[name]`: null for none, else an identity; false when it is neither.
bool optional_identity_from(const json& doc, const char* name, std::optional<FileIdentity>& out) {
    const auto it = doc.find(name);
    if (it == doc.end()) return false;
    if (it->is_null()) return true;
    out = identity_from(*it);
    return out.has_value();
}

std::optional<std::vector<std::string>> args_from(const json& doc) {
    const auto it = doc.find("args");
    if (it == doc.end() || !it->is_array() || it->size() > k_max_args) return std::nullopt;
    std::vector<std::string> args;
    for (const auto& arg : *it) {
        if (!arg.is_string() || arg.get_ref<const std::string&>().size() > k_max_string)
            return std::nullopt;
        args.push_back(arg.get<std::string>());
    }
    return args;
}

std::optional<VersionKey> key_from(const json& doc) {
    if (!doc.is_object() || doc.size() != 6) return std::nullopt;
    VersionKey key;
    const auto command = string_at(doc, "command");
    const auto path_first = string_at(doc, "path_first");
    const auto executable = doc.contains("executable") ? identity_from(doc["executable"])
                                                       : std::optional<FileIdentity>{};
    auto args = args_from(doc);
    if (!command || !path_first || !executable || !args ||
        !optional_identity_from(doc, "interpreter", key.interpreter) ||
        !optional_identity_from(doc, "package", key.package))
        return std::nullopt;
    key.command = *command;
    key.executable = *executable;
    key.args = std::move(*args);
    key.path_first = *path_first;
    key.settled = true; // only settled keys are written
    return key;
}

/// One recorded answer.
struct Entry {
    VersionKey key;
    std::string version;
};

std::optional<Entry> entry_from(const json& doc) {
    if (!doc.is_object() || doc.size() != 2 || !doc.contains("key")) return std::nullopt;
    auto key = key_from(doc["key"]);
    const auto version = string_at(doc, "version");
    if (!key || !version || !plain_version(*version)) return std::nullopt;
    return Entry{std::move(*key), *version};
}

/// The file's entries, newest first, or why it cannot be believed.
struct Loaded {
    std::vector<Entry> entries;
    std::string problem; ///< Empty when the file was read, or is absent.
};

Loaded entries_in(const std::string& text, const std::string& path) {
    const auto doc = parse_json(text);
    if (!doc) {
        // The parser's message quotes the bytes it stopped at: none of them reaches the note.
        return {{},
                path + ": not JSON" +
                    (doc.error().fault == JsonFault::too_deep
                         ? std::string(" (nested too deep)")
                         : " (at byte " + std::to_string(doc.error().byte) + ")")};
    }
    const auto entries = doc->is_object() ? doc->find("entries") : doc->end();
    if (!doc->is_object() || doc->value("schema", json()) != k_schema || entries == doc->end() ||
        !entries->is_array())
        return {{},
                path + ": not sonata's version cache (schema " + std::to_string(k_schema) +
                    " with entries)"};
    if (entries->size() > k_max_entries)
        return {{}, path + ": more than " + std::to_string(k_max_entries) + " entries"};
    Loaded out;
    for (std::size_t i = 0; i < entries->size(); ++i) {
        auto entry = entry_from((*entries)[i]);
        if (!entry) return {{}, path + ": entry " + std::to_string(i + 1) + " is malformed"};
        out.entries.push_back(std::move(*entry));
    }
    return out;
}

Loaded load(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return {};
    const fs::path file(path);
    const int dir = ::open(file.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return {{}, path + ": its directory cannot be opened"};
    auto text = read_file_bounded_at(dir, file.filename().string(), k_max_file_bytes, path);
    ::close(dir);
    if (!text) return {{}, text.error().message};
    return entries_in(*text, path);
}

/// The file for `entries` (newest first): one entry a line, as many as fit in k_max_file_bytes.
std::string file_text(const std::vector<Entry>& entries) {
    std::string text = "{\"schema\": " + std::to_string(k_schema) + ", \"entries\": [\n";
    const std::string end = "\n]}\n";
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const std::string line =
            json{{"key", key_json(entries[i].key)}, {"version", entries[i].version}}.dump(
                -1, ' ', false, json::error_handler_t::replace);
        if (text.size() + line.size() + 2 + end.size() > k_max_file_bytes) break;
        text += (i == 0 ? "" : ",\n") + line;
    }
    return text + end;
}

bool same_command(const VersionKey& a, const VersionKey& b) {
    return a.command == b.command && a.args == b.args && a.path_first == b.path_first;
}

} // namespace

VersionCommand version_command(std::string executable, std::vector<std::string> args,
                               std::string path_first, const Environment& env) {
    const auto path = env.find("PATH");
    return {std::move(executable), std::move(args), std::move(path_first),
            path == env.end() ? std::string{} : path->second};
}

std::optional<VersionKey> version_key(const VersionCommand& command) {
    auto executable = identity_of(command.executable);
    if (!executable) return std::nullopt;
    VersionKey key{command.executable, *executable, {}, {}, command.args, command.path_first};
    if (const std::string line = shebang_line(executable->path); !line.empty()) {
        Environment search;
        if (!command.path.empty()) search["PATH"] = command.path;
        put_first_on_path(search, command.path_first);
        if (const std::string interpreter = interpreter_of(line, search["PATH"]);
            !interpreter.empty())
            key.interpreter = identity_of(interpreter);
        if (const std::string package =
                nearest_package_json(fs::path(executable->path).parent_path());
            !package.empty())
            key.package = identity_of(package);
    }
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    std::int64_t newest = key.executable.ctime_ns;
    for (const auto& other : {key.interpreter, key.package}) {
        if (other) newest = std::max(newest, other->ctime_ns);
    }
    key.settled = newest <= now - k_settle_ns;
    return key;
}

std::string version_cache_path(const Environment& env) {
    const auto absolute = [&env](const char* name) {
        const auto it = env.find(name);
        return it != env.end() && !it->second.empty() && it->second.front() == '/' ? it->second
                                                                                   : std::string{};
    };
    if (const std::string xdg = absolute("XDG_CACHE_HOME"); !xdg.empty())
        return xdg + "/sonata/versions.json";
    if (const std::string home = absolute("HOME"); !home.empty())
        return (home == "/" ? "" : home) + "/.cache/sonata/versions.json";
    return {};
}

CachedVersion cached_version(const std::string& cache_path, const VersionKey& key) {
    if (cache_path.empty() || !key.settled) return {};
    const Loaded loaded = load(cache_path);
    if (!loaded.problem.empty()) return {{}, "ignored the version cache " + loaded.problem};
    for (const auto& entry : loaded.entries) {
        if (entry.key == key) return {entry.version, {}};
    }
    return {};
}

bool record_version(const std::string& cache_path, const VersionKey& key,
                    const std::string& version) {
    if (cache_path.empty() || !key.settled || !plain_version(version)) return false;
    // What is written must read back as itself, or it would be ignored (with a note) every time.
    if (key_from(key_json(key)) != key) return false;
    std::vector<Entry> entries{{key, version}};
    for (auto& old : load(cache_path).entries) {
        if (!same_command(old.key, key) && entries.size() < k_max_entries)
            entries.push_back(std::move(old));
    }
    const std::string text = file_text(entries);
    return static_cast<bool>(write_file_atomic(
        cache_path, text, {.durability = Durability::unsynced, .parents = Parents::create}));
}

} // namespace sonata
