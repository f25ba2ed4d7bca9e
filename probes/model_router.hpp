// The scripted model server minus HTTP I/O (private to probes/): routes one request to its wire
// protocol, answers it from the script (or as a side request), injects faults and keeps the
// recording. Thread-safe: the HTTP core calls it from several threads at once.
#pragma once

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
    std::vector<RequestRecord> recording() const;
    std::vector<ToolResultRecord> tool_results() const;

private:
    Outcome handle_get(std::string_view path, RequestRecord& record) const;
    Outcome handle_model(const Protocol& protocol, std::string_view path, std::string_view body,
                         RequestRecord& record);
    Outcome answer_and_render(const Protocol& protocol, const ParsedRequest& parsed,
                              std::size_t body_size, RequestRecord& record) const;
    Answer answer(const ParsedRequest& parsed, RequestRecord& record) const;
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
};

} // namespace sonata::probes::wire
