// A ProcessRunner that runs nothing: it records every request and answers with a scripted result,
// feeding the request's on_start and on_output as a real child would (ninja's FakeCommandRunner).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/process.hpp"

namespace sonata::testing {

class FakeRunner : public ProcessRunner {
public:
    /// What the next run "does": its output chunks, then `result` (out is filled from the chunks).
    struct Script {
        std::vector<std::string> chunks;
        ProcessResult result;
        bool cannot_start = false;    ///< run() fails as when the executable is missing.
        std::function<void()> effect; ///< What the "harness" does to the world while it runs.
    };

    explicit FakeRunner(Script script) : m_script(std::move(script)) {}

    Result<ProcessResult> run(const ProcessRequest& request) override;

    const std::vector<ProcessRequest>& requests() const { return m_requests; }

private:
    Script m_script;
    std::vector<ProcessRequest> m_requests;
};

} // namespace sonata::testing
