#pragma once
// Notes from the loaders: what a loader had to guess about a file (CSV under
// LoadOptions::Header::Auto: whether line 1 is a header, when both readings are
// plausible); and warnings about data that loads but looks wrong. A program that wants to tell its user installs a handler (the CLI prints
// each note once on stderr); without one the notes are dropped.
#include <functional>
#include <string>

namespace flynn::io {

/// Receives one note: a single line "<source>: ..." that says what was decided, why, and
/// which option overrides it.
using NoteHandler = std::function<void(const std::string&)>;

/// Installs `handler` for the notes of every loader in the process and returns the one it
/// replaces; an empty handler drops notes. Install it before loading, not while other
/// threads load; the handler itself may be called from several loading threads at once.
NoteHandler set_note_handler(NoteHandler handler);

/// Hands one note to the installed handler, if any. A loader sends its note again for
/// each pass over the same file (a caller that prints them may want to drop repeats).
void send_note(const std::string& note);

/// Receives one warning: a single line "<source>: ..." about data that loads but looks
/// wrong (a label column whose classes look like another column), naming the option
/// that fixes it. The CLI prints each once on stderr; without a handler they are dropped.
using WarningHandler = std::function<void(const std::string&)>;

/// Installs `handler` for every warning of the process and returns the one it replaces
/// (same rules as set_note_handler).
WarningHandler set_warning_handler(WarningHandler handler);

/// Hands one warning to the installed handler, if any.
void send_warning(const std::string& warning);

}  // namespace flynn::io
