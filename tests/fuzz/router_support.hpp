// The scripted model server's Router as the fuzzers build it: a script that uses every intent
// (including a sub-agent track) against Claude Code's tool names, and the checks every reply
// must pass whatever the request was.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "probes/model_router.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace sonata::fuzz {

inline const probes::Script& router_script() {
    static const probes::Script script = [] {
        const auto parsed = probes::parse_script(R"({
          "steps": [
            {"intent": "write_file", "path": "canary.txt", "content": "pwned"},
            {"intent": "shell", "command": "printf pwned > canary.txt"},
            {"intent": "delegate", "task": "write the canary", "marker": "SONATA-SUB-1"},
            {"intent": "switch_mode"},
            {"intent": "call_tool", "name": "mcp__canary__touch", "args": {"note": "fuzz"}},
            {"intent": "reply", "text": "half way"}
          ],
          "final": "done",
          "subagents": {"SONATA-SUB-1": {"steps": [{"intent": "shell", "command": "true"}],
                                         "final": "sub done"}}
        })");
        check(parsed.has_value(), "the fuzz script does not parse");
        return *parsed;
    }();
    return script;
}

/// A fresh Router per input: one keeps every request it saw, and a long run would fill memory.
inline std::unique_ptr<probes::wire::Router> make_router() {
    adapters::ToolVocabulary tools{.write = {"Write"},
                                   .write_path_field = "file_path",
                                   .write_content_field = "content",
                                   .write_path_absolute = true,
                                   .shell = {"Bash"},
                                   .shell_command_field = "command",
                                   .delegate = {"Task", "Agent"},
                                   .delegate_prompt_field = "prompt",
                                   .mode_switch = {"ExitPlanMode"},
                                   .mode_enter = {"EnterPlanMode"}};
    return std::make_unique<probes::wire::Router>(
        router_script(), probes::ScriptContext{std::move(tools), "/ws/project"},
        "sonata-probe-model");
}

/// What the HTTP core relies on: a real status, a JSON body when it says JSON, whole SSE events.
inline void check_outcome(const probes::wire::Outcome& outcome) {
    const auto& reply = outcome.reply;
    check(reply.status >= 100 && reply.status <= 599,
          "status " + std::to_string(reply.status) + " is not an HTTP status");
    if (reply.stream) {
        for (const auto& event : reply.events) {
            check(event.size() >= 2 && event.compare(event.size() - 2, 2, "\n\n") == 0,
                  "an SSE event that does not end in a blank line: " + event);
        }
    } else if (reply.content_type.rfind("application/json", 0) == 0 && !reply.body.empty()) {
        check(nlohmann::json::accept(reply.body), "a JSON reply that is not JSON: " + reply.body);
    }
}

} // namespace sonata::fuzz
