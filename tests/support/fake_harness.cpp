// FakeWorld and run_fake: one fixture-harness run against the scripted model server.
#include "tests/support/fake_harness.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "tests/support/plan_helpers.hpp"

namespace sonata::testing {

std::string fake_harness_path(const std::string& persona) {
    return std::string(SONATA_BINARY_DIR) + "/fixtures/bin/" + persona;
}

FakeWorld::FakeWorld() : m_env(hermetic_env(m_dir)) {
    m_dir.make_dir("work/notes");
    m_dir.make_dir("outside");
    write({{work() + "/victim", "delete me only when asked\n"},
           {work() + "/notes/canary.txt", "canary\n"}});
}

void FakeWorld::write(const std::vector<adapters::FileToWrite>& files) const {
    for (const auto& file : files) {
        std::filesystem::create_directories(std::filesystem::path(file.path).parent_path());
        std::ofstream(file.path, std::ios::binary | std::ios::trunc) << file.content;
    }
}

std::optional<std::string> FakeWorld::read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> FakeRun::result_texts() const {
    std::vector<std::string> texts;
    for (const auto& r : tool_results)
        texts.push_back(r.text);
    return texts;
}

std::optional<FakeLaunch> launch_fake(const FakeWorld& world, const FakeRunSpec& spec) {
    PlanCase plan_case;
    plan_case.harness = spec.harness;
    plan_case.parent_mode = spec.mode;
    plan_case.resume = spec.resume;
    auto decision = decide_case(plan_case);
    if (!decision || !decision->runs()) {
        ADD_FAILURE() << "cannot plan " << spec.harness << " in " << to_string(spec.mode) << ": "
                      << (decision ? decision->refusal().reason : decision.error().message);
        return std::nullopt;
    }
    auto adapter = adapters::find_adapter(spec.harness);
    Invocation planned = decision->invocation();
    planned.argv[0] = fake_harness_path(spec.persona);

    FakeLaunch launch;
    probes::ModelServerOptions options;
    options.refusals = (*adapter)->refusal_texts();
    launch.server = std::make_unique<probes::ModelServer>(spec.script, (*adapter)->tools(),
                                                          world.work(), options);
    if (auto port = launch.server->start(); !port) {
        ADD_FAILURE() << port.error().message;
        return std::nullopt;
    }
    adapters::EndpointSpec endpoint;
    endpoint.base_url = launch.server->base_url();
    endpoint.home = world.home();
    endpoint.workspace = world.work();
    auto injected = (*adapter)->inject_endpoint(planned, endpoint);
    if (!injected) {
        ADD_FAILURE() << injected.error().message;
        return std::nullopt;
    }
    world.write(injected->files);
    launch.invocation = injected->invocation;
    launch.env = world.env();
    for (const auto& [name, value] : launch.invocation.env)
        launch.env[name] = value;
    for (const auto& name : launch.invocation.env_unset)
        launch.env.erase(name);
    return launch;
}

std::optional<FakeRun> run_fake(const FakeWorld& world, const FakeRunSpec& spec,
                                ProcessRunner& runner) {
    auto launch = launch_fake(world, spec);
    if (!launch) return std::nullopt;
    FakeRun run;
    run.invocation = launch->invocation;
    ProcessRequest request;
    request.argv = run.invocation.argv;
    if (!run.invocation.interactive) request.argv.push_back(spec.prompt);
    request.env = launch->env;
    request.cwd = world.work();
    request.stdin_data = spec.stdin_data;
    request.timeout = spec.timeout;
    request.kill_grace = spec.kill_grace;
    request.max_output_bytes = 64U * 1024U;
    auto result = runner.run(request);
    launch->server->stop();
    if (!result) {
        ADD_FAILURE() << result.error().message;
        return std::nullopt;
    }
    run.result = *result;
    run.requests = launch->server->recording();
    run.tool_results = launch->server->tool_results();
    return run;
}

} // namespace sonata::testing
