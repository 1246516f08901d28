// libFuzzer target: the values users type after command-line flags, parsed as the commands
// parse them — `--vary` (parse_sweep_axis, then sweep_points: `sweep`, `plan`, the GUI's
// Trade-offs axis), `--slo` (parse_slo_target: `plan`, `sweep`), sizes (parse_size_bytes:
// `memory`'s --kv-cache-memory and the like), `--vllm-version` (VllmVersion::parse) and
// `--dtype` (parse_dtype). The first byte picks the parser, the rest is the value.
//
// Only ConfigError may escape, and what parses must make sense: an axis has a key and 1 to
// kMaxSweepPoints non-empty values that sweep_points turns into one "key=value" override each;
// an SLO has a known percentile and a finite limit > 0 and its name() reads back; a size is
// 0 to 9e18 bytes; a version is in the modelled range and its text reads back as itself; a
// dtype's name reads back as that dtype.
#include <cmath>
#include <cstdlib>
#include <string>

#include "cli/size_parse.h"
#include "models/dtype.h"
#include "models/engine_config.h"
#include "plan/slo_check.h"
#include "plan/sweep.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace servesim;

void check(bool ok) {
  if (!ok) std::abort();
}

void sweep_axis(const std::string& text) {
  const SweepAxis axis = parse_sweep_axis(text);
  check(!axis.key.empty() && axis.key.find('=') == std::string::npos);
  check(!axis.values.empty() && axis.values.size() <= kMaxSweepPoints);
  for (const std::string& v : axis.values) check(!v.empty());
  const std::vector<std::vector<std::string>> points = sweep_points({axis});
  check(points.size() == axis.values.size());
  for (size_t i = 0; i < points.size(); ++i) {
    check(points[i].size() == 1 && points[i][0] == axis.key + "=" + axis.values[i]);
  }
}

void slo(const std::string& text) {
  const SloTarget t = parse_slo_target(text);
  check(t.percentile == 50 || t.percentile == 90 || t.percentile == 95 || t.percentile == 99);
  check(std::isfinite(t.limit_s) && t.limit_s > 0);
  const SloTarget again = parse_slo_target(t.name() + "=1");
  check(again.metric == t.metric && again.percentile == t.percentile);
}

void size(const std::string& text) {
  const int64_t bytes = parse_size_bytes(text, "--kv-cache-memory");
  check(bytes >= 0 && bytes <= static_cast<int64_t>(9e18));
}

void version(const std::string& text) {
  const VllmVersion v = VllmVersion::parse(text, "--vllm-version");
  check(v.at_least(kOldestModelledVllm.major, kOldestModelledVllm.minor));
  check(!v.at_least(kNewestModelledVllm.major, kNewestModelledVllm.minor + 1));
  check(VllmVersion::parse(v.to_string(), "--vllm-version") == v);
}

void dtype(const std::string& text) {
  const DType d = parse_dtype(text, "--dtype");
  check(parse_dtype(dtype_name(d), "--dtype") == d);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size_bytes) {
  if (size_bytes == 0) return 0;
  const std::string value = servesim::fuzz::as_text(data + 1, size_bytes - 1);
  return servesim::fuzz::run_or_reject([&] {
    switch (data[0] % 5) {
      case 0:
        return sweep_axis(value);
      case 1:
        return slo(value);
      case 2:
        return size(value);
      case 3:
        return version(value);
      default:
        return dtype(value);
    }
  });
}
