#include "flynn/io/atomic_directory.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE (glibc ≥ 2.28)
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/io/atomic_file.hpp"

namespace flynn::io {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw Error(fmt::format("{}: {} ({})", path, what, std::strerror(err)));
}

void sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename is done either way
  ::fsync(fd);
  ::close(fd);
}

// The names in folder `p`.
std::vector<std::string> entries_of(const fs::path& p) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(p))
    names.push_back(e.path().filename().string());
  return names;
}

}  // namespace

bool check_folder_target(const std::string& path,
                         const std::function<bool(const std::vector<std::string>&)>& replaceable) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec || st.type() == fs::file_type::not_found) return false;
  if (st.type() != fs::file_type::directory)
    throw Error(
        fmt::format("{}: exists and is not a folder; give a new folder for the report", path));
  const std::vector<std::string> names = entries_of(path);
  if (!names.empty() && !replaceable(names))
    throw Error(
        fmt::format("{}: a folder holding other files (e.g. '{}'); give a new or empty folder, or "
                    "one holding an earlier report",
                    path, names.front()));
  return true;
}

namespace {

// Fills `tmp` with the files, each flushed to disk.
void fill_folder(const fs::path& tmp, const std::vector<FolderFile>& files,
                 const std::string& path) {
  for (const auto& [name, bytes] : files) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      throw Error(fmt::format("{}: '{}' is not a plain file name", path, name));
    write_file_atomic((tmp / name).string(), bytes);
  }
  sync_folder(tmp);
}

// Puts `tmp` in place of `path`: a plain rename when nothing (or an empty folder) is there,
// else an atomic exchange, after which `tmp` names the old folder.
void put_in_place(const fs::path& tmp, const std::string& path, bool existed) {
  if (::rename(tmp.c_str(), path.c_str()) == 0) return;
  const int err = errno;
  if (!existed || (err != ENOTEMPTY && err != EEXIST))
    fail(path, "cannot put the new folder in place", err);
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) == 0) return;
  // A file system without the exchange: move the old folder aside, then rename.
  const fs::path aside = tmp.string() + ".old";
  if (::rename(path.c_str(), aside.c_str()) != 0)
    fail(path, "cannot move the earlier report aside", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::rename(aside.c_str(), path.c_str());
    fail(path, "cannot put the new folder in place", e);
  }
  fs::rename(aside, tmp);
}

}  // namespace

void write_folder_atomic(
    const std::string& path, const std::vector<FolderFile>& files,
    const std::function<bool(const std::vector<std::string>& entries)>& replaceable) {
  if (path.empty()) throw Error("report folder: empty path");
  const bool existed = check_folder_target(path, replaceable);
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) fail(path, "cannot make its parent folder", ec.value());
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "." + string&&.
  std::string name(".");
  name += fs::path(path).filename().string();
  name += ".tmp-XXXXXX";
  std::string pattern = (parent / name).string();
  if (!::mkdtemp(pattern.data())) fail(path, "cannot make a temporary folder beside it", errno);
  const fs::path tmp = pattern;
  try {
    fill_folder(tmp, files, path);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    fs::permissions(tmp, static_cast<fs::perms>(0755 & ~mask), ec);
    put_in_place(tmp, path, existed);
    sync_folder(parent);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::remove_all(tmp, ec);  // the replaced report, when there was one
}

}  // namespace flynn::io
