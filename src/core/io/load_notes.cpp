// The loaders' note handler (see load_notes.hpp).
#include "flynn/io/load_notes.hpp"

#include <utility>

namespace flynn::io {

namespace {
NoteHandler& handler() {
  static NoteHandler h;
  return h;
}
}  // namespace

NoteHandler set_note_handler(NoteHandler h) { return std::exchange(handler(), std::move(h)); }

void send_note(const std::string& note) {
  if (const NoteHandler& h = handler()) h(note);
}

}  // namespace flynn::io
