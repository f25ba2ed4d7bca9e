// Runs one probe cell: the exact invocation `sonata plan` emits for (harness, mode, role), pointed
// at a fresh scripted model server, in a fresh scratch world, under a hard timeout; then judges it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "adapters/adapter.hpp"
#include "core/matrix.hpp"
#include "core/process.hpp"
#include "probes/probe.hpp"

namespace sonata::probes {

/// Whom a cell measures.
enum class CellSubject {
    mapping, ///< A mapping sonata plans for a dispatch.
    parent,  ///< The parent as a user runs it: the reference a child is held to.
};

/// One cell to run.
struct CellJob {
    const adapters::Adapter* adapter = nullptr;
    std::string harness_id;
    std::string executable; ///< Absolute path of the harness binary.
    std::string path_first; ///< The runtime it needs first on its PATH (HarnessStatus).
    std::string version;
    Mode mode = Mode::plan;
    RoleKind role = RoleKind::read_only;
    const Probe* probe = nullptr;
    std::vector<std::string>
        extra_args; ///< The configured `args`, planned as `sonata plan` plans them.
    /// What the cell measures: a mapping of sonata's, or the parent (Adapter::parent_invocation
    /// in `mode`), whose cell's role is k_parent_role.
    CellSubject subject = CellSubject::mapping;
    /// Applied to the planned invocation before it runs; empty in every real probe run. Tests use
    /// it to prove that a check or a hardening matters: add what the planner refuses, or strip
    /// what it adds, and see the probe turn `violated`.
    std::function<void(Invocation&)> rewrite;
};

/// Settings shared by every cell of a probe run.
struct CellSettings {
    std::string scratch_base; ///< A directory sonata owns; every cell's scratch lives under it.
    std::string template_dir; ///< The workspace template (make_workspace_template).
    std::string sonata_path;  ///< sonata's own executable.
    Environment base_env;     ///< Only an allowlist of it reaches the harness.
    std::chrono::milliseconds timeout{120'000};
    /// Turns true when the run is interrupted: running harnesses are killed, and cells not yet
    /// started are not started.
    const std::atomic<bool>* cancel = nullptr;
    /// When set, the TUI screens a cell recognises (trust card, approval card, the ready task box)
    /// and headless output are saved under <capture_dir>/<harness>/<version>/, with the cell's
    /// scratch directory written as <scratch>: evidence for fixtures/captured.
    std::string capture_dir;
};

/// Where a cell's time went: sonata's own work versus the harness's.
struct CellTiming {
    std::chrono::microseconds setup{0};    ///< Planning, scratch dirs, workspace, injected files.
    std::chrono::microseconds server{0};   ///< Starting and stopping the scripted model server.
    std::chrono::microseconds harness{0};  ///< The harness process (or TUI) itself.
    std::chrono::microseconds observe{0};  ///< Snapshots, diffs and judging.
    std::chrono::microseconds teardown{0}; ///< Removing the scratch world.
};

struct CellOutcome {
    Cell cell;
    CellTiming timing;
};

/// Runs the cell. Never throws; sonata's own failures become an `error` verdict with the reason.
CellOutcome run_cell(const CellJob& job, const CellSettings& settings, ProcessRunner& runner);

} // namespace sonata::probes
