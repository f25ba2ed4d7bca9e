// The scripted model server minus HTTP I/O (private to probes/): routes one request to its wire
// protocol, answers it from the script (or as a side request), injects faults and keeps the
// recording. Thread-safe: the HTTP core calls it from several threads at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/model_server.hpp"
#include "probes/protocol.hpp"

namespace sonata::probes::wire {

/// What the HTTP core must send for one request.
struct Outcome {
    HttpReply reply;
    bool truncate = false; ///< Send part of it, then close the connection.
};

class Router {
public:
    Router(Script script, ScriptContext context, std::string model);

    /// Answers one request; `method` is upper-case ("POST"), `target` the path and query.
    Outcome handle(std::string_view method, std::string_view target, std::string_view body);

    void inject_fault(const Fault& fault);
    /// Releases every request held back for a sub-agent, now and from now on (the server stops).
    void release();

    /// How long the main conversation's last answer waits for a sub-agent that has started but
    /// not finished: a model whose sub-agent still works does not end its turn, and a harness
    /// ends its run (and the sub-agent with it) once the main turn is over.
    static constexpr std::chrono::seconds k_subagent_wait{20};
    /// How long it waits for a sub-agent it delegated to (and the harness did not refuse) to start.
    static constexpr std::chrono::seconds k_subagent_start{3};
    std::vector<RequestRecord> recording() const;
    std::vector<ToolResultRecord> tool_results() const;

private:
    Outcome handle_get(std::string_view path, RequestRecord& record) const;
    Outcome handle_model(const Protocol& protocol, std::string_view path, std::string_view body,
                         RequestRecord& record);
    Outcome answer_and_render(const Protocol& protocol, const ParsedRequest& parsed,
                              std::size_t body_size, RequestRecord& record) const;
    Answer answer(const ParsedRequest& parsed, RequestRecord& record) const;
    /// Notes a sub-agent's progress; holds the main conversation's final answer while a started
    /// sub-agent has not finished (at most k_subagent_wait, and never once released).
    void await_subagents(const Move& move, const ConversationFacts& facts) const;
    std::optional<Fault> take_fault();
    void keep(RequestRecord record);

    Script m_script;
    ScriptContext m_context;
    std::string m_model;
    std::vector<std::unique_ptr<Protocol>> m_protocols;

    mutable std::mutex m_mutex; // Guards everything below.
    std::size_t m_arrivals = 0;
    std::size_t m_model_requests = 0;
    std::vector<Fault> m_faults;
    std::vector<RequestRecord> m_records;
    std::vector<ToolResultRecord> m_results;
    std::set<std::pair<std::string, std::string>> m_result_keys;
    mutable std::condition_variable m_track_changed;
    mutable std::set<std::string> m_tracks_started;  ///< Sub-agent tracks that made a request.
    mutable std::set<std::string> m_tracks_finished; ///< Sub-agent tracks answered their final.
    bool m_released = false;
};

} // namespace sonata::probes::wire
