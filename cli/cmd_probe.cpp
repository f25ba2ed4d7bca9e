// `sonata probe`: detect the installed harnesses, run the probe cells, print progress and a
// summary, write the capability matrix. Exit 0 whenever probing worked, whatever the verdicts; 1
// when a harness's version could not be read (its cells are not probed, the others are).
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "adapters/registry.hpp"
#include "adapters/support/detect.hpp"
#include "cli/app.hpp"
#include "cli/probe_output.hpp"
#include "cli/probe_run_support.hpp"
#include "core/fs.hpp"
#include "core/text.hpp"
#include "probes/prober.hpp"
#include "probes/workspace.hpp"

namespace sonata::cli {
namespace {

namespace fs = std::filesystem;

struct ProbeArgs {
    std::vector<std::string> harnesses;
    std::vector<std::string> probes;
    std::vector<std::string> bins;
    unsigned jobs = 2;
    std::string out;
    std::string matrix;
    bool json = false;
    int timeout = 0;
    bool no_save = false;
    std::string timings;
    std::string capture;
};

Result<std::map<std::string, std::string>> parse_bins(const std::vector<std::string>& bins) {
    std::map<std::string, std::string> out;
    for (const auto& bin : bins) {
        const auto eq = bin.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == bin.size()) {
            return fail(ExitCode::usage, "--bin '" + bin + "' is not of the form HARNESS=PATH");
        }
        const std::string id = bin.substr(0, eq);
        SONATA_TRY(adapters::find_adapter(id));
        std::error_code ec;
        const std::string path = fs::absolute(bin.substr(eq + 1), ec).string();
        if (::access(path.c_str(), X_OK) != 0)
            return fail(ExitCode::usage, "--bin " + id + ": '" + path + "' is not executable");
        out[id] = path;
    }
    return out;
}

std::vector<std::string> default_ids(const Config& config) {
    std::vector<std::string> ids;
    for (const auto& id : adapters::harness_ids()) {
        if (id.find('<') == std::string::npos) ids.push_back(id);
    }
    for (const auto& [id, harness] : config.harnesses) {
        if (id.rfind("pi-", 0) == 0) ids.push_back(id);
    }
    return ids;
}

/// The harnesses a run probes, and those it cannot: installed, but whose version could not be read
/// (each with why). A cell keyed by no version vouches for nothing, so those are not probed.
struct ProbeTargets {
    std::vector<probes::ProbeTargetHarness> harnesses;
    std::vector<std::string> unversioned;
};

/// What a harness whose version could not be read is told: which, why, and what to check.
std::string unversioned_error(const std::string& id, const adapters::HarnessStatus& status) {
    return id + ": its version could not be read (" + status.note +
           "), so none of its cells were probed: a cell keyed by no version vouches for nothing "
           "(check `" +
           status.path + " --version`, or raise [timeouts] version_seconds in sonata.toml)";
}

Result<ProbeTargets> targets(const ProbeArgs& args, const Config& config, const Context& context) {
    auto bins = parse_bins(args.bins);
    SONATA_TRY(bins);
    std::vector<std::string> ids = args.harnesses;
    if (ids.empty()) ids = args.bins.empty() ? default_ids(config) : std::vector<std::string>{};
    for (const auto& [id, path] : *bins) {
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    ProbeTargets out;
    auto runner = make_system_runner();
    for (const auto& id : ids) {
        auto adapter = adapters::find_adapter(id);
        SONATA_TRY(adapter);
        Config local = config;
        if (bins->count(id)) local.harnesses[id].path = bins->at(id);
        const auto status = adapters::detect_harness(**adapter, id, local, context.env, *runner);
        if (!status.installed || !status.cannot_run.empty()) {
            std::cerr << "sonata: skip " << id << ": " << status.note << '\n';
            continue;
        }
        if (status.version.empty()) {
            out.unversioned.push_back(unversioned_error(id, status));
            std::cerr << "sonata: " << out.unversioned.back() << '\n';
            continue;
        }
        const auto* configured = config.harness(id);
        out.harnesses.push_back(
            {*adapter, id, status.path, status.version,
             configured != nullptr ? configured->args : std::vector<std::string>{},
             status.path_first});
    }
    return out;
}

/// The matrix the run merges into: --matrix, else this machine's; "" without a machine config dir.
std::string merge_target(const ProbeArgs& args, const Context& context) {
    if (!args.matrix.empty()) return args.matrix;
    const auto dir = machine_dir(context.env);
    return dir.empty() ? std::string() : default_matrix_path(dir);
}

Result<void> save_matrices(const Matrix& run, const ProbeArgs& args, const Context& context) {
    if (!args.out.empty()) {
        if (auto ok = save_matrix(run, args.out); !ok) return ok;
        std::cerr << "sonata: wrote " << args.out << '\n';
    }
    if (args.no_save) return {};
    const std::string path = merge_target(args, context);
    Matrix merged = run; // run_probe checked before probing that machine_dir is not empty
    std::error_code ec;
    if (fs::exists(path, ec)) {
        auto existing = load_matrix(path);
        if (!existing) {
            return fail(ExitCode::bad_data,
                        existing.error().message +
                            "; left untouched (this run's results: use --out FILE)");
        }
        merged = *existing;
        merged.sonata_version = run.sonata_version;
        merged.machine = run.machine;
        merged.platform = run.platform;
        merged.created_at = run.created_at;
        merged.merge(run.cells);
    }
    if (auto ok = save_matrix(merged, path); !ok) return ok;
    std::cerr << "sonata: matrix written to " << path << '\n';
    return {};
}

/// Every cell the run probes of the mappings sonata runs: the harnesses' cells for the chosen
/// probes (all when none is named), and the probes the parent guards in each mode.
Result<std::vector<probes::CellJob>>
plan_jobs(const std::vector<probes::ProbeTargetHarness>& harnesses, const ProbeArgs& args,
          const Config& config, const ParentGuards& guards) {
    std::vector<probes::CellJob> jobs;
    for (const auto& h : harnesses) {
        auto cells = probes::plan_cells(h, args.probes, guards);
        if (!cells && cells.error().code == ExitCode::config) {
            return fail(ExitCode::config, config.where("harnesses." + h.id + ".args") +
                                              "'harnesses." + h.id +
                                              ".args': " + cells.error().message);
        }
        SONATA_TRY(cells);
        jobs.insert(jobs.end(), cells->begin(), cells->end());
    }
    return jobs;
}

/// The parent's own cells among the harnesses probed (Claude Code's, when it is one of them).
std::vector<probes::CellJob>
plan_parent_jobs(const std::vector<probes::ProbeTargetHarness>& harnesses, const ProbeArgs& args) {
    std::vector<probes::CellJob> jobs;
    for (const auto& h : harnesses) {
        auto cells = probes::plan_parent_cells(h, args.probes);
        jobs.insert(jobs.end(), cells.begin(), cells.end());
    }
    return jobs;
}

/// What the parent guards, per mode: from the parent's cells this run measured when it measured
/// any, else from the matrix the run merges into (a matrix that cannot be read guards nothing
/// here; saving into it reports it).
ParentGuards guards_for_children(const std::vector<probes::CellOutcome>& parent_outcomes,
                                 const ProbeArgs& args, const Context& context) {
    if (!parent_outcomes.empty()) return parent_guards(probes::matrix_from(parent_outcomes));
    const std::string path = merge_target(args, context);
    std::error_code ec;
    if (path.empty() || !fs::exists(path, ec)) return {};
    auto existing = load_matrix(path);
    if (!existing) return {};
    return parent_guards(*existing, existing->machines().empty() ? std::string() : this_machine());
}

/// The checks that need nothing run: where the matrix goes, and that every named probe exists.
Result<void> check_before_probing(const ProbeArgs& args, const Context& context) {
    if (args.matrix.empty() && !args.no_save) { // know where the matrix goes before probing
        SONATA_TRY(machine_dir_checked(context.env));
    }
    for (const auto& id : args.probes) {
        SONATA_TRY(probes::find_probe(id));
    }
    return {};
}

/// What the run leaves: the timings file, the matrix (printed as JSON or summed up) and the
/// saved matrices.
Result<int> finish(const std::vector<probes::CellOutcome>& outcomes, const ProbeArgs& args,
                   const Context& context, std::chrono::steady_clock::duration took) {
    if (!args.timings.empty()) {
        SONATA_TRY(write_timings(outcomes, args.timings, took));
    }
    const Matrix run = probes::matrix_from(outcomes);
    if (args.json)
        std::cout << matrix_to_json(run);
    else
        print_summary(outcomes);
    SONATA_TRY(save_matrices(run, args, context));
    return 0;
}

/// The cells of one run: the parent's, then the children's.
struct ProbePlan {
    std::vector<probes::CellJob> parent;
    std::vector<probes::CellJob> children;
};

/// Runs the parent's cells first, then the children's, planned again (`replan`) on what the
/// parent's cells measured; stops between them when interrupted. The outcomes, in that order.
Result<std::vector<probes::CellOutcome>>
run_plan(ProbePlan& plan,
         const std::function<
             Result<std::vector<probes::CellJob>>(const std::vector<probes::CellOutcome>&)>& replan,
         const probes::CellSettings& settings, unsigned jobs_n, const InterruptWatch& interrupt) {
    std::vector<probes::CellOutcome> outcomes;
    if (!plan.parent.empty()) {
        std::cerr << "sonata: the parent first, " << plan.parent.size() << " cell(s), " << jobs_n
                  << " at a time\n";
        outcomes = probes::run_cells(plan.parent, settings, jobs_n, progress_printer());
        if (interrupt.interrupted()) return outcomes;
        auto children = replan(outcomes);
        SONATA_TRY(children);
        plan.children = std::move(*children);
    }
    std::cerr << "sonata: " << plan.children.size() << " cell(s), " << jobs_n << " at a time\n";
    auto children = probes::run_cells(plan.children, settings, jobs_n, progress_printer());
    outcomes.insert(outcomes.end(), std::make_move_iterator(children.begin()),
                    std::make_move_iterator(children.end()));
    return outcomes;
}

Result<int> run_probe(const ProbeArgs& args, const Context& context) {
    auto config = context.config();
    SONATA_TRY(config);
    SONATA_TRY(check_before_probing(args, context));
    auto found = targets(args, *config, context);
    SONATA_TRY(found);
    const auto unversioned = [&] {
        return fail(ExitCode::failure, join(found->unversioned, "; "));
    };
    if (found->harnesses.empty() && !found->unversioned.empty()) return unversioned();
    const auto* harnesses = &found->harnesses;
    auto jobs = plan_jobs(*harnesses, args, *config, guards_for_children({}, args, context));
    SONATA_TRY(jobs);
    auto base = ScratchBase::make(context.env);
    SONATA_TRY(base);
    auto runner = make_system_runner();
    auto template_dir = probes::make_workspace_template((*base)->dir(), *runner);
    SONATA_TRY(template_dir);
    auto self = this_executable();
    SONATA_TRY(self);
    const InterruptWatch interrupt;
    const probes::CellSettings settings{(*base)->dir(),
                                        *template_dir,
                                        *self,
                                        context.env,
                                        args.timeout > 0 ? std::chrono::seconds(args.timeout)
                                                         : config->probe_timeout,
                                        interrupt.flag(),
                                        args.capture};
    const auto started = std::chrono::steady_clock::now();
    const auto replan = [&](const std::vector<probes::CellOutcome>& parent_outcomes) {
        return plan_jobs(*harnesses, args, *config,
                         guards_for_children(parent_outcomes, args, context));
    };
    ProbePlan plan{plan_parent_jobs(*harnesses, args), std::move(*jobs)};
    auto outcomes = run_plan(plan, replan, settings, args.jobs, interrupt);
    SONATA_TRY(outcomes);
    if (interrupt.interrupted()) {
        print_summary(*outcomes);
        std::cerr << "sonata: interrupted after " << outcomes->size() << " of "
                  << plan.parent.size() + plan.children.size()
                  << " cell(s); no matrix written, nothing left running\n";
        return 130;
    }
    auto code = finish(*outcomes, args, context, std::chrono::steady_clock::now() - started);
    SONATA_TRY(code);
    if (!found->unversioned.empty()) return unversioned();
    return code;
}

} // namespace

void add_probe(CLI::App& app, Action& action) {
    auto args = std::make_shared<ProbeArgs>();
    auto* cmd = app.add_subcommand(
        "probe",
        "Run the probe catalogue against the installed harnesses and write the capability matrix");
    cmd->add_option("--harness", args->harnesses, "Probe only this harness (repeatable)");
    cmd->add_option("--probe", args->probes, "Run only this probe (repeatable)");
    cmd->add_option("--bin", args->bins,
                    "Probe the executable PATH as harness H: H=PATH (repeatable)");
    cmd->add_option("--jobs", args->jobs, "Cells run in parallel")->check(CLI::Range(1U, 64U));
    cmd->add_option("--out", args->out, "Also write this run's matrix to FILE");
    cmd->add_option("--matrix", args->matrix, "The matrix to merge into (default: this machine's)");
    cmd->add_option("--timeout", args->timeout,
                    "Seconds per harness run (default: config timeouts.probe_seconds)")
        ->check(CLI::Range(1, 3600));
    cmd->add_option("--timings", args->timings,
                    "Write per-cell timings (TSV) to FILE and print the harnesses' time against "
                    "sonata's overhead");
    cmd->add_option("--capture", args->capture,
                    "Save the TUI screens and headless output the cells see under "
                    "DIR/<harness>/<version>/screens")
        ->group(""); // for scripts/capture-screens
    cmd->add_flag("--no-save", args->no_save, "Do not merge into this machine's matrix");
    cmd->add_flag("--json", args->json,
                  "Print this run's matrix as JSON instead of the summary table");
    cmd->callback([&action, args] {
        action = [args](const Context& context) { return run_probe(*args, context); };
    });
}

} // namespace sonata::cli
