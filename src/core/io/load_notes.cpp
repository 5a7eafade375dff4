// The loaders' note handler (see load_notes.hpp).
#include "flynn/io/load_notes.hpp"

#include <utility>

namespace flynn::io {

namespace {
NoteHandler& handler() {
  static NoteHandler h;
  return h;
}
WarningHandler& warning_handler() {
  static WarningHandler h;
  return h;
}
}  // namespace

NoteHandler set_note_handler(NoteHandler h) { return std::exchange(handler(), std::move(h)); }

void send_note(const std::string& note) {
  if (const NoteHandler& h = handler()) h(note);
}

WarningHandler set_warning_handler(WarningHandler h) { return std::exchange(warning_handler(), std::move(h)); }

void send_warning(const std::string& warning) {
  if (const WarningHandler& h = warning_handler()) h(warning);
}

}  // namespace flynn::io
