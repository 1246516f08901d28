#include "calibration/measured/vllm_startup_log.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "models/config_error.h"

namespace servesim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Far beyond any GPU, and far below where the sums of the memory terms overflow int64_t.
constexpr double kMaxGiB = 1024.0 * 1024.0;  // 1 PiB
// Counts (blocks, tokens, sizes) read into int fields, and block counts times page bytes
// stay within int64_t.
constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();

// The logged numbers are read strictly (whole text, locale-free): what a pattern matched but
// is no number ("1.2.3", "."), or is out of range, is a ConfigError that parse() prefixes with
// the line.
double decimal(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    throw ConfigError("'" + text + "' is not a number");
  }
  return v;
}

int64_t gib_bytes(const std::string& text) {
  const double gib = decimal(text);
  if (std::abs(gib) > kMaxGiB) throw ConfigError(text + " GiB is beyond 1 PiB");
  return static_cast<int64_t>(std::llround(gib * kGiB));
}

// A fraction of the GPU's memory: in [0, 1].
double utilization(const std::string& text) {
  const double u = decimal(text);
  if (!(u >= 0 && u <= 1))
    throw ConfigError("gpu_memory_utilization " + text + " is not in [0, 1]");
  return u;
}

double non_negative(const std::string& text) {
  const double v = decimal(text);
  if (v < 0) throw ConfigError(text + " is negative");
  return v;
}

// Digits with optional thousands commas ("439,216").
int64_t integer(const std::string& text) {
  std::string digits;
  for (char c : text) {
    if (c != ',') digits += c;
  }
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    throw ConfigError("'" + text + "' is not a whole number");
  }
  if (v < 0 || v > kMaxCount) throw ConfigError(text + " is not in [0, 2^31 - 1]");
  return v;
}

int count(const std::string& text) {
  return static_cast<int>(integer(text));
}

template <typename T>
void set_once(std::optional<T>& field, const T& value) {
  if (!field) field = value;
}

const std::regex kPiecewiseGraphs("PIECEWISE=([0-9]+)");
const std::regex kFullGraphs("FULL=([0-9]+)");

// The config keys read_config looks for, each with its pattern compiled once.
const std::map<std::string_view, std::regex>& config_patterns() {
  static const std::map<std::string_view, std::regex> kPatterns = [] {
    std::map<std::string_view, std::regex> out;
    for (std::string_view key :
         {"model", "tensor_parallel_size", "pipeline_parallel_size", "max_seq_len", "max_model_len",
          "max_num_seqs", "max_num_batched_tokens", "block_size", "kv_cache_dtype", "dtype",
          "quantization", "enforce_eager", "chunked_prefill_enabled", "enable_chunked_prefill",
          "gpu_memory_utilization"}) {
      out.emplace(key,
                  std::regex("(?:^|[\\s,{(])'?" + std::string(key) + "'?(?:=|: )'?([^',}\\s)]*)"));
    }
    return out;
  }();
  return kPatterns;
}

// `key=value` in the engine's config line, or `'key': value` in its non-default args.
// REQUIRES: key is one of config_patterns().
std::optional<std::string> config_value(const std::string& line, std::string_view key) {
  if (line.find(key) == std::string::npos) return std::nullopt;
  std::smatch m;
  if (!std::regex_search(line, m, config_patterns().at(key))) return std::nullopt;
  return m[1].str();
}

void read_config(const std::string& line, VllmStartupLog& log) {
  auto number = [&](const char* key, std::optional<int>& field) {
    const auto v = config_value(line, key);
    if (v && !v->empty() && std::isdigit(static_cast<unsigned char>((*v)[0]))) {
      set_once(field, count(*v));
    }
  };
  auto text = [&](const char* key, std::optional<std::string>& field) {
    if (const auto v = config_value(line, key); v && !v->empty()) set_once(field, *v);
  };
  text("model", log.model);
  number("tensor_parallel_size", log.tensor_parallel_size);
  number("pipeline_parallel_size", log.pipeline_parallel_size);
  number("max_seq_len", log.max_model_len);
  number("max_model_len", log.max_model_len);
  number("max_num_seqs", log.max_num_seqs);
  number("max_num_batched_tokens", log.max_num_batched_tokens);
  number("block_size", log.block_size);
  text("kv_cache_dtype", log.kv_cache_dtype);
  if (auto v = config_value(line, "dtype")) {
    set_once(log.dtype, v->starts_with("torch.") ? v->substr(6) : *v);
  }
  if (auto v = config_value(line, "quantization"); v && *v != "None")
    set_once(log.quantization, *v);
  if (auto v = config_value(line, "enforce_eager"); v && (*v == "True" || *v == "False")) {
    set_once(log.enforce_eager, *v == "True");
  }
  for (const char* key : {"chunked_prefill_enabled", "enable_chunked_prefill"}) {
    if (auto v = config_value(line, key); v && (*v == "True" || *v == "False")) {
      set_once(log.enable_chunked_prefill, *v == "True");
    }
  }
  if (auto v = config_value(line, "gpu_memory_utilization"); v && !v->empty()) {
    set_once(log.gpu_memory_utilization, utilization(*v));
  }
}

using Handler = std::function<void(const std::smatch&, VllmStartupLog&)>;

// `anchor` is a literal that every match of `pattern` contains: a line without it cannot match,
// and std::regex is slow enough that trying every pattern on every line of a server's log (a
// periodic stats line every 10 s, an access line per request) took seconds per 40,000 lines.
struct Rule {
  std::string_view anchor;
  std::regex pattern;
  Handler handle;
};

// Compiles every pattern, so that the first line read does not pay for it.
std::vector<Rule> rules() {
  config_patterns();
  const std::string num = "(-?[0-9.]+)";
  return {
      {"LLM engine (",
       std::regex("Initializing an? (V1 )?LLM engine \\(v([^)]+)\\) with config: (.*)"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.version_text, m[2].str());
         set_once(log.v1_engine, m[1].matched);
         read_config(m[3].str(), log);
       }},
      {"non-default args: ", std::regex("non-default args: (\\{.*)"),
       [](const std::smatch& m, VllmStartupLog& log) { read_config(m[1].str(), log); }},
      {"vLLM API server version", std::regex("vLLM API server version:? v?([0-9][^\\s,]*)"),
       [](const std::smatch& m, VllmStartupLog& log) { set_once(log.version_text, m[1].str()); }},
      {"Chunked prefill is enabled with max_num_batched_tokens=",
       std::regex("Chunked prefill is enabled with max_num_batched_tokens=([0-9]+)"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.max_num_batched_tokens, count(m[1].str()));
       }},
      {"took ", std::regex("(?:Model loading|Loading model weights) took " + num + " ?Gi?B"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.model_loading_bytes, gib_bytes(m[1].str()));
       }},
      {"x gpu_memory_utilization (",
       std::regex("total_gpu_memory \\(" + num + " ?GiB\\) x gpu_memory_utilization \\(" + num +
                  "\\) = " + num + " ?GiB"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.total_bytes, gib_bytes(m[1].str()));
         set_once(log.gpu_memory_utilization, utilization(m[2].str()));
         set_once(log.requested_bytes, gib_bytes(m[3].str()));
       }},
      {"model weights take ",
       std::regex("model weights take " + num + " ?GiB; non_torch_memory takes " + num +
                  " ?GiB; PyTorch activation peak memory takes " + num +
                  " ?GiB; the rest of the memory reserved for KV Cache is " + num + " ?GiB"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.weights_bytes, gib_bytes(m[1].str()));
         set_once(log.non_torch_bytes, gib_bytes(m[2].str()));
         set_once(log.activation_bytes, gib_bytes(m[3].str()));
         set_once(log.kv_reserved_bytes, gib_bytes(m[4].str()));
       }},
      // V0 0.6.0-0.6.4: peak_torch_memory counts the weights; the activation peak is what
      // it adds to them (resolved once the weights line is known).
      {"Memory profiling results: ",
       std::regex("Memory profiling results: .*total_gpu_memory=" + num +
                  "GiB.*peak_torch_memory=" + num + "GiB.*non_torch_memory=" + num +
                  "GiB.*kv_cache_size=" + num + "GiB.*gpu_memory_utilization=" + num),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.total_bytes, gib_bytes(m[1].str()));
         set_once(log.peak_torch_bytes, gib_bytes(m[2].str()));
         set_once(log.non_torch_bytes, gib_bytes(m[3].str()));
         set_once(log.kv_reserved_bytes, gib_bytes(m[4].str()));
         set_once(log.gpu_memory_utilization, utilization(m[5].str()));
       }},
      {"Available KV cache memory: ", std::regex("Available KV cache memory: " + num + " ?GiB"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.available_kv_bytes, gib_bytes(m[1].str()));
       }},
      {"GiB memory for KV Cache as specified by",
       std::regex("reserved " + num + " GiB memory for KV Cache as specified by"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.available_kv_bytes, gib_bytes(m[1].str()));
       }},
      {"GPU KV cache size: ", std::regex("GPU KV cache size: ([0-9,]+) tokens"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.kv_cache_tokens, integer(m[1].str()));
       }},
      {"Maximum concurrency for ",
       std::regex("Maximum concurrency for ([0-9,]+) tokens per request: " + num + "x"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.concurrency_len, count(m[1].str()));
         set_once(log.max_concurrency, non_negative(m[2].str()));
       }},
      {" blocks: ", std::regex("# (?:GPU|gpu|CUDA|cuda) blocks: ([0-9]+), # CPU blocks: ([0-9]+)"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.num_gpu_blocks, integer(m[1].str()));
         set_once(log.num_cpu_blocks, integer(m[2].str()));
       }},
      {"num_gpu_blocks is: ", std::regex("num_gpu_blocks is: ([0-9]+)"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.num_gpu_blocks, integer(m[1].str()));
       }},
      {"Graph capturing finished in ",
       std::regex("Graph capturing finished in [0-9.]+ secs?, took " + num + " GiB"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.cuda_graph_captured_bytes, gib_bytes(m[1].str()));
       }},
      {"Estimated CUDA graph memory: ",
       std::regex("Estimated CUDA graph memory: " + num + " GiB total"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.cuda_graph_estimate_bytes, gib_bytes(m[1].str()));
       }},
      {"CUDA graph pool memory: ",
       std::regex("CUDA graph pool memory: " + num + " GiB \\(actual\\), " + num +
                  " GiB \\(estimated\\)"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.cuda_graph_captured_bytes, gib_bytes(m[1].str()));
         set_once(log.cuda_graph_estimate_bytes, gib_bytes(m[2].str()));
       }},
      // V1's advice line after profiling (with its --kv-cache-memory suggestion).
      {"Free memory on device (",
       std::regex("Free memory on device \\(" + num + "/" + num +
                  " GiB\\) on startup\\. Desired GPU memory utilization is \\(" + num + ", " + num +
                  " GiB\\)\\. Actual usage is " + num +
                  " GiB for consumed memory \\(weights \\+ non-torch\\), " + num +
                  " GiB for peak activation(?:, and " + num + " GiB for CUDAGraph memory)?"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.total_bytes, gib_bytes(m[2].str()));
         set_once(log.gpu_memory_utilization, utilization(m[3].str()));
         set_once(log.requested_bytes, gib_bytes(m[4].str()));
         set_once(log.activation_bytes, gib_bytes(m[6].str()));
         if (m[7].matched) set_once(log.cuda_graph_estimate_bytes, gib_bytes(m[7].str()));
       }},
      {"Profiling CUDA graph memory: ", std::regex("Profiling CUDA graph memory: (.*)"),
       [](const std::smatch& m, VllmStartupLog& log) {
         const std::string modes = m[1].str();
         std::smatch g;
         if (std::regex_search(modes, g, kPiecewiseGraphs)) {
           set_once(log.cuda_graphs_piecewise, count(g[1].str()));
         }
         if (std::regex_search(modes, g, kFullGraphs)) {
           set_once(log.cuda_graphs_full, count(g[1].str()));
         }
       }},
      {"current --gpu-memory-utilization=",
       std::regex("current --gpu-memory-utilization=" + num + " is equivalent"),
       [](const std::smatch& m, VllmStartupLog& log) {
         set_once(log.gpu_memory_utilization, utilization(m[1].str()));
       }},
  };
}

// The text fields reach JSON reports (memory --json), whose writer refuses bytes that are not
// UTF-8 (nlohmann's type_error 316): such a field is refused here, naming it.
void require_utf8(const std::optional<std::string>& field, const char* name,
                  const std::string& origin) {
  if (!field) return;
  try {
    (void)nlohmann::json(*field).dump();
  } catch (const nlohmann::json::type_error&) {
    throw ConfigError(origin + ": the log's " + name + " is not valid UTF-8");
  }
}

// V0 0.6.0-0.6.4 logged the torch peak with the weights in it: the activation peak is what
// the profiling run added to them.
void resolve_peak_with_weights(VllmStartupLog& log) {
  if (!log.peak_torch_bytes || log.activation_bytes || !log.model_loading_bytes) return;
  log.activation_bytes = *log.peak_torch_bytes - *log.model_loading_bytes;
}

}  // namespace

VllmStartupLog VllmStartupLog::parse(std::istream& in, const std::string& origin) {
  static const std::vector<Rule> kRules = rules();
  VllmStartupLog log;
  log.origin = origin;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (const Rule& rule : kRules) {
      if (line.find(rule.anchor) == std::string::npos) continue;
      std::smatch m;
      if (!std::regex_search(line, m, rule.pattern)) continue;
      try {
        rule.handle(m, log);
      } catch (const ConfigError& e) {
        throw ConfigError(origin + " line " + std::to_string(number) + ": in '" + m[0].str() +
                          "': " + e.what());
      }
    }
  }
  resolve_peak_with_weights(log);
  require_utf8(log.version_text, "vLLM version", origin);
  require_utf8(log.model, "model", origin);
  require_utf8(log.dtype, "dtype", origin);
  require_utf8(log.quantization, "quantization", origin);
  require_utf8(log.kv_cache_dtype, "kv_cache_dtype", origin);
  if (log.version_text) {
    try {
      log.version = VllmVersion::parse(*log.version_text, origin + ": the log's version");
      if (!log.v1_engine) log.v1_engine = log.version->v1_engine();
    } catch (const ConfigError& e) {
      log.unmodelled_version = e.what();  // the caller may name a release to compare it as
    }
  }
  if (log.total_bytes && log.gpu_memory_utilization && !log.requested_bytes) {
    log.requested_bytes = static_cast<int64_t>(
        std::ceil(static_cast<double>(*log.total_bytes) * *log.gpu_memory_utilization));
  }
  if (!log.kv_bytes() && !log.kv_cache_tokens && !log.num_gpu_blocks) {
    throw ConfigError(origin +
                      ": no vLLM KV-cache line found; expected 'Available KV cache memory: X "
                      "GiB', 'GPU KV cache size: N tokens', '# GPU blocks: N' or the memory "
                      "profiling line (the INFO-level start-up log of vLLM " +
                      kOldestModelledVllm.to_string() + " to " + kNewestModelledVllm.to_string() +
                      ")");
  }
  return log;
}

VllmStartupLog VllmStartupLog::read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("--from-log: cannot open '" + path + "'");
  return parse(in, path);
}

}  // namespace servesim
