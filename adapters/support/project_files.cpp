// Project config texts and session-file lookups shared by the real harnesses' adapters.
#include "adapters/support/project_files.hpp"

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/json_parse.hpp"

namespace sonata::adapters::project {
namespace fs = std::filesystem;

std::string mcp_servers_json(const std::vector<std::string>& server_argv, std::string base) {
    auto config = parse_ordered_json(base).value_or(nullptr);
    if (!config.is_object()) config = nlohmann::ordered_json::object();
    nlohmann::ordered_json args = nlohmann::ordered_json::array();
    for (std::size_t i = 1; i < server_argv.size(); ++i)
        args.push_back(server_argv[i]);
    config["mcpServers"][k_mcp_server] = {
        {"command", server_argv.empty() ? std::string() : server_argv.front()}, {"args", args}};
    return config.dump(2) + "\n";
}

nlohmann::ordered_json session_start_hooks(const std::string& canary) {
    using Json = nlohmann::ordered_json;
    const Json hook{{"type", "command"}, {"command", touch_command(canary)}};
    return Json::array({Json{{"hooks", Json::array({hook})}}});
}

nlohmann::ordered_json touch_mcp_server(const std::string& canary) {
    using Json = nlohmann::ordered_json;
    return {{"command", "touch"}, {"args", Json::array({canary})}, {"trust", true}};
}

std::string toml_string(const std::string& text) { return nlohmann::json(text).dump(); }

std::string toml_array(const std::vector<std::string>& items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i)
        out += (i == 0 ? "" : ", ") + toml_string(items[i]);
    return out + "]";
}

std::string touch_command(const std::string& canary) { return "touch " + canary; }

std::string newest_file(const std::string& dir,
                        const std::function<bool(const std::string&)>& accept, int depth,
                        const std::function<bool(const std::string&)>& keep) {
    std::error_code ec;
    std::string best;
    fs::file_time_type best_time{};
    auto it =
        fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it.depth() >= depth) it.disable_recursion_pending();
        if (!it->is_regular_file(ec) || !accept(it->path().filename().string())) continue;
        const auto when = it->last_write_time(ec);
        if (ec) continue;
        if ((best.empty() || when > best_time) && (!keep || keep(it->path().string()))) {
            best = it->path().string();
            best_time = when;
        }
    }
    return best;
}

std::string read_head(const std::string& path, std::size_t max_bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::string text(max_bytes, '\0');
    in.read(text.data(), static_cast<std::streamsize>(max_bytes));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

std::string json_string_field(const std::string& text, const std::string& key) {
    const std::regex pattern("\"" + key + "\"\\s*:\\s*\"([^\"\\\\]*)\"");
    std::smatch match;
    return std::regex_search(text, match, pattern) ? match.str(1) : std::string();
}

std::vector<nlohmann::json> json_object_lines(const std::string& text) {
    std::vector<nlohmann::json> objects;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view line(text.data() + start, end - start);
        start = end + 1;
        if (line.empty() || line.front() != '{') continue;
        auto object = parse_json(line).value_or(nullptr);
        if (object.is_object()) objects.push_back(std::move(object));
    }
    return objects;
}

std::string string_member(const nlohmann::json& object, const char* key) {
    if (!object.is_object()) return {};
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<long long> count_member(const nlohmann::json& object, const char* key) {
    if (!object.is_object()) return std::nullopt;
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<long long>();
}

RunCost usage_tokens(const nlohmann::json& object, const char* input_key, const char* output_key) {
    RunCost cost;
    const auto usage = object.is_object() ? object.find("usage") : object.end();
    if (!object.is_object() || usage == object.end() || !usage->is_object()) return cost;
    cost.input_tokens = count_member(*usage, input_key);
    cost.output_tokens = count_member(*usage, output_key);
    return cost;
}

std::string first_uuid(const std::string& text) {
    static const std::regex k_uuid(
        "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
    std::smatch match;
    return std::regex_search(text, match, k_uuid) ? match.str(0) : std::string();
}

} // namespace sonata::adapters::project
