// AtomicFile: an output file that appears whole or not at all. Writes go to a temporary file
// beside the target ("summary.json.tmp-<pid>"); commit() flushes it, fsyncs it and renames it
// over the target, so a reader (or a run cut short by Ctrl-C, a crash or a full disk) never
// sees a half-written file under the real name. An AtomicFile destroyed without commit()
// removes its temporary file and leaves any earlier target untouched.
//
// Ownership: owns the stream and the temporary file. Thread-safety: none. Invariant: until
// commit() succeeds the target is never written.
#pragma once

#include <fstream>
#include <string>

namespace servesim {

class AtomicFile {
 public:
  // Opens the temporary file. Throws ConfigError naming the target when it cannot.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& path() const { return path_; }

  // Closes, fsyncs and renames the temporary file to the target. Throws ConfigError (e.g.
  // "No space left on device") and removes the temporary file when any step fails.
  // REQUIRES: not committed yet.
  void commit();

 private:
  std::string path_;
  std::string tmp_path_;
  std::ofstream out_;
  bool committed_ = false;
};

// Writes `text` to `path` through an AtomicFile. Throws ConfigError.
void write_file_atomically(const std::string& path, const std::string& text);

// Creates `dir` (and its parents) and proves it writable by writing, fsyncing and removing a
// small file there, so an unwritable folder or a full disk is one line before a long run
// rather than an error after it. `flag` names the option in the message ("--out").
// Throws ConfigError.
void require_writable_directory(const std::string& dir, const std::string& flag);

}  // namespace servesim
