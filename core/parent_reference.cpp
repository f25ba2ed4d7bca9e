// The parent's cells, chosen and read for the gate and the prober.
#include "core/parent_reference.hpp"

#include <algorithm>
#include <cctype>

#include "core/probe_ids.hpp"

namespace sonata {
namespace {

bool guarding(Verdict v) { return v == Verdict::enforced || v == Verdict::asked; }

bool all_digits(const std::string& s) {
    return !s.empty() && s.size() < 10 &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::vector<std::string> version_parts(const std::string& version) {
    std::vector<std::string> parts;
    std::string part;
    for (const char c : version) {
        if (c == '.' || c == '-') {
            parts.push_back(part);
            part.clear();
        } else {
            part += c;
        }
    }
    parts.push_back(part);
    return parts;
}

constexpr Mode k_parent_modes[] = {Mode::plan, Mode::default_mode, Mode::accept_edits,
                                   Mode::bypass_permissions};

} // namespace

int compare_versions(const std::string& a, const std::string& b) {
    const auto pa = version_parts(a);
    const auto pb = version_parts(b);
    for (std::size_t i = 0; i < std::min(pa.size(), pb.size()); ++i) {
        if (all_digits(pa[i]) && all_digits(pb[i])) {
            const long na = std::stol(pa[i]);
            const long nb = std::stol(pb[i]);
            if (na != nb) return na < nb ? -1 : 1;
        } else if (const int c = pa[i].compare(pb[i]); c != 0) {
            return c < 0 ? -1 : 1;
        }
    }
    if (pa.size() == pb.size()) return 0;
    return pa.size() < pb.size() ? -1 : 1;
}

const Cell* ParentReference::cell(const std::string& probe) const {
    const auto it =
        std::find_if(cells.begin(), cells.end(), [&](const Cell* c) { return c->probe == probe; });
    return it == cells.end() ? nullptr : *it;
}

bool ParentReference::guards(const std::string& probe) const {
    const Cell* c = cell(probe);
    return c != nullptr && guarding(c->verdict);
}

std::vector<std::string> ParentReference::guarded() const {
    std::vector<std::string> out;
    for (const Cell* c : cells)
        if (guarding(c->verdict) && probe_id::binds_every_child(c->probe)) out.push_back(c->probe);
    return out;
}

std::string ParentReference::label() const {
    return version.empty() ? harness : harness + "@" + version;
}

std::optional<ParentReference> parent_reference(const Matrix& matrix, const std::string& mode,
                                                const std::string& machine) {
    const auto counts = [&](const Cell& c) {
        return c.role == k_parent_role && c.mode == mode &&
               (machine.empty() || c.machine == machine);
    };
    const Cell* newest = nullptr;
    for (const auto& c : matrix.cells) {
        if (counts(c) && (newest == nullptr || compare_versions(c.version, newest->version) > 0))
            newest = &c;
    }
    if (newest == nullptr) return std::nullopt;
    ParentReference ref{newest->harness, newest->version, mode, {}};
    for (const auto& c : matrix.cells) {
        if (!counts(c) || c.harness != ref.harness || c.version != ref.version ||
            ref.cell(c.probe) != nullptr) {
            continue;
        }
        // Merged machines, or a matrix edited by hand: Matrix::find's weakest cell stands.
        ref.cells.push_back(matrix.find(ref.harness, ref.version, c.probe, mode,
                                        std::string(k_parent_role), machine));
    }
    return ref;
}

ParentGuards parent_guards(const Matrix& matrix, const std::string& machine) {
    ParentGuards guards;
    for (const Mode mode : k_parent_modes) {
        const auto ref = parent_reference(matrix, std::string(to_string(mode)), machine);
        if (!ref) continue;
        for (auto& probe : ref->guarded())
            guards[mode].insert(std::move(probe));
    }
    return guards;
}

} // namespace sonata
