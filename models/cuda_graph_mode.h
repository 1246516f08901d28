// CudaGraphMode: which engine steps vLLM V1 replays from captured CUDA graphs, as its
// `--compilation-config '{"cudagraph_mode": ...}'` names them, and what a step of a given shape
// gets from a mode. A step that replays a whole-model graph launches one graph; a piecewise
// step replays graphs of the layers' GEMMs, norms and MLPs but launches attention eagerly
// between them; a step without a graph launches every kernel from the host. The cost model
// prices the difference (docs/cost-model.md, "CUDA graphs"). Stateless; thread-safe.
#pragma once

#include <array>
#include <string_view>

namespace servesim {

enum class CudaGraphMode {
  kNone,              // no graphs (what --enforce-eager also gives)
  kPiecewise,         // vLLM 0.8-0.10's default: every captured size, attention outside
  kFull,              // whole-model graphs for every captured size, mixed batches included
  kFullDecodeOnly,    // whole-model graphs for decode-only batches; mixed batches have none
  kFullAndPiecewise,  // vLLM 0.11+'s default: whole-model for decode, piecewise for the rest
};

// Every mode, in the order vLLM's enum declares them (for lists a user picks from).
inline constexpr std::array<CudaGraphMode, 5> kAllCudaGraphModes = {
    CudaGraphMode::kNone, CudaGraphMode::kPiecewise, CudaGraphMode::kFull,
    CudaGraphMode::kFullDecodeOnly, CudaGraphMode::kFullAndPiecewise};

// How one step runs.
enum class GraphReplay {
  kNone,       // every kernel launched by the host
  kPiecewise,  // per layer: one graph replay and the attention kernels
  kFull,       // one graph replay for the forward pass
};

// vLLM's spelling: "NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE".
std::string_view cuda_graph_mode_name(CudaGraphMode mode);

// Parses vLLM's spelling (case as vLLM writes it). Throws ConfigError naming `field` and the
// five accepted names on anything else.
CudaGraphMode parse_cuda_graph_mode(std::string_view text, std::string_view field);

// How a step runs under `mode`: decode_only is true when the step has no prompt tokens;
// captured is false when the step has more tokens than the largest captured size (vLLM then
// runs it without a graph whatever the mode).
GraphReplay graph_replay(CudaGraphMode mode, bool decode_only, bool captured);

}  // namespace servesim
