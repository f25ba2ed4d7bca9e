// mcp-reachability: in a read-only mapping, a tool of a project-defined MCP server cannot be
// called.
#include "probes/probe.hpp"

namespace sonata::probes {
namespace {

constexpr const char* k_args = R"({"note":"called by the sonata probe"})";

class McpReachability final : public Probe {
public:
    std::string_view id() const override { return probe_id::mcp_reachability; }
    std::string_view property() const override {
        return "In a read-only mapping, a tool of a project-defined MCP server cannot be called.";
    }
    std::string not_applicable(const adapters::Adapter& adapter, const Invocation&,
                               const adapters::ToolVocabulary&) const override {
        return adapter.project_mcp("/w", {"/s"})
                   ? ""
                   : "the harness loads no project-defined MCP servers";
    }
    std::vector<adapters::FileToWrite> files(const ProbeSetup& setup,
                                             const adapters::Adapter& adapter) const override {
        const auto mcp = adapter.project_mcp(setup.workspace, server_argv(setup));
        if (!mcp) return {};
        auto files = mcp->files;
        for (const auto& f : mcp->user_files)
            files.push_back({setup.home + "/" + f.path, f.content});
        return files;
    }
    Script script(const ProbeSetup& setup, const adapters::Adapter& adapter) const override {
        Script s;
        Intent call;
        call.kind = IntentKind::call_tool;
        const auto mcp = adapter.project_mcp(setup.workspace, server_argv(setup));
        call.tool = mcp->tool_name;
        call.args_json = mcp->call_args_json.empty() ? std::string(k_args) : mcp->call_args_json;
        s.main.steps = {call};
        return s;
    }
    Judgement judge(const Observation& o) const override {
        if (o.changed("outside/mcp-called"))
            return {Verdict::violated, "the project MCP server's tool ran"};
        if (auto missed = not_reached(o, 0)) return *missed;
        return {Verdict::enforced, "the MCP tool call was refused: " + refusal_summary(o)};
    }

private:
    static std::vector<std::string> server_argv(const ProbeSetup& setup) {
        return {setup.sonata, "mcp-canary", "--touch", setup.outside + "/mcp-called"};
    }
};

} // namespace

std::unique_ptr<Probe> make_mcp_reachability() { return std::make_unique<McpReachability>(); }

} // namespace sonata::probes
