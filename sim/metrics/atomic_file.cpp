#include "sim/metrics/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "models/config_error.h"

namespace servesim {
namespace {

// fsync through a descriptor of its own: std::ofstream does not expose one. Linux flushes
// the file's data whatever the descriptor's access mode.
int fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int rc = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return rc;
}

}  // namespace

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), tmp_path_(path_ + ".tmp-" + std::to_string(::getpid())) {
  out_.open(tmp_path_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    throw ConfigError(path_ + ": cannot create the file: " + std::strerror(errno));
  }
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::remove(tmp_path_.c_str());
}

void AtomicFile::commit() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  int error = written && !out_.fail() ? fsync_path(tmp_path_) : (errno != 0 ? errno : EIO);
  if (error == 0 && std::rename(tmp_path_.c_str(), path_.c_str()) != 0) error = errno;
  if (error != 0) {
    std::remove(tmp_path_.c_str());
    throw ConfigError(path_ + ": cannot write the file: " + std::strerror(error));
  }
  committed_ = true;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.stream() << text;
  file.commit();
}

void require_writable_directory(const std::string& dir, const std::string& flag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ConfigError(flag + ": cannot create directory '" + dir + "': " + ec.message());
  const std::string probe =
      (std::filesystem::path(dir) / (".servesim-write-check-" + std::to_string(::getpid())))
          .string();
  try {
    AtomicFile file(probe);
    // A block's worth: a full disk often still takes a file of zero or a few bytes.
    file.stream() << std::string(4096, '\n');
    file.commit();
  } catch (const ConfigError& e) {
    throw ConfigError(flag + ": cannot write into '" + dir +
                      "': " + std::string(e.what()).substr(std::string(e.what()).rfind(": ") + 2));
  }
  std::remove(probe.c_str());
}

}  // namespace servesim
