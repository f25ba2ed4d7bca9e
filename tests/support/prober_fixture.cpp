// The fixture harnesses' personas and the prober test fixture (see prober_fixture.hpp).
#include "tests/support/prober_fixture.hpp"

#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/process.hpp"

namespace sonata::testing {

namespace fs = std::filesystem;

std::vector<Persona> personas() {
    std::ifstream in(std::string(SONATA_SOURCE_DIR) + "/fixtures/fake_harness/personas.json");
    const auto j = nlohmann::json::parse(in);
    std::vector<Persona> out;
    for (const auto& p : j.at("personas")) {
        out.push_back({p.at("name"), p.at("harness"), p.value("mode", ""), p.value("catches", "")});
    }
    return out;
}

const Cell* find_cell(const Matrix& m, const std::string& probe, const std::string& mode) {
    for (const auto& c : m.cells) {
        if (c.probe == probe && c.mode == mode) return &c;
    }
    return nullptr;
}

const std::vector<std::pair<std::string, std::string>> k_probed{{"plan", "read-only"},
                                                                {"default", "write"},
                                                                {"acceptEdits", "write"},
                                                                {"bypassPermissions", "write"}};

void ProberFixture::SetUp() {
    m_root = fs::temp_directory_path() /
             ("sonata-prober-test-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_root);
    fs::create_directories(m_root / "home");
    fs::create_directories(m_root / "tmp");
}

void ProberFixture::TearDown() { fs::remove_all(m_root); }

Matrix ProberFixture::probe(const Persona& persona, const std::vector<std::string>& extra,
                            const std::string& timeout) {
    ProcessRequest request;
    request.argv = {SONATA_BIN, "probe",     "--bin",     persona.harness + "=" + bin(persona.name),
                    "--json",   "--no-save", "--timeout", timeout,
                    "--jobs",   "2"};
    request.argv.insert(request.argv.end(), extra.begin(), extra.end());
    request.env = {{"PATH", "/usr/bin:/bin"},
                   {"HOME", (m_root / "home").string()},
                   {"XDG_CONFIG_HOME", (m_root / "home/.config").string()},
                   {"TMPDIR", (m_root / "tmp").string()}};
    request.cwd = m_root.string();
    request.timeout = std::chrono::minutes(5);
    auto runner = make_system_runner();
    auto result = runner->run(request);
    EXPECT_TRUE(result);
    if (!result) return {};
    EXPECT_EQ(result->exit_code, 0) << result->err;
    auto matrix = parse_matrix(result->out, "sonata probe --json");
    EXPECT_TRUE(matrix) << (matrix ? "" : matrix.error().message) << "\n" << result->err;
    // Nothing is left behind: the scratch base under TMPDIR is gone.
    EXPECT_TRUE(fs::is_empty(m_root / "tmp")) << "probe left files in TMPDIR";
    return matrix ? *matrix : Matrix{};
}

std::vector<std::string> ProberFixture::relied_on(const Persona& persona, const std::string& mode,
                                                  const std::string& role) {
    ProcessRequest request;
    request.argv = {SONATA_BIN, "plan", "--harness",         persona.harness, "--mode", mode,
                    "--role",   role,   "--harness-version", "1.0.0",         "--json"};
    request.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", (m_root / "home").string()}};
    request.cwd = m_root.string();
    auto result = make_system_runner()->run(request);
    EXPECT_TRUE(result);
    if (!result) return {};
    const auto doc = nlohmann::json::parse(result->out);
    if (doc.at("decision") != "run") return {};
    return doc.at("relies_on").get<std::vector<std::string>>();
}

std::string ProberFixture::bin(const std::string& name) {
    return std::string(SONATA_BINARY_DIR) + "/fixtures/bin/" + name;
}

} // namespace sonata::testing
