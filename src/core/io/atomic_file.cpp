#include "flynn/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <streambuf>
#include <vector>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::io {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw Error(fmt::format("{}: {} ({})", path, what, std::strerror(err)));
}

void write_all(int fd, std::string_view bytes, const auto& on_error) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (w < 0) {
      if (errno == EINTR) continue;
      on_error("write failed", errno);
    }
    written += static_cast<std::size_t>(w);
  }
}

// The file a path finally denotes: symbolic links followed (also a dangling one, whose
// target is then created), relative link targets taken from the link's folder. Bounded,
// so a link loop is an error rather than a hang.
std::string resolve_links(const std::string& path) {
  fs::path p(path);
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(p, ec);
    if (ec || st.type() != fs::file_type::symlink) return p.string();
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) fail(path, "cannot read the symbolic link", ec.value());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  throw Error(fmt::format("{}: too many levels of symbolic links", path));
}

// What a caller writes: `produce` hands its bytes, piece by piece, to the sink it is given.
using Sink = std::function<void(std::string_view)>;
using Producer = std::function<void(const Sink&)>;

// Character devices and FIFOs are written in place: replacing /dev/null or a named pipe
// by a regular file would break whatever else uses it.
// A FIFO is opened without blocking, so a pipe nobody reads is an error, not a hang.
void write_in_place(const std::string& path, const std::string& target, const Producer& produce) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENXIO) throw Error(fmt::format("{}: a FIFO that no process is reading", path));
    fail(path, "cannot open for writing", errno);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd);
    fail(path, "cannot set blocking mode", err);
  }
  try {
    produce([&](std::string_view bytes) {
      write_all(fd, bytes, [&](const char* what, int err) { fail(path, what, err); });
    });
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail(path, "close failed", errno);
}

// An output stream buffer that hands full 64 KiB blocks (and the rest at sync) to a
// sink, so a text output of any length is written without being held in memory.
class SinkBuf final : public std::streambuf {
 public:
  explicit SinkBuf(const Sink& sink) : sink_(sink), buf_(std::size_t{1} << 16) {
    setp(buf_.data(), buf_.data() + buf_.size());
  }

 protected:
  int_type overflow(int_type c) override {
    drain();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    drain();
    return 0;
  }

 private:
  void drain() {
    const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    if (n) sink_(std::string_view(pbase(), n));
    setp(buf_.data(), buf_.data() + buf_.size());
  }
  const Sink& sink_;
  std::vector<char> buf_;
};

// Where a path's bytes go: `target` (links followed), written in place when it is a
// character device or a FIFO, else through a temporary file beside it.
struct Destination {
  std::string target;
  bool in_place = false;
  bool exists = false;
  mode_t mode = 0644;  // of the replaced file, or 0644 less the umask
};

Destination destination_of(const std::string& path) {
  if (path.empty()) throw Error("output path is empty");
  Destination d;
  d.target = resolve_links(path);
  struct stat existing {};
  d.exists = ::stat(d.target.c_str(), &existing) == 0;
  if (d.exists) {
    if (S_ISDIR(existing.st_mode)) throw Error(fmt::format("{}: is a directory", path));
    if (S_ISCHR(existing.st_mode) || S_ISFIFO(existing.st_mode)) {
      d.in_place = true;
      return d;
    }
    if (!S_ISREG(existing.st_mode))
      throw Error(fmt::format("{}: is not a regular file, a character device or a FIFO; "
                              "refusing to replace it", path));
    d.mode = existing.st_mode & 07777;
  } else if (errno != ENOENT) {
    fail(path, "cannot inspect the output path", errno);
  } else {
    // mkstemp creates 0600; a new file gets 0644 less the umask.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    d.mode &= ~mask;
  }
  return d;
}

// Writes what `produce` gives to a new temporary file beside d.target, flushed to disk;
// returns its name. On any error nothing is left behind.
std::string write_temporary(const std::string& path, const Destination& d, const Producer& produce) {
  std::string tmp = d.target + ".flynn-tmp-XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) fail(path, "cannot create a temporary file beside it", errno);
  auto cleanup_fail = [&](const char* what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, what, err);
  };
  if (::fchmod(fd, d.mode) != 0) cleanup_fail("chmod failed", errno);
  try {
    produce([&](std::string_view bytes) {
      write_all(fd, bytes, [&](const char* what, int err) { fail(path, what, err); });
    });
  } catch (...) {  // a write error, or the producer's own: leave nothing behind
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::fsync(fd) != 0) cleanup_fail("fsync failed", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "close failed", err);
  }
  return tmp;
}

// Renames the temporary file over d.target and makes the rename durable.
void move_into_place(const std::string& path, const Destination& d, const std::string& tmp) {
  if (::rename(tmp.c_str(), d.target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "rename failed", err);
  }
  // A failure to sync the folder leaves a complete file, so it is not reported.
  const fs::path dir = fs::path(d.target).parent_path();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

// write_file_atomic for any producer (see the header for the rules).
void write_atomically(const std::string& path, const Producer& produce) {
  const Destination d = destination_of(path);
  if (d.in_place) return write_in_place(path, d.target, produce);
  move_into_place(path, d, write_temporary(path, d, produce));
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_atomically(path, [&](const Sink& sink) { sink(bytes); });
}

void write_file_atomic(const std::string& path,
                       const std::function<void(std::ostream&)>& fill) {
  write_atomically(path, [&](const Sink& sink) {
    SinkBuf buf(sink);
    std::ostream out(&buf);
    // The sink's errors (flynn::Error from a failed write) propagate instead of merely
    // setting badbit.
    out.exceptions(std::ios::badbit);
    fill(out);
    out.flush();
  });
}

struct StagedFile::Impl {
  std::string path;
  Destination destination;
  std::string tmp;    // the staged file ("" once committed, or when written in place)
  std::string bytes;  // kept for a device or FIFO, written in place at commit
  bool committed = false;
};

StagedFile::StagedFile(const std::string& path, std::string_view bytes) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->destination = destination_of(path);
  if (impl_->destination.in_place) {
    impl_->bytes.assign(bytes);
    return;
  }
  impl_->tmp = write_temporary(path, impl_->destination, [&](const Sink& sink) { sink(bytes); });
}

StagedFile::~StagedFile() {
  if (impl_ && !impl_->committed && !impl_->tmp.empty()) ::unlink(impl_->tmp.c_str());
}

StagedFile::StagedFile(StagedFile&&) noexcept = default;

void StagedFile::commit() {
  Impl& s = *impl_;
  if (s.committed) return;
  s.committed = true;
  if (s.destination.in_place)
    return write_in_place(s.path, s.destination.target, [&](const Sink& sink) { sink(s.bytes); });
  move_into_place(s.path, s.destination, s.tmp);
  s.tmp.clear();
}

const std::string& StagedFile::path() const { return impl_->path; }

void ensure_output_is_not_an_input(const std::string& path, const std::vector<std::string>& inputs,
                                   const std::string& what) {
  struct stat out {};
  if (path.empty() || ::stat(path.c_str(), &out) != 0) return;  // a new file: no clash
  // Devices are shared sinks (/dev/null, /dev/stdout): writing them destroys nothing.
  if (S_ISCHR(out.st_mode)) return;
  for (const std::string& input : inputs) {
    struct stat in {};
    if (input.empty() || ::stat(input.c_str(), &in) != 0) continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      throw Error(fmt::format("{}: the {} would overwrite the input {}; choose another path",
                              path, what, input));
  }
}

}  // namespace flynn::io
