// Matrix JSON: writing with a stable order, reading with full validation.
#include "core/matrix.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/enum_names.hpp"
#include "core/json_parse.hpp"
#include "core/text.hpp"

namespace sonata {
namespace {

using nlohmann::ordered_json;

/// The longest a cell can take: the longest probe timeout config allows (7 days), in ms.
constexpr std::int64_t k_max_duration_ms = 7LL * 24 * 3600 * 1000;
/// The largest matrix file sonata reads.
constexpr std::size_t k_max_matrix_bytes = 64U << 20U;

constexpr EnumNames<Verdict, 7> k_verdicts{{
    {"enforced", Verdict::enforced},
    {"violated", Verdict::violated},
    {"asked", Verdict::asked},
    {"refused-to-start", Verdict::refused_to_start},
    {"inconclusive", Verdict::inconclusive},
    {"not-applicable", Verdict::not_applicable},
    {"error", Verdict::error},
}};

ordered_json evidence_to_json(const Evidence& e) {
    return ordered_json{{"reason", e.reason},
                        {"files_changed", e.files_changed},
                        {"tool_calls", e.tool_calls},
                        {"tool_results", e.tool_results},
                        {"tools_offered", e.tools_offered},
                        {"exit_code", e.exit_code},
                        {"timed_out", e.timed_out},
                        {"output_tail", e.output_tail},
                        {"duration_ms", e.duration_ms}};
}

Evidence evidence_from_json(const ordered_json& j) {
    Evidence e;
    e.reason = j.value("reason", "");
    e.files_changed = j.value("files_changed", std::vector<std::string>{});
    e.tool_calls = j.value("tool_calls", std::vector<std::string>{});
    e.tool_results = j.value("tool_results", std::vector<std::string>{});
    e.tools_offered = j.value("tools_offered", std::vector<std::string>{});
    e.exit_code = j.value("exit_code", -1);
    e.timed_out = j.value("timed_out", false);
    e.output_tail = j.value("output_tail", "");
    e.duration_ms = j.value("duration_ms", 0L);
    return e;
}

/// Durations and exit codes are summed and printed by the reports: a duration near 2^63 would
/// overflow the JUnit totals, so each must be a whole number in its range.
Result<void> check_evidence_numbers(const ordered_json& e, const std::string& where) {
    const auto in_range = [&](const char* key, std::int64_t low,
                              std::int64_t high) -> Result<void> {
        if (!e.contains(key)) return {};
        const ordered_json& v = e.at(key);
        if (!v.is_number_integer() || v.get<std::int64_t>() < low || v.get<std::int64_t>() > high ||
            (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(high))) {
            return fail(ExitCode::bad_data,
                        where + ": evidence '" + key + "' must be a whole number from " +
                            std::to_string(low) + " to " + std::to_string(high));
        }
        return {};
    };
    if (auto ok = in_range("duration_ms", 0, k_max_duration_ms); !ok) return ok;
    return in_range("exit_code", -1, 511);
}

Result<Cell> cell_from_json(const ordered_json& j, const std::string& where) {
    if (!j.is_object()) return fail(ExitCode::bad_data, where + ": a cell must be an object");
    Cell c;
    for (const auto* key : {"harness", "version", "probe", "mode", "role", "verdict"}) {
        if (!j.contains(key) || !j.at(key).is_string()) {
            return fail(ExitCode::bad_data,
                        where + ": field '" + key + "' is missing or not a string");
        }
    }
    c.harness = j.at("harness").get<std::string>();
    c.version = j.at("version").get<std::string>();
    c.probe = j.at("probe").get<std::string>();
    c.mode = j.at("mode").get<std::string>();
    c.role = j.at("role").get<std::string>();
    c.machine = j.value("machine", "");
    auto verdict = parse_verdict(j.at("verdict").get<std::string>());
    if (!verdict) return fail(ExitCode::bad_data, where + ": " + verdict.error().message);
    c.verdict = *verdict;
    if (j.contains("evidence")) {
        const ordered_json& e = j.at("evidence");
        if (!e.is_object())
            return fail(ExitCode::bad_data, where + ": 'evidence' must be an object");
        SONATA_TRY(check_evidence_numbers(e, where));
        c.evidence = evidence_from_json(e);
    }
    return c;
}

} // namespace

std::string_view to_string(Verdict verdict) { return name_of(k_verdicts, verdict, "error"); }

Result<Verdict> parse_verdict(std::string_view text) {
    return parse_name(k_verdicts, text, "verdict", ExitCode::bad_data);
}

int strength(Verdict v) {
    switch (v) {
    case Verdict::enforced: return 3;
    case Verdict::asked: return 3;
    case Verdict::refused_to_start: return 2;
    case Verdict::not_applicable: return 2;
    case Verdict::inconclusive: return 1;
    case Verdict::error: return 1;
    case Verdict::violated: return 0;
    }
    return 0;
}

int weakening(Verdict before, Verdict now) {
    if (now == Verdict::violated && before != Verdict::violated)
        return strength(before) - strength(now);
    if ((before == Verdict::enforced || before == Verdict::asked) && now != before &&
        now != Verdict::enforced && now != Verdict::asked) {
        return strength(before) - strength(now);
    }
    return 0;
}

std::string this_machine() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
}

std::string Cell::key() const {
    return harness + "@" + version + " " + probe + " " + mode + " " + role;
}

const Cell* Matrix::find(const std::string& harness, const std::string& version,
                         const std::string& probe, const std::string& mode, const std::string& role,
                         const std::string& only_machine) const {
    const Cell* weakest = nullptr;
    for (const auto& c : cells) {
        if (c.harness != harness || c.version != version || c.probe != probe || c.mode != mode ||
            c.role != role) {
            continue;
        }
        if (!only_machine.empty() && c.machine != only_machine) continue;
        if (weakest == nullptr || strength(c.verdict) < strength(weakest->verdict)) weakest = &c;
    }
    return weakest;
}

std::vector<std::string> Matrix::machines() const {
    std::vector<std::string> labels;
    for (const auto& c : cells) {
        if (!c.machine.empty()) labels.push_back(c.machine);
    }
    std::sort(labels.begin(), labels.end());
    labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
    return labels;
}

void Matrix::sort() {
    std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) {
        return std::tie(a.harness, a.version, a.probe, a.mode, a.role, a.machine) <
               std::tie(b.harness, b.version, b.probe, b.mode, b.role, b.machine);
    });
}

void Matrix::merge(const std::vector<Cell>& more) {
    for (const auto& cell : more) {
        auto it = std::find_if(cells.begin(), cells.end(), [&](const Cell& c) {
            return c.key() == cell.key() && c.machine == cell.machine;
        });
        if (it != cells.end())
            *it = cell;
        else
            cells.push_back(cell);
    }
    sort();
}

std::string matrix_to_json(const Matrix& m) {
    ordered_json j;
    j["schema"] = m.schema;
    j["sonata_version"] = m.sonata_version;
    j["machine"] = m.machine;
    j["platform"] = m.platform;
    j["created_at"] = m.created_at;
    j["cells"] = ordered_json::array();
    Matrix sorted = m;
    sorted.sort();
    for (const auto& c : sorted.cells) {
        ordered_json cell{{"harness", c.harness}, {"version", c.version},
                          {"probe", c.probe},     {"mode", c.mode},
                          {"role", c.role},       {"verdict", to_string(c.verdict)}};
        if (!c.machine.empty()) cell["machine"] = c.machine;
        cell["evidence"] = evidence_to_json(c.evidence);
        j["cells"].push_back(cell);
    }
    return j.dump(2) + "\n";
}

Result<Matrix> parse_matrix(const std::string& text, const std::string& source) {
    auto parsed = parse_ordered_json(text);
    if (!parsed) {
        const bool deep = parsed.error().fault == JsonFault::too_deep;
        return fail(ExitCode::bad_data, source + ": not a valid matrix (" +
                                            (deep ? "" : "JSON error: ") + parsed.error().message +
                                            ")");
    }
    const ordered_json& j = *parsed;
    if (!j.is_object() || !j.contains("schema") || !j.at("schema").is_number_integer()) {
        return fail(ExitCode::bad_data, source + ": not a sonata matrix (no integer 'schema')");
    }
    Matrix m;
    m.schema = j.at("schema").get<int>();
    if (m.schema != Matrix::k_schema) {
        return fail(ExitCode::bad_data, source + ": matrix schema " + std::to_string(m.schema) +
                                            " is not supported (this sonata reads schema " +
                                            std::to_string(Matrix::k_schema) + ")");
    }
    try {
        m.sonata_version = j.value("sonata_version", "");
        m.machine = j.value("machine", "");
        m.platform = j.value("platform", "");
        m.created_at = j.value("created_at", "");
        if (!j.contains("cells") || !j.at("cells").is_array())
            return fail(ExitCode::bad_data, source + ": 'cells' must be an array");
        std::size_t index = 0;
        for (const auto& cj : j.at("cells")) {
            auto cell = cell_from_json(cj, source + ": cells[" + std::to_string(index++) + "]");
            SONATA_TRY(cell);
            m.cells.push_back(*cell);
        }
    } catch (const ordered_json::exception& e) {
        return fail(ExitCode::bad_data,
                    source + ": malformed matrix field (" + std::string(e.what()) + ")");
    }
    m.sort();
    return m;
}

Result<Matrix> load_matrix(const std::string& path) {
    // Only a regular file, and a bounded one: a FIFO never hangs plan, /dev/zero never fills
    // memory.
    auto text = read_file_bounded(path, k_max_matrix_bytes);
    if (!text) return fail(ExitCode::bad_data, text.error().message + " (the matrix file)");
    return parse_matrix(*text, path);
}

Result<void> save_matrix(const Matrix& matrix, const std::string& path) {
    return write_file_atomic(path, matrix_to_json(matrix));
}

std::string default_matrix_path(const std::string& machine_config_dir) {
    return machine_config_dir + "/matrix.json";
}

} // namespace sonata
