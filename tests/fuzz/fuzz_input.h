// Helpers shared by the libFuzzer targets in this folder: what counts as a clean rejection,
// and a scratch file for parsers that read from a path.
//
// Contract of every target: an input either parses or is rejected with ConfigError (the one
// exception type for bad user input, models/config_error.h). Anything else escaping the
// target — another exception type, std::bad_alloc, a sanitizer report, a crash — is a
// finding, and libFuzzer stops with the input that caused it.
// Thread-safety: none (libFuzzer runs one input at a time per process).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "models/config_error.h"

namespace servesim::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `parse`; a ConfigError is a clean rejection, everything else propagates to libFuzzer.
template <typename Parse>
int run_or_reject(Parse&& parse) {
  try {
    parse();
  } catch (const ConfigError&) {
    // Bad input rejected with a one-line message: the behaviour the target checks for.
  }
  return 0;
}

// A file private to this process whose contents are replaced by each input, for parsers
// that take a path (traces, safetensors). /dev/shm keeps the writes off the disk.
class ScratchFile {
 public:
  explicit ScratchFile(std::string_view suffix)
      : path_("/dev/shm/servesim-fuzz-" + std::to_string(::getpid()) + std::string(suffix)) {}
  ~ScratchFile() { ::unlink(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& write(const uint8_t* data, size_t size) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace servesim::fuzz
