// The fake runner.
#include "tests/support/fake_runner.hpp"

namespace sonata::testing {

Result<ProcessResult> FakeRunner::run(const ProcessRequest& request) {
    m_requests.push_back(request);
    if (m_script.cannot_start)
        return fail(ExitCode::failure, "cannot start '" + request.argv.front() + "': not found");
    constexpr int k_fake_pid =
        2'000'000'000; // above any pid_max: a kill of its group reaches nobody
    if (request.on_start) request.on_start(k_fake_pid);
    if (m_script.effect) m_script.effect();
    ProcessResult result = m_script.result;
    result.pid = k_fake_pid;
    for (const auto& chunk : m_script.chunks) {
        if (request.on_output) request.on_output(OutputStream::out, chunk);
        result.out += chunk;
    }
    result.out_bytes = result.out.size();
    return result;
}

} // namespace sonata::testing
