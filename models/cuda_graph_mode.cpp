#include "models/cuda_graph_mode.h"

#include <array>
#include <string>
#include <utility>

#include "models/config_error.h"

namespace servesim {
namespace {

constexpr std::array<std::pair<CudaGraphMode, std::string_view>, 5> kNames = {{
    {CudaGraphMode::kNone, "NONE"},
    {CudaGraphMode::kPiecewise, "PIECEWISE"},
    {CudaGraphMode::kFull, "FULL"},
    {CudaGraphMode::kFullDecodeOnly, "FULL_DECODE_ONLY"},
    {CudaGraphMode::kFullAndPiecewise, "FULL_AND_PIECEWISE"},
}};

}  // namespace

std::string_view cuda_graph_mode_name(CudaGraphMode mode) {
  for (const auto& [m, name] : kNames) {
    if (m == mode) return name;
  }
  return "NONE";
}

CudaGraphMode parse_cuda_graph_mode(std::string_view text, std::string_view field) {
  for (const auto& [m, name] : kNames) {
    if (name == text) return m;
  }
  throw ConfigError(std::string(field) + ": '" + std::string(text) +
                    "' is not a vLLM cudagraph_mode; use NONE, PIECEWISE, FULL, "
                    "FULL_DECODE_ONLY or FULL_AND_PIECEWISE");
}

GraphReplay graph_replay(CudaGraphMode mode, bool decode_only, bool captured) {
  if (!captured) return GraphReplay::kNone;
  switch (mode) {
    case CudaGraphMode::kNone:
      return GraphReplay::kNone;
    case CudaGraphMode::kPiecewise:
      return GraphReplay::kPiecewise;
    case CudaGraphMode::kFull:
      return GraphReplay::kFull;
    case CudaGraphMode::kFullDecodeOnly:
      return decode_only ? GraphReplay::kFull : GraphReplay::kNone;
    case CudaGraphMode::kFullAndPiecewise:
      return decode_only ? GraphReplay::kFull : GraphReplay::kPiecewise;
  }
  return GraphReplay::kNone;
}

}  // namespace servesim
