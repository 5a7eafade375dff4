#include "flynn/detail/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::io {

namespace fs = std::filesystem;

void write_file_atomic(const std::string& path, std::string_view bytes) {
  if (path.empty()) throw Error("output path is empty");
  const fs::path target(path);
  if (fs::is_directory(target)) throw Error(fmt::format("{}: is a directory", path));
  std::random_device rd;
  const std::string tmp =
      path + fmt::format(".tmp-{}-{:08x}", static_cast<long>(::getpid()), rd());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(fmt::format("{}: cannot create ({})", path, std::strerror(errno)));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(fmt::format("{}: {} failed ({})", path, what, std::strerror(err)));
  };
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    written += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("{}: close failed ({})", path, std::strerror(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("{}: rename failed ({})", path, std::strerror(err)));
  }
}

void write_file_atomic(const std::string& path,
                       const std::function<void(std::ostream&)>& fill) {
  std::ostringstream out;
  fill(out);
  write_file_atomic(path, out.str());
}

}  // namespace flynn::io
