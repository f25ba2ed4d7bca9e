// HTML 4's named character references, for the HTML report's ASCII output.
#pragma once

#include <cstdint>
#include <string_view>

namespace sonata::reports {

/// HTML 4's name for the character `code_point` (`middot` for U+00B7), or empty where HTML 4
/// names none. ASCII characters are never looked up: the serializer escapes the few it must.
std::string_view html4_entity_name(std::uint32_t code_point);

} // namespace sonata::reports
