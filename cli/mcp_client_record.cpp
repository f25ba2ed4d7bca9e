// The record of the last MCP client served (see mcp_client_record.hpp).
#include "cli/mcp_client_record.hpp"

#include <filesystem>
#include <memory>
#include <mutex>

#include "core/fs.hpp"
#include "core/json_parse.hpp"
#include "dispatch/receipt.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::cli {
namespace {

using mcp::json;

constexpr std::size_t k_max_record = 4096;

/// .sonata/mcp-client.json of the project `context` works in.
Result<std::string> record_path(const Context& context) {
    auto runs = dispatch::runs_root(context.cwd, context.env);
    SONATA_TRY(runs);
    return (std::filesystem::path(*runs).parent_path() / "mcp-client.json").string();
}

} // namespace

std::function<void(const mcp::ClientSeen&)> client_recorder(const Context& context) {
    struct Last {
        std::mutex mutex;
        std::string written;
    };
    auto last = std::make_shared<Last>();
    return [context, last](const mcp::ClientSeen& seen) {
        const json record = {
            {"protocol", seen.protocol}, {"client", seen.client}, {"tasks", seen.tasks}};
        std::lock_guard lock(last->mutex);
        if (record.dump() == last->written) return;
        auto path = record_path(context);
        if (!path) return;
        json stamped = record;
        stamped["at"] = dispatch::utc_now();
        WriteOptions options;
        options.durability = Durability::unsynced;
        if (write_file_atomic(*path, stamped.dump() + "\n", options)) last->written = record.dump();
    };
}

Result<std::optional<ClientRecord>> last_client(const Context& context) {
    auto path = record_path(context);
    SONATA_TRY(path);
    std::error_code ec;
    if (!std::filesystem::exists(*path, ec)) return std::optional<ClientRecord>();
    auto text = read_file_bounded(*path, k_max_record);
    SONATA_TRY(text);
    auto doc = parse_json(*text);
    const auto bad = [&] { return fail(ExitCode::bad_data, *path + ": not a client record"); };
    if (!doc || !doc->is_object()) return bad();
    const json& r = *doc;
    for (const char* key : {"protocol", "client", "at"})
        if (!r.contains(key) || !r[key].is_string()) return bad();
    if (!r.contains("tasks") || !r["tasks"].is_boolean()) return bad();
    return std::optional<ClientRecord>(
        ClientRecord{{r["protocol"], r["client"], r["tasks"].get<bool>()}, r["at"]});
}

} // namespace sonata::cli
