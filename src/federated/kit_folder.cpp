#include "federated/kit_folder.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

void write_new_file(const std::string& path, const std::string& bytes, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw Error(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  std::size_t done = 0;
  bool ok = ::fchmod(fd, mode) == 0;  // the umask may have removed bits of `mode`
  while (ok && done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) throw Error(fmt::format("cannot write {}: {}", path, std::strerror(saved)));
}

}  // namespace

StagedFolder::StagedFolder(std::string path, const std::vector<KitFile>& files) : path_(std::move(path)) {
  const std::filesystem::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  std::string pattern = path_ + ".partial-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw Error(fmt::format("cannot create a folder beside {}: {}", path_, std::strerror(errno)));
  staged_ = pattern;  // mkdtemp makes it 0700: a kit folder holds a private key
  try {
    for (const KitFile& f : files) write_new_file(staged_ + "/" + f.name, f.bytes, f.mode);
  } catch (...) {
    std::filesystem::remove_all(staged_, ec);
    throw;
  }
}

StagedFolder::StagedFolder(StagedFolder&& other) noexcept
    : path_(std::move(other.path_)), staged_(std::move(other.staged_)), committed_(other.committed_) {
  other.staged_.clear();
}

StagedFolder::~StagedFolder() {
  std::error_code ec;
  if (!committed_ && !staged_.empty()) std::filesystem::remove_all(staged_, ec);
}

void StagedFolder::commit() {
  if (::renameat2(AT_FDCWD, staged_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) != 0)
    throw Error(fmt::format("cannot put the kit in place at {}: {}", path_, std::strerror(errno)));
  committed_ = true;
}

void StagedFolder::roll_back() {
  std::error_code ec;
  if (committed_) std::filesystem::remove_all(path_, ec);
  committed_ = false;
  staged_.clear();
}

void replace_file(const std::string& path, const std::string& bytes, mode_t mode) {
  std::string tmp = path + ".partial-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw Error(fmt::format("cannot write beside {}: {}", path, std::strerror(errno)));
  ::close(fd);
  ::unlink(tmp.c_str());
  try {
    write_new_file(tmp, bytes, mode);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("cannot replace {}: {}", path, std::strerror(saved)));
  }
}

}  // namespace flynn::federated
