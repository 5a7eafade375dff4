// The CLI never destroys what it reads and never reports success for output that was not
// written: output == input is refused, links and devices are honoured, write
// errors on standard output give a non-zero exit.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include "cli_support.hpp"
#include "test_pty.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::read_text;
using test::run_cli;
using test::run_shell;
using test::TempDir;
using test::write_text;

class CliOutputSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = dir_.file("train.csv");
    std::string csv;
    for (int i = 0; i < 40; ++i)
      csv += std::to_string(i % 7) + "," + std::to_string((i * 3) % 5) + "," + (i % 2 ? "a" : "b") + "\n";
    write_text(data_, csv);
    model_ = dir_.file("m.flynn");
    ASSERT_EQ(run_cli("train --data " + data_ + " --model " + model_ + " --quiet").exit_code, 0);
  }
  TempDir dir_;
  std::string data_, model_;
};

TEST_F(CliOutputSafety, ModelOverItsOwnTrainingDataIsRefused) {
  const std::string before = read_text(data_);
  auto r = run_cli("train --data " + data_ + " --model " + data_ + " --quiet");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("would overwrite the input"), std::string::npos) << r.err;
  EXPECT_EQ(read_text(data_), before);
  // Through a symbolic link too.
  std::filesystem::create_symlink(data_, dir_.file("alias.csv"));
  r = run_cli("train --data " + data_ + " --model " + dir_.file("alias.csv") + " --quiet");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(read_text(data_), before);
}

TEST_F(CliOutputSafety, PredictionsOverTheDataOrTheModelAreRefused) {
  const std::string data_before = read_text(data_), model_before = read_text(model_);
  for (const std::string& out : {data_, model_}) {
    auto r = run_cli("predict --model " + model_ + " --data " + data_ + " --out " + out + " --quiet");
    EXPECT_EQ(r.exit_code, 1) << out;
    EXPECT_NE(r.err.find("would overwrite the input"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_text(data_), data_before);
  EXPECT_EQ(read_text(model_), model_before);
}

TEST_F(CliOutputSafety, DevicesAndLinksAreNotReplaced) {
  // A pseudo-terminal of this test stands for the device: a regression run as root must
  // not be able to replace /dev/null (test_pty.hpp). The model goes through it whole.
  test::Pty pty;
  auto r = run_cli("train --data " + data_ + " --model " + pty.path() + " --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(pty.received(8, 30).substr(0, 8), "FLYNNMDL");
  struct stat st {};
  ASSERT_EQ(::stat(pty.path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  std::filesystem::create_directory(dir_.path() / "real");
  std::filesystem::create_symlink(dir_.path() / "real" / "preds.csv", dir_.path() / "link.csv");
  r = run_cli("predict --model " + model_ + " --data " + data_ + " --out " + dir_.file("link.csv") + " --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir_.path() / "link.csv"));
  EXPECT_NE(read_text((dir_.path() / "real" / "preds.csv").string()).find("row,prediction"), std::string::npos);
}

TEST_F(CliOutputSafety, WriteErrorsOnStandardOutputFailTheCommand) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  for (const std::string& cmd : {"predict --model " + model_ + " --data " + data_ + " --quiet",
                                 "info --model " + model_, "info --model " + model_ + " --json"}) {
    auto r2 = run_shell(std::string(FLYNN_CLI_PATH) + " " + cmd + " > /dev/full");
    EXPECT_EQ(r2.exit_code, 1) << cmd;
    EXPECT_NE(r2.err.find("writing to standard output failed"), std::string::npos) << r2.err;
  }
}

}  // namespace
}  // namespace flynn
