// The operating system under a run's supervisor, behind one interface: a process started detached
// (a daemon), the watchdog that outlives the supervisor, the stop signals, the concurrency slots,
// the processes marked with a run id and how they are killed, and waiting for a directory to
// change. The system host does it with fork, signals, flock, /proc and inotify; tests substitute
// a fake host, so that the supervisor's watchdog, kill, cancel and slot paths run without forking.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/process.hpp"
#include "core/result.hpp"

namespace sonata {

/// The variable that marks every process of a run with the run's id.
inline constexpr const char* k_run_marker = "SONATA_RUN_ID";

/// What the host holds for its caller until it is destroyed (a slot's lock).
class HostLease {
public:
    virtual ~HostLease() = default;
};

/// One of a harness's concurrency slots, held until `lease` is destroyed (or the process ends).
struct Slot {
    int index = -1;
    std::unique_ptr<HostLease> lease;
};

/// A process that outlives its starter to clean up after it.
class Watchdog {
public:
    virtual ~Watchdog() = default;
    /// The watchdog's pid (a descendant the supervisor must spare); 0 when there is none.
    virtual int pid() const = 0;
    /// Tells the watchdog its starter is done and waits for it to leave.
    virtual void release() = 0;
};

/// Waits for entries to land in one directory.
class DirWatch {
public:
    virtual ~DirWatch() = default;
    /// Returns once an entry was renamed into the directory or closed after writing (once the
    /// watch follows a process: once that process ended), or after `timeout`.
    virtual void wait(std::chrono::milliseconds timeout) = 0;
    /// From now on, waits return when process `pid` ends, and no longer when entries land in the
    /// directory. Once per watch: later calls do nothing, and the end wakes one wait. A wake-up
    /// only, that proves nothing (a pid may be reused): a caller checks what it waits for after
    /// each wait.
    virtual void follow_exit(int pid) = 0;
};

class RunHost {
public:
    virtual ~RunHost() = default;

    /// Starts `argv` as a grandchild in a session of its own, stdin on /dev/null, stdout and
    /// stderr appended to `log`, so that nothing that happens to the caller reaches it.
    virtual Result<void> start_detached(const std::vector<std::string>& argv,
                                        const Environment& env, const std::string& log) = 0;

    /// Starts the watchdog: `on_orphaned` runs once, in a process of its own, when this process
    /// ends, whatever ends it, or releases the watchdog. Called before any thread is started.
    virtual Result<std::unique_ptr<Watchdog>> start_watchdog(std::function<void()> on_orphaned) = 0;

    /// Routes the stop signals (TERM, INT, HUP) to the returned flag: the run's cancel.
    virtual std::atomic<bool>& stop_on_signals() = 0;

    /// A free slot among `count` (numbered from 0) under directory `dir`, taken without waiting;
    /// nullopt while every one is held. An error when no slot can even be opened.
    virtual Result<std::optional<Slot>> try_slot(const std::string& dir, int count) = 0;

    /// Waits `period` before the caller looks again at what cannot wake it (a queued run's slots).
    virtual void pause(std::chrono::milliseconds period) = 0;

    /// Kills every descendant of this process but `keep` (SIGKILL, reaping its children among
    /// them) until none is left; returns how many were running.
    virtual int kill_descendants(int keep) = 0;

    /// Kills process group `pgid` when its leader carries run `run_id`'s marker, else each member
    /// of the group that does.
    virtual void kill_marked_group(int pgid, const std::string& run_id) = 0;

    /// Kills process `pid` when it is still the one started at `start_time`, carries run
    /// `run_id`'s marker and has `argument` within one of its arguments.
    virtual void kill_marked_process(int pid, unsigned long long start_time,
                                     const std::string& run_id, const std::string& argument) = 0;

    /// A watch on directory `dir`, started now: what lands in it from now on wakes a wait.
    virtual std::unique_ptr<DirWatch> watch_dir(const std::string& dir) = 0;
};

/// The host of this machine.
RunHost& system_host();

} // namespace sonata
