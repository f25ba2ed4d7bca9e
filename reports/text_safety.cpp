// UTF-8 validation and control-character replacement for captured text.
#include "reports/text_safety.hpp"

#include <cstdint>

namespace sonata::reports {
namespace {

constexpr std::string_view k_replacement = "\xEF\xBF\xBD"; // U+FFFD

void append_code_point(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0U | (cp >> 6U));
        out += static_cast<char>(0x80U | (cp & 0x3FU));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0U | (cp >> 12U));
        out += static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU));
        out += static_cast<char>(0x80U | (cp & 0x3FU));
    } else {
        out += static_cast<char>(0xF0U | (cp >> 18U));
        out += static_cast<char>(0x80U | ((cp >> 12U) & 0x3FU));
        out += static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU));
        out += static_cast<char>(0x80U | (cp & 0x3FU));
    }
}

// Decodes one UTF-8 sequence at `pos`; returns the code point and its length, or length 0 when the
// bytes there are not a valid, shortest-form sequence.
std::pair<std::uint32_t, std::size_t> decode(std::string_view s, std::size_t pos) {
    const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
    const std::uint8_t lead = byte(pos);
    std::size_t length = 0;
    std::uint32_t cp = 0;
    if (lead < 0x80) return {lead, 1};
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        cp = lead & 0x1FU;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        cp = lead & 0x0FU;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        cp = lead & 0x07U;
    } else
        return {0, 0};
    if (pos + length > s.size()) return {0, 0};
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(pos + i) & 0xC0U) != 0x80U) return {0, 0};
        cp = (cp << 6U) | (byte(pos + i) & 0x3FU);
    }
    const bool overlong = (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000);
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    if (overlong || surrogate || cp > 0x10FFFF) return {0, 0};
    return {cp, length};
}

} // namespace

std::string printable_text(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    std::size_t pos = 0;
    while (pos < raw.size()) {
        const auto [cp, length] = decode(raw, pos);
        if (length == 0) {
            out += k_replacement;
            ++pos;
            continue;
        }
        pos += length;
        if (cp == '\r') {
            if (pos < raw.size() && raw[pos] == '\n') ++pos;
            out += '\n';
        } else if (cp == '\t' || cp == '\n') {
            out += static_cast<char>(cp);
        } else if (cp < 0x20) {
            append_code_point(out, 0x2400 + cp);
        } else if (cp == 0x7F) {
            append_code_point(out, 0x2421);
        } else if (cp == 0xFFFE || cp == 0xFFFF) {
            out += k_replacement;
        } else {
            append_code_point(out, cp);
        }
    }
    return out;
}

std::string last_lines(std::string_view text, std::size_t max_lines) {
    while (!text.empty() && text.back() == '\n')
        text.remove_suffix(1);
    std::size_t start = text.size();
    std::size_t lines = 0;
    while (start > 0) {
        const std::size_t newline = text.rfind('\n', start - 1);
        if (newline == std::string_view::npos) return std::string(text);
        if (++lines == max_lines) return "…\n" + std::string(text.substr(newline + 1));
        start = newline;
    }
    return std::string(text);
}

} // namespace sonata::reports
