#include "models/cuda_graph_mode.h"

#include <gtest/gtest.h>

#include <string>

#include "models/catalog.h"
#include "models/config_error.h"
#include "models/engine_config.h"
#include "models/model_spec.h"

namespace servesim {
namespace {

TEST(CudaGraphMode, ParsesVllmsNamesBackToThemselves) {
  for (const char* name : {"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"}) {
    EXPECT_EQ(cuda_graph_mode_name(parse_cuda_graph_mode(name, "engine.cudagraph_mode")), name);
  }
}

TEST(CudaGraphMode, RefusesAnotherNameNamingTheFieldAndTheChoices) {
  for (const char* bad : {"full", "FULL_ONLY", "", "PIECEWISE "}) {
    try {
      parse_cuda_graph_mode(bad, "engine.cudagraph_mode");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("engine.cudagraph_mode"), std::string::npos) << what;
      EXPECT_NE(what.find("FULL_DECODE_ONLY"), std::string::npos) << what;
    }
  }
}

TEST(CudaGraphMode, StepsReplayWhatTheModeCapturedForThem) {
  using enum CudaGraphMode;
  EXPECT_EQ(graph_replay(kFullAndPiecewise, true, true), GraphReplay::kFull);
  EXPECT_EQ(graph_replay(kFullAndPiecewise, false, true), GraphReplay::kPiecewise);
  EXPECT_EQ(graph_replay(kFullDecodeOnly, true, true), GraphReplay::kFull);
  EXPECT_EQ(graph_replay(kFullDecodeOnly, false, true), GraphReplay::kNone);
  EXPECT_EQ(graph_replay(kPiecewise, true, true), GraphReplay::kPiecewise);
  EXPECT_EQ(graph_replay(kFull, false, true), GraphReplay::kFull);
  EXPECT_EQ(graph_replay(kNone, true, true), GraphReplay::kNone);
  for (CudaGraphMode m : {kNone, kPiecewise, kFull, kFullDecodeOnly, kFullAndPiecewise}) {
    EXPECT_EQ(graph_replay(m, true, false), GraphReplay::kNone);
  }
}

TEST(CudaGraphMode, EachReleaseHasItsDefaultAndEagerHasNone) {
  EngineConfig e;
  e.vllm_version = {0, 6};
  EXPECT_EQ(e.cuda_graph_mode(), CudaGraphMode::kFullDecodeOnly);  // V0's decode graphs
  e.vllm_version = {0, 10};
  EXPECT_EQ(e.cuda_graph_mode(), CudaGraphMode::kPiecewise);
  e.vllm_version = {0, 11};
  EXPECT_EQ(e.cuda_graph_mode(), CudaGraphMode::kFullAndPiecewise);
  e.cudagraph_mode = CudaGraphMode::kFullDecodeOnly;
  EXPECT_EQ(e.cuda_graph_mode(), CudaGraphMode::kFullDecodeOnly);
  e.cudagraph_mode.reset();
  e.enforce_eager = true;
  EXPECT_EQ(e.cuda_graph_mode(), CudaGraphMode::kNone);
}

ModelSpec catalog_model() {
  return Catalog(SERVESIM_SOURCE_DIR "/configs").resolve_model("Llama-3.1-8B");
}

EngineConfig resolved() {
  EngineConfig e;
  e.max_model_len = 1024;
  e.max_num_seqs = 8;
  e.max_num_batched_tokens = 1024;
  return e;
}

TEST(CudaGraphMode, ValidationRefusesAModeBeforeVllm010OrAgainstEnforceEager) {
  EngineConfig old = resolved();
  old.vllm_version = {0, 9};
  old.cudagraph_mode = CudaGraphMode::kFull;
  try {
    old.validate(catalog_model());
    ADD_FAILURE() << "accepted cudagraph_mode on vLLM 0.9";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("0.10 or later"), std::string::npos) << e.what();
  }
  EngineConfig both = resolved();
  both.enforce_eager = true;
  both.cudagraph_mode = CudaGraphMode::kPiecewise;
  try {
    both.validate(catalog_model());
    ADD_FAILURE() << "accepted PIECEWISE with enforce_eager";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("contradicts enforce_eager"), std::string::npos)
        << e.what();
  }
  both.cudagraph_mode = CudaGraphMode::kNone;
  EXPECT_NO_THROW(both.validate(catalog_model()));
}

}  // namespace
}  // namespace servesim
