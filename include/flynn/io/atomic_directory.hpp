#pragma once
// A folder of files written all at once (a report: figures, a page, its numbers): readers
// see the earlier folder or the new one, never a half-written one, and an error leaves
// nothing behind.
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace flynn::io {

/// A file of a folder: its plain name (no '/') and its bytes.
using FolderFile = std::pair<std::string, std::string>;

/// Writes `files` as the folder `path`: into a new folder created beside it (mkdtemp:
/// unpredictable name, mode 0700 until complete), each file flushed to disk, then put in
/// place of `path` with one rename (an atomic exchange when `path` is replaced), and the
/// parent folder synced. `path` may not exist (its missing parent folders are made), may be
/// an empty folder, or a folder that `replaceable` (called with its entries' names) accepts:
/// that folder is replaced and removed. Anything else at `path` (a file, a link, another
/// folder) is refused. The finished folder gets mode 0755 less the umask. Throws
/// flynn::Error naming `path` and the cause; the temporary folder is removed on any error.
void write_folder_atomic(
    const std::string& path, const std::vector<FolderFile>& files,
    const std::function<bool(const std::vector<std::string>& entries)>& replaceable);

/// The check write_folder_atomic makes of what is at `path` before writing: nothing (false),
/// an empty folder or a folder `replaceable` accepts (true); throws flynn::Error otherwise.
bool check_folder_target(
    const std::string& path,
    const std::function<bool(const std::vector<std::string>& entries)>& replaceable);

}  // namespace flynn::io
