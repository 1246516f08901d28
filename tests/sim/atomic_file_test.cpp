#include "sim/metrics/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "models/config_error.h"
#include "sim/metrics/result_writer.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("atomic_file_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all);
    fs::remove_all(dir_);
  }
  std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  size_t entries() { return std::distance(fs::directory_iterator(dir_), fs::directory_iterator()); }

  fs::path dir_;
};

TEST_F(AtomicFileTest, TargetAppearsOnlyOnCommit) {
  const fs::path target = dir_ / "summary.json";
  std::ofstream(target) << "old";
  AtomicFile file(target.string());
  file.stream() << "new";
  EXPECT_EQ(read(target), "old");  // a reader meanwhile sees the earlier file, whole
  file.commit();
  EXPECT_EQ(read(target), "new");
  EXPECT_EQ(entries(), 1u);  // no temporary left behind
}

TEST_F(AtomicFileTest, DestroyedWithoutCommitLeavesNothing) {
  {
    AtomicFile file((dir_ / "summary.json").string());
    file.stream() << "half";
  }
  EXPECT_EQ(entries(), 0u);
}

// Root writes into read-only folders, and CI runs as root: there the check runs in a child
// process that has given root up for nobody (uid and gid 65534).
TEST_F(AtomicFileTest, UnwritableDirectoryIsOneLineBeforeTheRun) {
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                            fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
  const std::string dir = dir_.string();
  auto check = [&dir] {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) std::exit(2);
    try {
      require_writable_directory(dir, "--out");
    } catch (const ConfigError& e) {
      std::cerr << e.what() << "\n";
      std::exit(3);
    }
    std::exit(0);
  };
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(check(), ::testing::ExitedWithCode(3),
              "^--out: cannot write into '" + dir + "': Permission denied\n$");
}

TEST_F(AtomicFileTest, DirectoryUnderAFileIsOneLine) {
  std::ofstream(dir_ / "file") << "x";
  try {
    require_writable_directory((dir_ / "file" / "out").string(), "--out");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--out: cannot create directory"), std::string::npos);
  }
  EXPECT_NO_THROW(require_writable_directory((dir_ / "new" / "deeper").string(), "--out"));
  EXPECT_EQ(entries(), 2u);  // "file" and "new": the probe file is gone
}

// A write that fails half-way (a full disk) must fail commit() with the reason and leave
// neither the target nor the temporary file. RLIMIT_FSIZE makes writes past a size fail
// (EFBIG) for any user, root included, as ENOSPC would.
TEST_F(AtomicFileTest, WriteFailureIsACleanFailure) {
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    AtomicFile file((dir_ / "requests.csv").string());
    file.stream() << std::string(1 << 20, 'x');
    file.commit();
  } catch (const ConfigError& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find("requests.csv: cannot write the file"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_EQ(entries(), 0u);
}

TEST_F(AtomicFileTest, ResultWriterRemovesItsFilesWhenTheRunFails) {
  try {
    ResultWriter writer(dir_.string());
    writer.on_request_done(RequestRecord{});
    throw std::runtime_error("the run failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(entries(), 0u);
  {
    ResultWriter writer(dir_.string());
    writer.on_request_done(RequestRecord{});
  }
  EXPECT_TRUE(fs::exists(dir_ / "requests.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "timeseries.csv"));
  EXPECT_EQ(entries(), 2u);
}

}  // namespace
}  // namespace servesim
