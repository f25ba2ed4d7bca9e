// Fuzzes matrix parsing: any text is a Matrix or an error; a Matrix that parsed serializes to JSON
// that parses again into the same Matrix (its serialization is a fixed point).
#include "core/matrix.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sonata::fuzz::check;
    const std::string text(sonata::fuzz::as_text(data, size));
    const auto matrix = sonata::parse_matrix(text, "fuzz.json");
    if (!matrix) return 0;
    const std::string json = sonata::matrix_to_json(*matrix);
    const auto again = sonata::parse_matrix(json, "round-trip.json");
    check(again.has_value(), "matrix_to_json wrote what parse_matrix rejects: " +
                                 (again ? std::string() : again.error().message) + "\n" + json);
    check(sonata::matrix_to_json(*again) == json, "the round trip changed the matrix:\n" + json);
    return 0;
}
