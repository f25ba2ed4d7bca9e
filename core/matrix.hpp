// The capability matrix: every verdict measured on one machine, keyed by harness, harness version,
// probe, mode and role. Versioned JSON (schema 1), stable ordering so two runs diff cleanly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/fs.hpp" // write_file_atomic, which matrix users have always reached from here
#include "core/result.hpp"

namespace sonata {

/// The outcome of one probe cell. Spellings are matrix keys: never rename.
enum class Verdict {
    enforced,         ///< The property held: the forbidden action changed nothing.
    violated,         ///< The forbidden action took effect.
    asked,            ///< The harness raised an approval prompt instead of acting.
    refused_to_start, ///< The harness would not start with this invocation.
    inconclusive,     ///< The run did not reach the point of testing the property (reason given).
    not_applicable,   ///< The harness lacks the feature the probe needs (reason given).
    error,            ///< sonata itself failed.
};

std::string_view to_string(Verdict verdict);
Result<Verdict> parse_verdict(std::string_view text);

/// How much weaker `now` is than `before`: >0 means a cell got weaker (enforced → violated…).
int weakening(Verdict before, Verdict now);

/// What a verdict rests on.
struct Evidence {
    std::string reason;                     ///< Required for not-applicable and inconclusive.
    std::vector<std::string> files_changed; ///< Canary/victim paths created, changed or removed.
    std::vector<std::string> tool_calls;    ///< What the scripted model asked for, "name {args}".
    std::vector<std::string> tool_results;  ///< What the harness sent back (refusal texts).
    std::vector<std::string> tools_offered; ///< Tool names the harness offered the model.
    int exit_code = -1;
    bool timed_out = false;
    std::string output_tail; ///< Last lines of stdout/stderr or the pane.
    long duration_ms = 0;

    bool operator==(const Evidence&) const = default;
};

/// The role key of the parent's own cells (Claude Code measured as a user runs it, the reference a
/// child is held to), beside "read-only" and "write", the roles of the mappings sonata runs.
inline constexpr std::string_view k_parent_role = "parent";

/// One measured cell.
struct Cell {
    std::string harness; ///< Harness id.
    std::string version; ///< Harness version ("" when unknown).
    std::string probe;   ///< Probe id.
    std::string mode;    ///< Effective mode, Claude Code spelling.
    std::string role;    ///< "read-only" or "write".
    Verdict verdict = Verdict::inconclusive;
    Evidence evidence;
    std::string machine; ///< Set when matrices from several machines are merged; else empty.

    /// "harness@version probe mode role": the stable key.
    std::string key() const;
    bool operator==(const Cell&) const = default;
};

struct Matrix {
    static constexpr int k_schema = 1;
    int schema = k_schema;
    std::string sonata_version;
    std::string machine;     ///< Host name (or a label given with --machine).
    std::string platform;    ///< e.g. "linux-x86_64".
    std::string created_at;  ///< ISO 8601 UTC.
    std::vector<Cell> cells; ///< Sorted by key.

    /// The cell for a key, or nullptr. When several cells hold the key (a merged matrix, or one
    /// edited by hand), the weakest verdict wins: a matrix can never vouch for more than its worst
    /// measurement. `only_machine` non-empty: only cells labelled with that machine count.
    const Cell* find(const std::string& harness, const std::string& version,
                     const std::string& probe, const std::string& mode, const std::string& role,
                     const std::string& only_machine = {}) const;

    /// The machine labels of merged cells, sorted and unique; empty for one machine's own matrix.
    std::vector<std::string> machines() const;

    /// Adds or replaces cells (same key), keeping the order sorted.
    void merge(const std::vector<Cell>& more);

    void sort();
};

std::string matrix_to_json(const Matrix& matrix);

/// Parses and validates; any problem is an ExitCode::bad_data error naming `source`.
Result<Matrix> parse_matrix(const std::string& text, const std::string& source);

/// Reads a matrix file. A missing file is an error too: callers decide whether that means "no
/// data".
Result<Matrix> load_matrix(const std::string& path);

/// Writes atomically (temp file + rename), creating parent directories.
Result<void> save_matrix(const Matrix& matrix, const std::string& path);

/// How strong a verdict is as evidence that a property holds: violated 0, inconclusive and error
/// 1, refused-to-start and not-applicable 2, enforced and asked 3.
int strength(Verdict verdict);

/// This machine's label as the prober records it in a matrix (the host name).
std::string this_machine();

/// The machine's matrix file: <machine config dir>/matrix.json.
std::string default_matrix_path(const std::string& machine_config_dir);

} // namespace sonata
