// Small text helpers shared by every layer: "did you mean", joining, kebab-case checks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sonata {

/// The candidate closest to `word` by edit distance, when it is close enough to be a plausible
/// typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" or "" — appended to unknown-name errors.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& parts, std::string_view separator);

/// `text` with its ASCII letters lower-cased (other bytes, UTF-8 included, unchanged).
std::string ascii_lower(std::string_view text);

/// True when `name` is non-empty and made only of [a-z0-9-], not starting or ending with '-'.
bool is_kebab_name(std::string_view name);

/// `text` with every occurrence of `from` replaced by `to`, left to right, never rescanning what
/// was put in; an empty `from` changes nothing.
std::string replace_all(std::string text, std::string_view from, std::string_view to);

/// `text` made safe to print on a terminal: every control character but newline and tab (C0,
/// DEL, and the C1 range U+0080–U+009F), which could move the cursor, retitle the window or
/// hide what follows, is shown as `\xNN` (C1 as `\u00NN`). Untrusted text (a receipt, a report)
/// goes through it before it reaches a terminal.
std::string terminal_safe(std::string_view text);

/// `text` without the spaces, tabs and line ends around it.
std::string trimmed(std::string_view text);

/// "1.2.3-beta" → {1, 2, 3}: the dot-separated numbers a version starts with; empty when it does
/// not start with a digit. Compared as vectors, they order versions.
std::vector<unsigned long> version_numbers(std::string_view text);

/// The last `lines` lines of `text` (all of it when it has fewer); a final newline ends a line.
std::string tail_lines(const std::string& text, std::size_t lines);

} // namespace sonata

namespace sonata {

/// The deepest nesting sonata accepts in any JSON it reads (matrices, settings, hook input, model
/// requests). Real files nest a dozen levels; the parsers and printers sonata uses recurse per
/// level, so a document nested tens of thousands deep would overflow the stack.
inline constexpr std::size_t k_max_json_depth = 512;

/// True when no array or object in `json` (as text, strings skipped) nests deeper than `limit`.
/// A cheap scan meant to run before a parser; it does not check that the text is valid JSON.
bool json_depth_within(std::string_view json, std::size_t limit = k_max_json_depth);

} // namespace sonata
