// What a `sonata probe` run stands on: a scratch base removed with everything in it, and a watch
// that turns SIGINT, SIGTERM and SIGHUP into a cancel flag.
#pragma once

#include <signal.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "core/process.hpp"
#include "core/result.hpp"

namespace sonata::cli {

/// Turns SIGINT, SIGTERM and SIGHUP into a cancel flag while it lives: running harnesses are
/// killed, their scratch worlds removed, and sonata exits 130 instead of leaving them behind. A
/// second signal exits at once. Blocks the signals in the calling thread, so it must exist before
/// any other thread is started (threads inherit the mask; children get a clean one). A signal
/// from a process sonata started (a harness under probe, or what it left behind) is ignored.
class InterruptWatch {
public:
    InterruptWatch();
    ~InterruptWatch();
    InterruptWatch(const InterruptWatch&) = delete;
    InterruptWatch& operator=(const InterruptWatch&) = delete;

    const std::atomic<bool>* flag() const { return &m_cancel; }
    bool interrupted() const { return m_cancel.load(); }

private:
    void watch();

    sigset_t m_signals{};
    sigset_t m_previous{};
    std::atomic<bool> m_cancel{false};
    std::atomic<bool> m_done{false};
    std::thread m_thread;
};

/// A scratch directory under $TMPDIR (else /tmp), removed with everything in it when it goes.
class ScratchBase {
public:
    static Result<std::unique_ptr<ScratchBase>> make(const Environment& env);
    ScratchBase(const ScratchBase&) = delete;
    ScratchBase& operator=(const ScratchBase&) = delete;
    ~ScratchBase();
    const std::string& dir() const { return m_dir; }

private:
    explicit ScratchBase(std::string dir) : m_dir(std::move(dir)) {}
    std::string m_dir;
};

} // namespace sonata::cli
