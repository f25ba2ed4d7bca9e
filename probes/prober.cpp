// Cell planning and the worker pool. Each worker has its own process runner; a cell never shares a
// scratch world or a model server with another.
#include "probes/prober.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <mutex>
#include <optional>
#include <thread>

#include <sys/utsname.h>

#include "adapters/support/planner.hpp"

namespace sonata::probes {
namespace {

struct ModeRole {
    Mode mode;
    RoleKind role;
};

constexpr ModeRole k_cells[] = {{Mode::plan, RoleKind::read_only},
                                {Mode::default_mode, RoleKind::write},
                                {Mode::accept_edits, RoleKind::write},
                                {Mode::bypass_permissions, RoleKind::write}};

bool wanted(const std::vector<std::string>& only, std::string_view id) {
    return only.empty() || std::find(only.begin(), only.end(), id) != only.end();
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

/// One cell of `harness` for `probe` in `mode`: a mapping of sonata's, or the parent's own.
CellJob cell_job(const ProbeTargetHarness& harness, Mode mode, RoleKind role, const Probe& probe,
                 CellSubject subject) {
    return CellJob{.adapter = harness.adapter,
                   .harness_id = harness.id,
                   .executable = harness.path,
                   .path_first = harness.path_first,
                   .version = harness.version,
                   .mode = mode,
                   .role = role,
                   .probe = &probe,
                   .extra_args = subject == CellSubject::parent ? std::vector<std::string>{}
                                                                : harness.extra_args,
                   .subject = subject,
                   .rewrite = {}};
}

} // namespace

Result<std::vector<CellJob>> plan_cells(const ProbeTargetHarness& harness,
                                        const std::vector<std::string>& only,
                                        const ParentGuards& guards) {
    std::vector<CellJob> jobs;
    for (const auto& [mode, role] : k_cells) {
        adapters::PlanRequest request;
        request.harness_id = harness.id;
        request.parent_mode = mode;
        request.role = Role{role == RoleKind::write ? "write" : "read-only", role, {}, {}};
        request.executable = harness.path;
        request.path_first = harness.path_first;
        request.version = harness.version;
        request.host = adapters::detect_host();
        request.extra_args = harness.extra_args;
        auto decision = adapters::decide(request);
        SONATA_TRY(decision);
        if (!decision->runs()) continue;
        for (const auto& probe : all_probes()) {
            // A probe that plants the parent's rules measures the mapping planned with them.
            auto planted = probe->parent_rules();
            std::optional<Decision> with_rules;
            if (!planted.empty()) {
                request.parent_rules = std::move(planted);
                auto ruled = adapters::decide(request);
                request.parent_rules = {};
                SONATA_TRY(ruled);
                if (!ruled->runs()) continue;
                with_rules = std::move(*ruled);
            }
            const Invocation& inv = (with_rules ? *with_rules : *decision).invocation();
            const bool relied = std::find(inv.relies_on.begin(), inv.relies_on.end(),
                                          probe->id()) != inv.relies_on.end();
            const auto guarded = guards.find(mode);
            const bool guarded_by_parent =
                guarded != guards.end() && guarded->second.count(std::string(probe->id())) != 0;
            if (!wanted(only, probe->id()) ||
                !(relied || guarded_by_parent || probe->always_run(inv, mode)))
                continue;
            jobs.push_back(cell_job(harness, mode, role, *probe, CellSubject::mapping));
        }
    }
    return jobs;
}

std::vector<CellJob> plan_parent_cells(const ProbeTargetHarness& harness,
                                       const std::vector<std::string>& only) {
    std::vector<CellJob> jobs;
    for (const auto& [mode, role] : k_cells) {
        const auto parent =
            harness.adapter->parent_invocation(mode, harness.path, adapters::detect_host());
        if (!parent) return jobs;
        for (const auto& probe : all_probes()) {
            const auto& relied = parent->relies_on;
            if (!wanted(only, probe->id()) ||
                std::find(relied.begin(), relied.end(), probe->id()) == relied.end())
                continue;
            jobs.push_back(cell_job(harness, mode, role, *probe, CellSubject::parent));
        }
    }
    return jobs;
}

std::vector<CellOutcome> run_cells(const std::vector<CellJob>& jobs, const CellSettings& settings,
                                   unsigned jobs_n, const CellProgress& progress) {
    std::vector<CellOutcome> outcomes(jobs.size());
    std::vector<char> ran(jobs.size(), 0);
    std::atomic<std::size_t> next{0};
    std::size_t done = 0;
    std::mutex mutex;
    const auto worker = [&] {
        auto runner = make_system_runner();
        for (std::size_t i = next++; i < jobs.size(); i = next++) {
            if (settings.cancel != nullptr && settings.cancel->load()) return;
            outcomes[i] = run_cell(jobs[i], settings, *runner);
            ran[i] = 1;
            const std::lock_guard<std::mutex> lock(mutex);
            ++done;
            if (progress) progress(outcomes[i], done, jobs.size());
        }
    };
    std::vector<std::thread> threads;
    const unsigned n = std::max(1U, std::min<unsigned>(jobs_n, static_cast<unsigned>(jobs.size())));
    for (unsigned t = 0; t < n; ++t)
        threads.emplace_back(worker);
    for (auto& thread : threads)
        thread.join();
    std::vector<CellOutcome> finished; // an interrupted run keeps only the cells that ran
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (ran[i]) finished.push_back(std::move(outcomes[i]));
    }
    return finished;
}

Matrix matrix_from(const std::vector<CellOutcome>& outcomes) {
    Matrix m;
    m.sonata_version = SONATA_VERSION;
    m.machine = this_machine();
    utsname u{};
    ::uname(&u);
    m.platform = std::string(u.sysname) + "-" + u.machine;
    m.created_at = utc_now();
    for (const auto& outcome : outcomes)
        m.cells.push_back(outcome.cell);
    m.sort();
    return m;
}

} // namespace sonata::probes
