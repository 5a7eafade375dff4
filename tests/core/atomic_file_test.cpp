// Output safety of write_file_atomic / ensure_output_is_not_an_input: links
// followed, non-regular files never replaced, nothing left behind on errors.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "flynn/io/atomic_file.hpp"
#include "flynn/error.hpp"
#include "test_pty.hpp"
#include "test_support.hpp"

namespace flynn::io {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(AtomicFile, ReplacesARegularFileAndKeepsItsMode) {
  test::TempDir dir;
  const std::string path = dir.file("out.bin");
  write_file_atomic(path, std::string("first"));
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  write_file_atomic(path, std::string("second"));
  EXPECT_EQ(slurp(path), "second");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(entries(dir.path()), 1u) << "no temporary file may remain";
}

// A staged file is complete beside its target but not in place: committed, it replaces
// the target; destroyed without a commit (an abort at the end of a federation), it leaves
// nothing behind, and the old target untouched.
TEST(AtomicFile, StagedFileAppearsOnlyWhenCommitted) {
  test::TempDir dir;
  const std::string path = dir.file("model.flynn");
  write_file_atomic(path, std::string("old"));
  {
    StagedFile staged(path, "new");
    EXPECT_EQ(slurp(path), "old");
    EXPECT_EQ(entries(dir.path()), 2u) << "the staged file lies beside the target";
  }
  EXPECT_EQ(slurp(path), "old");
  EXPECT_EQ(entries(dir.path()), 1u) << "an uncommitted staged file is removed";
  const std::string fresh = dir.file("fresh.flynn");
  {
    StagedFile staged(fresh, "bytes");
    EXPECT_FALSE(fs::exists(fresh));
  }
  EXPECT_FALSE(fs::exists(fresh));
  StagedFile staged(path, "new");
  staged.commit();
  staged.commit();  // once only
  EXPECT_EQ(slurp(path), "new");
  EXPECT_EQ(entries(dir.path()), 1u);
  EXPECT_THROW(StagedFile(dir.file("no/such/dir/x"), "x"), Error);
}

TEST(AtomicFile, FollowsSymlinksAndKeepsTheLink) {
  test::TempDir dir;
  fs::create_directory(dir.path() / "real");
  const fs::path target = dir.path() / "real" / "model.flynn";
  { std::ofstream(target) << "old"; }
  const fs::path link = dir.path() / "link.flynn";
  fs::create_symlink("real/model.flynn", link);
  write_file_atomic(link.string(), std::string("new"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(target), "new");
  EXPECT_EQ(entries(dir.path() / "real"), 1u);
}

TEST(AtomicFile, DanglingSymlinkCreatesItsTarget) {
  test::TempDir dir;
  const fs::path link = dir.path() / "link";
  fs::create_symlink(dir.path() / "new.csv", link);
  write_file_atomic(link.string(), std::string("x"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(dir.path() / "new.csv"), "x");
}

TEST(AtomicFile, SymlinkLoopIsAnError) {
  test::TempDir dir;
  fs::create_symlink(dir.path() / "b", dir.path() / "a");
  fs::create_symlink(dir.path() / "a", dir.path() / "b");
  EXPECT_THROW(write_file_atomic((dir.path() / "a").string(), std::string("x")), Error);
}

TEST(AtomicFile, CharacterDevicesAreWrittenInPlace) {
  // A pseudo-terminal of this test, not /dev/null: a regression run as root must not be
  // able to replace a system device (test_pty.hpp).
  test::Pty pty;
  write_file_atomic(pty.path(), std::string("through the terminal"));
  EXPECT_EQ(pty.received(20, 30), "through the terminal");
  struct stat st {};
  ASSERT_EQ(::stat(pty.path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(AtomicFile, FifoIsWrittenInPlaceWhenRead) {
  test::TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader opens first (non-blocking: it needs no writer), so the write finds it
  // there; the pipe holds the bytes until they are read after it. No thread, no retry.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  write_file_atomic(fifo, std::string("through the pipe"));
  std::string received;
  char buf[64];
  ssize_t n = 0;
  while ((n = ::read(reader, buf, sizeof buf)) > 0) received.append(buf, static_cast<std::size_t>(n));
  ::close(reader);
  EXPECT_EQ(n, 0) << "the writer closed the pipe: end of file, " << std::strerror(errno);
  EXPECT_EQ(received, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(AtomicFile, FifoWithoutReaderIsAnErrorNotAHang) {
  test::TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    write_file_atomic(fifo, std::string("x"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no process is reading"), std::string::npos) << e.what();
  }
}

TEST(AtomicFile, FoldersAndMissingParentsAreRefused) {
  test::TempDir dir;
  EXPECT_THROW(write_file_atomic(dir.path().string(), std::string("x")), Error);
  EXPECT_THROW(write_file_atomic(dir.file("missing/sub/out.bin"), std::string("x")), Error);
  EXPECT_THROW(write_file_atomic("", std::string("x")), Error);
  EXPECT_EQ(entries(dir.path()), 0u);
}

TEST(AtomicFile, OutputEqualToAnInputIsRefused) {
  test::TempDir dir;
  const std::string data = dir.file("data.csv");
  { std::ofstream(data) << "1,2,a\n"; }
  const fs::path link = dir.path() / "alias.csv";
  fs::create_symlink(data, link);
  EXPECT_THROW(ensure_output_is_not_an_input(data, {data}, "model"), Error);
  EXPECT_THROW(ensure_output_is_not_an_input(link.string(), {data}, "model"), Error);
  EXPECT_THROW(ensure_output_is_not_an_input(data, {"other", link.string()}, "model"), Error);
  EXPECT_NO_THROW(ensure_output_is_not_an_input(dir.file("new.flynn"), {data}, "model"));
  EXPECT_NO_THROW(ensure_output_is_not_an_input("/dev/null", {"/dev/null"}, "predictions"));
  EXPECT_EQ(slurp(data), "1,2,a\n");
}

}  // namespace
}  // namespace flynn::io
