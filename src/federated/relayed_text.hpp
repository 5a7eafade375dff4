#pragma once
// Text that reaches a process from another one — a party's failure reason, a certificate's
// CN, the coordinator's abort reason — made inert before it is printed or passed on
// (internal; docs/guide/federated.md, "Threat model"). A malicious party or coordinator could
// otherwise clear a terminal (ESC[2J), recolour it, or print a line that looks like
// flynn's own ("all 3 parties hold the identical model") on every other party's stderr and
// in the coordinator's log.
#include <cstddef>
#include <string>
#include <string_view>

namespace flynn::federated {

/// The most bytes of another process's text shown; more are cut, saying how many.
inline constexpr std::size_t kMaxRelayedTextBytes = 1024;

/// `text` with everything that could act on a terminal escaped: control characters (C0,
/// DEL, C1) as \xNN, a backslash as \\, bytes that are not UTF-8 as \xNN, and the Unicode
/// characters that reorder or hide text (bidirectional controls, zero-width characters,
/// line and paragraph separators) as \u{XXXX}; then cut after `max_bytes` bytes of input
/// with "… (N more bytes)". Printable UTF-8 stays as it is. (Unchanged when a test turned
/// SafetyCheck::InertText off.)
std::string inert_text(std::string_view text, std::size_t max_bytes = kMaxRelayedTextBytes);

/// `who` (flynn's own words, e.g. "party 'b' (rank 1)") followed by ` says: "` the inert
/// text `"`: quoted, so that it is marked as that process's words, never flynn's.
std::string relayed_from(std::string_view who, std::string_view text,
                         std::size_t max_bytes = kMaxRelayedTextBytes);

}  // namespace flynn::federated
