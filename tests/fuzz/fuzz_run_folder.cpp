// libFuzzer target: a result folder (summary.json + requests.csv) read back as `servesim
// compare` reads it (read_run_folder). Input layout: summary.json, then a NUL byte, then
// requests.csv; without a NUL there is no requests.csv (the missing-file path). The folder is
// private to this process, under /dev/shm. Only ConfigError may escape, and a folder that
// reads must hold together: the counts and latency lists agree and the lists are sorted.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/metrics/run_folder.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

class ScratchFolder {
 public:
  ScratchFolder() : path_("/dev/shm/servesim-fuzz-" + std::to_string(::getpid()) + "-run") {
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() { std::filesystem::remove_all(path_); }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  // Replaces the folder's files with `summary` and, when given, `requests`.
  const std::string& write(const std::string& summary, const std::string* requests) {
    std::ofstream(path_ + "/summary.json", std::ios::binary | std::ios::trunc) << summary;
    if (requests != nullptr) {
      std::ofstream(path_ + "/requests.csv", std::ios::binary | std::ios::trunc) << *requests;
    } else {
      std::filesystem::remove(path_ + "/requests.csv");
    }
    return path_;
  }

 private:
  std::string path_;
};

bool sorted_finite(const std::vector<double>& v) {
  return std::is_sorted(v.begin(), v.end()) &&
         std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

void check_invariants(const servesim::RunFolder& run) {
  const bool ok = run.ok <= run.records && run.ttft_s.size() <= run.ok &&
                  run.e2e_s.size() <= run.ok && run.tpot_s.size() <= run.ok &&
                  sorted_finite(run.ttft_s) && sorted_finite(run.tpot_s) &&
                  sorted_finite(run.e2e_s) && run.summary.is_object();
  if (!ok) std::abort();
  // The accessors compare uses must not throw on whatever read.
  (void)run.value("ttft.p50_ms");
  (void)run.clock();
  (void)run.metrics_summary();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ScratchFolder folder;
  const std::string input = servesim::fuzz::as_text(data, size);
  const size_t nul = input.find('\0');
  const std::string summary = input.substr(0, nul);
  const std::string requests = nul == std::string::npos ? "" : input.substr(nul + 1);
  const std::string& dir = folder.write(summary, nul == std::string::npos ? nullptr : &requests);
  return servesim::fuzz::run_or_reject([&] { check_invariants(servesim::read_run_folder(dir)); });
}
