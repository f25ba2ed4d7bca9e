// The fixture harnesses' personas (fixtures/fake_harness/personas.json) and a test fixture that
// runs the real `sonata probe` against one of them, with its own HOME and TMPDIR.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/matrix.hpp"

namespace sonata::testing {

/// One persona of the fake harness: its executable name, the harness it impersonates, the mode
/// of its lie and the probe that must catch it.
struct Persona {
    std::string name;
    std::string harness;
    std::string mode;
    std::string catches;
};

/// Every persona, in personas.json order.
std::vector<Persona> personas();

/// The cell of `probe` in `mode`, or nullptr.
const Cell* find_cell(const Matrix& m, const std::string& probe, const std::string& mode);

/// The (mode, role) pairs the prober measures.
extern const std::vector<std::pair<std::string, std::string>> k_probed;

class ProberFixture : public ::testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;

    /// Runs `sonata probe --json` for one fake; returns the matrix it printed.
    Matrix probe(const Persona& persona, const std::vector<std::string>& extra,
                 const std::string& timeout = "20");

    /// What `sonata plan` says the mapping for `mode` and `role` relies on (nothing if it refuses).
    std::vector<std::string> relied_on(const Persona& persona, const std::string& mode,
                                       const std::string& role);

    /// The fake harness's executable under a persona's name.
    static std::string bin(const std::string& name);

    std::filesystem::path m_root;
};

} // namespace sonata::testing
