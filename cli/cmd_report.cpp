// `sonata report`: render one or several machines' capability matrices (Markdown, JUnit XML, HTML,
// JSON), `--diff OLD NEW` to show the cells that changed and fail when one got weaker, or
// `--cell KEY` to show one cell's whole evidence (a refusal points there).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "core/matrix.hpp"
#include "core/text.hpp"
#include "reports/diff.hpp"
#include "reports/evidence_text.hpp"
#include "reports/markdown.hpp"
#include "reports/merge.hpp"
#include "reports/report.hpp"

namespace sonata::cli {
namespace {

struct ReportArgs {
    std::string format = "md";
    std::string out;
    std::vector<std::string> matrices;
    bool diff = false;
    std::string cell; ///< "harness@version probe mode role".
};

Result<void> emit(const std::string& text, const std::string& out) {
    if (out.empty()) {
        std::cout << text << std::flush;
        return {};
    }
    return write_file_atomic(out, text);
}

// GitHub Actions shows whatever a step appends to the file $GITHUB_STEP_SUMMARY names.
Result<void> append_step_summary(const Context& context, const std::string& markdown) {
    const auto it = context.env.find("GITHUB_STEP_SUMMARY");
    if (it == context.env.end() || it->second.empty()) return {};
    std::ofstream summary(it->second, std::ios::app | std::ios::binary);
    summary << markdown << "\n";
    summary.close();
    if (!summary) {
        return fail(ExitCode::failure,
                    "cannot append the report to $GITHUB_STEP_SUMMARY (" + it->second + ")");
    }
    return {};
}

Result<std::vector<std::string>> matrix_paths(const ReportArgs& args, const Context& context) {
    if (!args.matrices.empty()) return args.matrices;
    auto dir = machine_dir_checked(context.env);
    SONATA_TRY(dir);
    const std::string path = default_matrix_path(*dir);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return fail(ExitCode::bad_data, "no capability matrix for this machine at " + path +
                                            ": run `sonata probe` first, or name matrix files");
    }
    return std::vector<std::string>{path};
}

Result<int> run_diff(const ReportArgs& args, const Context& context) {
    if (args.matrices.size() != 2) {
        return fail(ExitCode::usage, "--diff compares exactly two matrices (OLD NEW); " +
                                         std::to_string(args.matrices.size()) + " given");
    }
    if (args.format != "md" && args.format != "markdown") {
        return fail(ExitCode::usage, "--diff prints Markdown only; drop --format " + args.format);
    }
    auto loaded = reports::load_matrices(args.matrices);
    SONATA_TRY(loaded);
    const auto changes = reports::diff_matrices(loaded->at(0).matrix, loaded->at(1).matrix);
    const std::string text =
        reports::render_diff_markdown(changes, args.matrices.at(0), args.matrices.at(1));
    SONATA_TRY(emit(text, args.out));
    SONATA_TRY(append_step_summary(context, text));
    return to_int(reports::any_to_review(changes) ? ExitCode::weakened : ExitCode::ok);
}

Result<int> run_cell(const ReportArgs& args, const Context& context) {
    if (args.format != "md" && args.format != "markdown" && args.format != "json") {
        return fail(ExitCode::usage,
                    "--cell prints text (md) or json; not --format " + args.format);
    }
    const auto paths = matrix_paths(args, context);
    SONATA_TRY(paths);
    const auto loaded = reports::load_matrices(*paths);
    SONATA_TRY(loaded);
    const Matrix merged = reports::merge_machines(*loaded);
    std::vector<std::string> keys;
    for (const auto& cell : merged.cells) {
        if (cell.key() != args.cell) {
            keys.push_back(cell.key());
            continue;
        }
        std::string text;
        if (args.format == "json") {
            Matrix one = merged;
            one.cells = {cell};
            text = matrix_to_json(one);
        } else {
            text = cell.key() + (cell.machine.empty() ? "" : " (" + cell.machine + ")") + ": " +
                   std::string(to_string(cell.verdict)) + "\n" + reports::evidence_text(cell);
        }
        SONATA_TRY(emit(text, args.out));
        return to_int(ExitCode::ok);
    }
    return fail(ExitCode::usage, "no cell '" + args.cell + "' in " + join(*paths, ", ") +
                                     did_you_mean(args.cell, keys) +
                                     " (a key is \"harness@version probe mode role\")");
}

Result<int> run_report(const ReportArgs& args, const Context& context) {
    if (args.diff) return run_diff(args, context);
    if (!args.cell.empty()) return run_cell(args, context);
    const auto format = reports::parse_report_format(args.format);
    SONATA_TRY(format);
    const auto paths = matrix_paths(args, context);
    SONATA_TRY(paths);
    const auto loaded = reports::load_matrices(*paths);
    SONATA_TRY(loaded);
    const Matrix merged = reports::merge_machines(*loaded);
    const std::string text = reports::render_report(merged, *format);
    SONATA_TRY(emit(text, args.out));
    const std::string summary =
        *format == reports::ReportFormat::markdown ? text : reports::render_markdown(merged);
    SONATA_TRY(append_step_summary(context, summary));
    return to_int(ExitCode::ok);
}

} // namespace

void add_report(CLI::App& app, Action& action) {
    auto args = std::make_shared<ReportArgs>();
    auto* cmd = app.add_subcommand(
        "report",
        "Render capability matrices (this machine's by default; several merge, one column per "
        "machine), or compare two with --diff");
    cmd->add_option("--format", args->format, "md (default), junit, html or json");
    cmd->add_option("--out", args->out, "Write the report to FILE instead of standard output");
    cmd->add_flag(
        "--diff", args->diff,
        "Compare two matrix files, OLD NEW: print the cells that changed; exit 7 when one "
        "got weaker");
    cmd->add_option("--cell", args->cell,
                    "Show one cell's whole evidence: KEY is \"harness@version probe mode role\"");
    cmd->add_option("matrix", args->matrices, "Matrix files (default: this machine's)");
    cmd->callback([&action, args] {
        action = [args](const Context& context) { return run_report(*args, context); };
    });
}

} // namespace sonata::cli
