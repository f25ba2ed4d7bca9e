// The probe run's interrupt watch and scratch base.
#include "cli/probe_run_support.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "core/proc_stat.hpp"

namespace sonata::cli {
namespace {

/// Whether `pid`'s chain of parents reaches sonata (an orphan sonata adopted counts).
bool descends_from_us(pid_t pid) {
    const pid_t self = ::getpid();
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
        const auto fields = proc_stat_fields(pid);
        if (!fields || fields->size() < 2) return false;
        const pid_t parent = static_cast<pid_t>(std::stol((*fields)[1])); // field 4
        if (parent == self) return true;
        pid = parent;
    }
    return false;
}

const char* signal_name(int signo) {
    return ::sigabbrev_np(signo) != nullptr ? ::sigabbrev_np(signo) : "?";
}

} // namespace

InterruptWatch::InterruptWatch() {
    sigemptyset(&m_signals);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP})
        sigaddset(&m_signals, sig);
    ::pthread_sigmask(SIG_BLOCK, &m_signals, &m_previous);
    m_thread = std::thread([this] { watch(); });
}

InterruptWatch::~InterruptWatch() {
    m_done = true;
    m_thread.join();
    ::pthread_sigmask(SIG_SETMASK, &m_previous, nullptr);
}

void InterruptWatch::watch() {
    const timespec poll{0, 200'000'000};
    while (!m_done) {
        siginfo_t info{};
        if (::sigtimedwait(&m_signals, &info, &poll) < 0) continue;
        if (info.si_pid > 0 && descends_from_us(info.si_pid)) {
            // A harness under probe (or a helper it left behind, which sonata adopted as the
            // subreaper) must not be able to end the run by signalling its parent.
            std::cerr << fmt::format("\nsonata: ignored {} from pid {}, a process sonata started\n",
                                     signal_name(info.si_signo), info.si_pid);
            continue;
        }
        if (m_cancel.exchange(true)) std::_Exit(130);
        std::cerr << fmt::format("\nsonata: interrupted by {} from pid {}: stopping the running "
                                 "cells (again to quit now)\n",
                                 signal_name(info.si_signo), info.si_pid);
    }
}

Result<std::unique_ptr<ScratchBase>> ScratchBase::make(const Environment& env) {
    const auto tmp = env.count("TMPDIR") ? env.at("TMPDIR") : std::string("/tmp");
    std::string dir = tmp + "/sonata-probe-XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr)
        return fail(ExitCode::failure, "cannot create a scratch directory under " + tmp);
    return std::unique_ptr<ScratchBase>(new ScratchBase(dir));
}

ScratchBase::~ScratchBase() {
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
}

} // namespace sonata::cli
