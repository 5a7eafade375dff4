#pragma once
// A pseudo-terminal for tests that need a character device to write to (instead of
// /dev/null, which a regression run as root could replace).
#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace flynn::test {

/// A pseudo-terminal of this process in raw mode: its slave (/dev/pts/N) is a character
/// device that tests write to where they would otherwise write to /dev/null. A writer
/// that wrongly replaced it could not (devpts holds no regular files), so a test run as
/// root touches nothing system-wide. Everything written to the slave is read off the master
/// as it arrives (so a writer never blocks on a full terminal buffer) and kept.
class Pty {
 public:
  Pty() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0)
      throw std::runtime_error("cannot open a pseudo-terminal");
    const char* name = ::ptsname(master_);
    if (!name) throw std::runtime_error("cannot name the pseudo-terminal");
    path_ = name;
    // Kept open, so that the master never sees a hang-up between writers.
    slave_ = ::open(path_.c_str(), O_RDWR | O_NOCTTY);
    if (slave_ < 0) throw std::runtime_error("cannot open " + path_);
    termios raw{};
    if (::tcgetattr(slave_, &raw) == 0) {
      ::cfmakeraw(&raw);  // bytes through unchanged (no newline translation, no echo)
      ::tcsetattr(slave_, TCSANOW, &raw);
    }
    reader_ = std::thread([this] {
      char buf[4096];
      while (!stop_) {
        pollfd p{master_, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0 || !(p.revents & POLLIN)) continue;
        const ssize_t n = ::read(master_, buf, sizeof buf);
        if (n <= 0) continue;
        std::lock_guard<std::mutex> lock(mutex_);
        received_.append(buf, static_cast<std::size_t>(n));
      }
    });
  }
  ~Pty() {
    stop_ = true;
    reader_.join();
    ::close(slave_);
    ::close(master_);
  }
  Pty(const Pty&) = delete;
  Pty& operator=(const Pty&) = delete;

  /// The slave's path, a character device.
  const std::string& path() const { return path_; }

  /// What was written to the slave so far, once at least `bytes` arrived or after
  /// `seconds` (a hang guard, not a timing bound).
  std::string received(std::size_t bytes, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (true) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (received_.size() >= bytes || std::chrono::steady_clock::now() >= end) return received_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  int master_ = -1, slave_ = -1;
  std::string path_;
  std::mutex mutex_;
  std::string received_;
  std::atomic<bool> stop_{false};
  std::thread reader_;
};

}  // namespace flynn::test
