// Which Node.js a Node.js harness runs on: its package's engines.node against PATH's node and the
// runtimes in sonata's harness cache.
#include "core/node_runtime.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "core/text.hpp"
#include "core/version_cache.hpp"

namespace sonata {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_max_package_json = 1U << 20U;
constexpr int k_max_levels_up = 6; // bin/cli.js sits a few levels under its package.json

/// True when the file starts with a `#!` line that runs node through env (`#!/usr/bin/env node`,
/// with or without options): a PATH put first decides which node that is.
bool runs_env_node(const std::string& script) {
    const std::string line = shebang_line(script);
    return line.find("/env") != std::string::npos && line.find(" node") != std::string::npos;
}

/// ">=22.19.0" (also ">= 22.19", ">=22") → "22.19.0"; empty for any other range form.
std::string minimum_of(std::string range) {
    range.erase(std::remove(range.begin(), range.end(), ' '), range.end());
    if (range.rfind(">=", 0) != 0 || range.find_first_of("|<^~ ") != std::string::npos) return {};
    auto numbers = version_numbers(range.substr(2));
    if (numbers.empty()) return {};
    numbers.resize(3, 0);
    return std::to_string(numbers[0]) + "." + std::to_string(numbers[1]) + "." +
           std::to_string(numbers[2]);
}

/// The version `node` in `dir` prints, without the v; empty when it does not run. An unchanged
/// node's answer comes from the version cache.
std::string version_in(const std::string& dir, const Environment& env, ProcessRunner& runner) {
    const auto key = version_key(version_command(dir + "/node", {"--version"}, "", env));
    const std::string cache = version_cache_path(env);
    if (key) {
        if (auto cached = cached_version(cache, *key); !cached.version.empty())
            return cached.version;
    }
    ProcessRequest request;
    request.argv = {dir + "/node", "--version"};
    for (const char* name : {"PATH", "HOME", "TMPDIR", "LANG"}) {
        if (const auto it = env.find(name); it != env.end()) request.env[name] = it->second;
    }
    request.timeout = std::chrono::seconds(10);
    request.max_output_bytes = 4096;
    const auto result = runner.run(request);
    if (!result || result->exit_code != 0) return {};
    const std::string out = trimmed(result->out);
    if (out.rfind('v', 0) != 0) return {};
    if (key) record_version(cache, *key, out.substr(1));
    return out.substr(1);
}

bool at_least(const std::string& version, const std::string& minimum) {
    const auto v = version_numbers(version);
    return !v.empty() && !(v < version_numbers(minimum));
}

} // namespace

std::string shebang_line(const std::string& script) {
    std::ifstream in(script, std::ios::binary);
    std::string line(256, '\0');
    in.read(line.data(), static_cast<std::streamsize>(line.size()));
    line.resize(static_cast<std::size_t>(in.gcount()));
    line = line.substr(0, line.find('\n'));
    return line.rfind("#!", 0) == 0 ? line : std::string{};
}

std::string nearest_package_json(const fs::path& dir) {
    fs::path at = dir;
    std::error_code ec;
    for (int level = 0; level < k_max_levels_up && !at.empty(); ++level) {
        if (fs::is_regular_file(at / "package.json", ec)) return (at / "package.json").string();
        if (at == at.root_path()) break;
        at = at.parent_path();
    }
    return {};
}

std::optional<NodeNeed> node_need(const std::string& executable) {
    std::error_code ec;
    const fs::path script = fs::canonical(executable, ec);
    if (ec || !runs_env_node(script.string())) return std::nullopt;
    const std::string package = nearest_package_json(script.parent_path());
    if (package.empty()) return std::nullopt;
    const auto text = read_file_bounded(package, k_max_package_json);
    if (!text) return std::nullopt;
    const auto doc = parse_json(*text);
    if (!doc || !doc->is_object()) return std::nullopt;
    const auto engines = doc->value("engines", nlohmann::json::object());
    const auto node =
        engines.is_object() ? engines.value("node", nlohmann::json()) : nlohmann::json();
    const std::string minimum = node.is_string() ? minimum_of(node.get<std::string>()) : "";
    if (minimum.empty()) return std::nullopt;
    const auto version = doc->value("version", nlohmann::json());
    return NodeNeed{minimum, version.is_string() ? version.get<std::string>() : ""};
}

std::string harness_cache_dir(const Environment& env) {
    if (const auto cache = env.find("SONATA_HARNESS_CACHE");
        cache != env.end() && !cache->second.empty())
        return cache->second;
    const auto home = env.find("HOME");
    if (home == env.end() || home->second.empty()) return {};
    return home->second + "/.cache/sonata/harnesses";
}

std::string harness_runtimes_dir(const Environment& env) {
    if (const auto dir = env.find("SONATA_RUNTIMES_DIR"); dir != env.end() && !dir->second.empty())
        return dir->second;
    const std::string cache = harness_cache_dir(env);
    return cache.empty() ? cache : cache + "/runtimes";
}

NodeChoice choose_node(const NodeNeed& need, const Environment& env, ProcessRunner& runner) {
    std::string found = "none";
    if (const auto path = env.find("PATH"); path != env.end()) {
        if (const auto node = search_path("node", path->second)) {
            const std::string version =
                version_in(fs::path(*node).parent_path().string(), env, runner);
            if (at_least(version, need.minimum)) return {};
            if (!version.empty()) found = version;
        }
    }
    NodeRuntime best;
    std::error_code ec;
    const std::string runtimes = harness_runtimes_dir(env);
    for (fs::directory_iterator it(runtimes, ec), end; !runtimes.empty() && !ec && it != end;
         it.increment(ec)) {
        const std::string dir = it->path().string() + "/bin";
        if (!is_executable_file(dir + "/node")) continue;
        const std::string version = version_in(dir, env, runner);
        if (at_least(version, need.minimum) &&
            (best.dir.empty() || version_numbers(best.version) < version_numbers(version)))
            best = {dir, version};
    }
    if (!best.dir.empty()) return {best.dir, ""};
    return {"", "needs Node.js >= " + need.minimum + "; found " + found +
                    " (fix: scripts/setup.sh installs one into " +
                    (runtimes.empty() ? std::string("sonata's harness cache") : runtimes) +
                    ", or put a Node.js >= " + need.minimum + " first on PATH)"};
}

void put_first_on_path(Environment& env, const std::string& dir) {
    if (dir.empty()) return;
    const auto path = env.find("PATH");
    env["PATH"] = dir + (path == env.end() || path->second.empty() ? "" : ":" + path->second);
}

} // namespace sonata
