#include "models/cuda_graph_mode.h"

#include <cstddef>
#include <string>

#include "models/config_error.h"

namespace servesim {
std::string_view cuda_graph_mode_name(CudaGraphMode mode) {
  switch (mode) {
    case CudaGraphMode::kNone:
      return "NONE";
    case CudaGraphMode::kPiecewise:
      return "PIECEWISE";
    case CudaGraphMode::kFull:
      return "FULL";
    case CudaGraphMode::kFullDecodeOnly:
      return "FULL_DECODE_ONLY";
    case CudaGraphMode::kFullAndPiecewise:
      return "FULL_AND_PIECEWISE";
  }
  return "NONE";
}

CudaGraphMode parse_cuda_graph_mode(std::string_view text, std::string_view field) {
  std::string names;
  for (std::size_t i = 0; i < kAllCudaGraphModes.size(); ++i) {
    const std::string_view name = cuda_graph_mode_name(kAllCudaGraphModes[i]);
    if (name == text) return kAllCudaGraphModes[i];
    names += std::string(i == 0                               ? ""
                         : i + 1 == kAllCudaGraphModes.size() ? " or "
                                                              : ", ") +
             std::string(name);
  }
  throw ConfigError(std::string(field) + ": '" + std::string(text) +
                    "' is not a vLLM cudagraph_mode; use " + names);
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
