// Environment, prompt delivery and tmux spec of a planned invocation.
#include "dispatch/launch.hpp"

#include "core/node_runtime.hpp"

namespace sonata::dispatch {

Environment child_environment(const Environment& base, const Invocation& invocation) {
    Environment env = base;
    for (const auto& [key, value] : invocation.env)
        env[key] = value;
    for (const auto& name : invocation.env_unset)
        env.erase(name);
    put_first_on_path(env, invocation.path_first);
    return env;
}

ProcessRequest headless_request(const Invocation& invocation, const std::string& prompt,
                                Environment env, std::string cwd) {
    ProcessRequest request;
    request.argv = invocation.argv;
    if (invocation.prompt == PromptChannel::stdin_pipe)
        request.stdin_data = prompt;
    else
        request.argv.push_back(prompt);
    request.env = std::move(env);
    request.cwd = std::move(cwd);
    return request;
}

TmuxSpec tui_spec(const Invocation& invocation, Environment env, std::string cwd,
                  std::string socket_dir) {
    TmuxSpec spec;
    spec.argv = invocation.argv;
    spec.env = std::move(env);
    spec.cwd = std::move(cwd);
    spec.socket_dir = std::move(socket_dir);
    return spec;
}

} // namespace sonata::dispatch
