// sonata's runs as MCP tasks: a task's id is its run's id, so any `sonata mcp` started for the
// same project serves it from the run directory — after the client resumed its session, or from
// another window. Included by the MCP files only.
#pragma once

#include "cli/app.hpp"
#include "cli/mcp_protocol.hpp"

namespace sonata::cli {

class RunTasks : public mcp::TaskStore {
public:
    explicit RunTasks(Context context) : m_context(std::move(context)) {}

    /// starting, queued, running and stalled are `working` (with the state and the run's last
    /// output line); paused is `input_required` with the approval card as a yes/no form when the
    /// client takes forms (else `working`, naming the approve tool); done is `completed` with
    /// what a waiting call returns, and so are failed, timed-out and lost, as errors; cancelled is
    /// `cancelled`.
    Result<mcp::TaskView> get(const std::string& id, const mcp::json& client) override;
    /// The answer to the card the run shows, as `sonata approve` gives it: yes only when the form
    /// was accepted with "yes".
    Result<void> update(const std::string& id, const mcp::json& responses) override;
    /// Cancels the run, as `sonata cancel` does.
    Result<void> cancel(const std::string& id) override;

private:
    Context m_context;
};

} // namespace sonata::cli
