// Fuzzes the receipt reader (a run directory's receipt.json may be planted or forged): any text
// is a Receipt or an error; a Receipt that parsed serializes to JSON that parses again into the
// same Receipt, and that serialization is a fixed point.
#include "dispatch/receipt.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sonata::fuzz::check;
    namespace dispatch = sonata::dispatch;
    const auto receipt = dispatch::parse_receipt(sonata::fuzz::as_text(data, size), "fuzz.json");
    if (!receipt) return 0;
    const std::string json = dispatch::receipt_to_json(*receipt);
    const auto again = dispatch::parse_receipt(json, "round-trip.json");
    check(again.has_value(), "receipt_to_json wrote what parse_receipt rejects: " +
                                 (again ? std::string() : again.error().message) + "\n" + json);
    check(*again == *receipt, "the round trip changed the receipt:\n" + json);
    check(dispatch::receipt_to_json(*again) == json, "the serialization is not a fixed point");
    return 0;
}
