// JSON and text renderings of a Decision.
#include "core/decision_json.hpp"

#include <nlohmann/json.hpp>

#include "core/json_parse.hpp"
#include "core/text.hpp"

namespace sonata {
namespace {

std::string display_arg(const std::string& arg) {
    if (!arg.empty() && arg.find_first_of(" \t\n'\"$`\\*?;&|<>(){}[]!#~") == std::string::npos)
        return arg;
    std::string out = "'";
    for (char c : arg)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

} // namespace

std::string decision_to_json(const Decision& d, const std::string& extra) {
    nlohmann::ordered_json j;
    j["decision"] = d.runs() ? "run" : "refuse";
    j["harness"] = d.harness;
    j["version"] = d.version;
    j["parent_mode"] = to_string(d.parent_mode);
    j["mode"] = to_string(d.effective_mode);
    j["role"] = {{"name", d.role.name}, {"kind", to_string(d.role.kind)}};
    if (d.runs()) {
        const Invocation& inv = d.invocation();
        j["argv"] = inv.argv;
        j["env"] = inv.env;
        j["env_unset"] = inv.env_unset;
        if (!inv.path_first.empty()) j["path_first"] = inv.path_first;
        j["cwd"] = inv.cwd;
        j["prompt"] = to_string(inv.prompt);
        j["interactive"] = inv.interactive;
        j["report"] = to_string(inv.report);
        j["relies_on"] = inv.relies_on;
        j["notes"] = inv.notes;
    } else {
        j["reason"] = d.refusal().reason;
        j["alternatives"] = d.refusal().alternatives;
    }
    j["warnings"] = d.warnings;
    if (!extra.empty()) {
        const auto parsed = parse_ordered_json(extra).value(); // sonata's own, always valid
        for (const auto& [key, value] : parsed.items())
            j[key] = value;
    }
    return j.dump(2);
}

std::string decision_to_text(const Decision& d) {
    std::string out = d.harness + (d.version.empty() ? "" : " " + d.version) + ": parent " +
                      std::string(to_string(d.parent_mode)) + ", role " + d.role.name + " (" +
                      std::string(to_string(d.role.kind)) + ") → " +
                      std::string(to_string(d.effective_mode)) + "\n";
    if (!d.runs()) {
        out += "refuse: " + d.refusal().reason + "\n";
        for (const auto& alt : d.refusal().alternatives)
            out += "  instead: " + alt + "\n";
    } else {
        const Invocation& inv = d.invocation();
        std::vector<std::string> shown;
        for (const auto& arg : inv.argv)
            shown.push_back(display_arg(arg));
        out += "run: " + join(shown, " ") + "\n";
        for (const auto& [k, v] : inv.env)
            out += "  env: " + k + "=" + display_arg(v) + "\n";
        if (!inv.env_unset.empty()) out += "  unset: " + join(inv.env_unset, " ") + "\n";
        if (!inv.path_first.empty()) out += "  PATH first: " + display_arg(inv.path_first) + "\n";
        out += "  prompt: " + std::string(to_string(inv.prompt)) + ", " +
               (inv.interactive ? "interactive TUI in tmux" : "headless") + ", report from " +
               std::string(to_string(inv.report)) + "\n";
        if (!inv.relies_on.empty()) out += "  relies on: " + join(inv.relies_on, ", ") + "\n";
        for (const auto& note : inv.notes)
            out += "  note: " + note + "\n";
    }
    for (const auto& warning : d.warnings)
        out += "warning: " + warning + "\n";
    return out;
}

} // namespace sonata
