// The supervisor's entry: `sonata supervise DIR`, the detached process that runs one run's harness
// to its end and records it (supervisor.cpp). The caller's side starts it (caller/run.hpp) and
// reads what it records; the two share only the run's files (receipt, plan.json, run directory).
#pragma once

#include <string>

#include "core/process.hpp"
#include "core/run_host.hpp"

namespace sonata::dispatch {

/// `sonata supervise DIR`: runs the planned harness to its end with `runner` and records it, on
/// `host` (its watchdog, stop signals, slots and kills). Returns the exit code of the supervisor
/// itself (0 whatever the run's outcome, unless sonata failed). Tests pass a fake runner and a
/// fake host; `sonata supervise` the system ones.
int supervise(const std::string& run_dir, ProcessRunner& runner, RunHost& host);
/// supervise() on the system host.
int supervise(const std::string& run_dir, ProcessRunner& runner);

} // namespace sonata::dispatch
