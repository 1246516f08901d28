#include "models/roofline_cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "models/batch_shape.h"
#include "models/catalog.h"
#include "models/config_error.h"
#include "models/engine_config.h"
#include "models/hardware_spec.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"

namespace servesim {
namespace {

// A model small enough to compute by hand: hidden 64, 2 layers, 4 query heads and 2 KV heads
// of 16, SwiGLU width 128, vocabulary 256.
ModelSpec tiny_model() {
  ModelSpec m;
  m.name = "tiny";
  m.hidden_size = 64;
  m.num_layers = 2;
  m.num_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 16;
  m.intermediate_size = 128;
  m.vocab_size = 256;
  m.max_position_embeddings = 4096;
  return m;
}

// Round numbers: 1 TFLOP/s, 100 GB/s, efficiencies 1, 1 us per kernel launch.
HardwareSpec round_gpu() {
  HardwareSpec g;
  g.name = "round";
  g.memory_total_bytes = int64_t{1} << 34;
  g.memory_bandwidth_Bps = 1e11;
  g.peak_bf16_flops = 1e12;
  g.pcie_Bps = 1e10;
  g.nvlink_Bps = 0;
  g.compute_efficiency = 1;
  g.memory_efficiency = 1;
  g.kernel_launch_s = 1e-6;
  return g;
}

RooflineOptions hand_options() {
  RooflineOptions o;
  o.attention_compute_efficiency = 1;
  o.attention_memory_efficiency = 1;
  o.step_overhead_s = 10e-6;
  o.seq_overhead_s = 0;
  o.cuda_graphs = false;
  return o;
}

double op(const StepTime& t, Op o) {
  return t[o];
}

TEST(BatchShapeTest, AddSequenceAccumulatesPrefillAndDecodeSums) {
  BatchShape b;
  b.add_sequence(4, 10, true, true);   // queries at positions 11..14 see 11+12+13+14 = 50 keys
  b.add_sequence(3, 0, true, false);   // 1+2+3 = 6
  b.add_sequence(1, 20, false, true);  // reads 21 cached tokens
  b.add_sequence(1, 99, false, true);  // 100
  EXPECT_EQ(b.num_seqs, 4);
  EXPECT_EQ(b.num_prefill_seqs, 2);
  EXPECT_EQ(b.num_decode_seqs, 2);
  EXPECT_EQ(b.num_tokens, 9);
  EXPECT_EQ(b.prefill_tokens, 7);
  EXPECT_EQ(b.decode_tokens, 2);
  EXPECT_DOUBLE_EQ(b.prefill_attention_pairs, 56);
  EXPECT_EQ(b.prefill_kv_tokens, 14 + 3);
  EXPECT_EQ(b.decode_context_tokens, 21 + 100);
  EXPECT_EQ(b.num_sampled, 3);
  // No window: the windowed sums are the plain ones.
  EXPECT_DOUBLE_EQ(b.windowed_prefill_attention_pairs, 56);
  EXPECT_EQ(b.windowed_prefill_kv_tokens, 17);
  EXPECT_EQ(b.windowed_decode_context_tokens, 121);
}

TEST(BatchShapeTest, WindowedSumsCapEachQueryAtTheWindow) {
  BatchShape b;
  b.sliding_window = 12;
  b.add_sequence(4, 10, true, true);   // min(p, 12) for p = 11..14: 11 + 12 + 12 + 12 = 47
  b.add_sequence(3, 0, true, true);    // all inside the window: 6
  b.add_sequence(2, 30, true, true);   // beyond the window: 2 * 12 = 24
  b.add_sequence(1, 20, false, true);  // 12 of 21
  b.add_sequence(1, 5, false, true);   // 6
  EXPECT_DOUBLE_EQ(b.prefill_attention_pairs, 50 + 6 + 2 * 30 + 3);
  EXPECT_DOUBLE_EQ(b.windowed_prefill_attention_pairs, 47 + 6 + 24);
  EXPECT_EQ(b.windowed_prefill_kv_tokens, (10 + 4) + (0 + 3) + (12 + 2));
  EXPECT_EQ(b.windowed_decode_context_tokens, 12 + 6);
  b.clear();
  EXPECT_EQ(b.sliding_window, 12);
  EXPECT_EQ(b.num_seqs, 0);
  EXPECT_EQ(b.num_tokens, 0);
  EXPECT_EQ(b.windowed_prefill_attention_pairs, 0);
}

// Every op of a decode step of two sequences (contexts 9 and 19), both sampling, tp = 1,
// bf16 (2 B) weights, activations and KV. Per layer:
//   qkv:   out = (4 + 2*2) * 16 = 128, W = 64*128 = 8192; FLOPs 2*2*8192 = 32768 (0.033 us);
//          bytes 8192*2 + 2*(64+128)*2 = 17152 -> 0.17152 us, + 1 launch = 1.17152 us
//   o:     W = 64*64 = 4096; bytes 8192 + 2*(64+64)*2 = 8704 -> 0.08704 + 1 = 1.08704 us
//   norms: 2 fused add+RMSNorms 2*64*8 = 1024 elements, RoPE 2*2*(4+2)*16 = 384; 1408 * 2 B
//          = 2816 B -> 0.02816 us + 3 launches = 3.02816 us
//   mlp:   gate/up bytes 2*64*128*2 + 2*(64+256)*2 = 34048 -> 0.34048 us (FLOPs 0.066 us);
//          SiLU*mul 3*2*128*2 = 1536 -> 0.01536 us; down 16384 + 2*(128+64)*2 = 17152 ->
//          0.17152 us; + 3 launches = 3.52736 us
//   attention decode: KV per token 2*2*16*2 = 128 B; (10 + 20 read + 2 written) * 128 +
//          2 * (2*4*16) * 2 = 4608 B -> 0.04608 us (FLOPs 4*16*4*30 = 7680: 0.008 us),
//          + 2 launches = 2.04608 us
// Once: embedding 2*2*64*2 = 512 B -> 1.00512 us; final norm 3*2*64*2 = 768 B -> 1.00768 us;
//   LM head 256*64 = 16384 weights, bytes 32768 + 2*(64+256)*2 = 34048 -> 1.34048 us;
//   sampler 2*256*42 = 21504 B -> 0.21504 + 6 launches = 6.21504 us; overhead 10 us.
TEST(RooflineCostModelTest, DecodeStepMatchesHandComputation) {
  const RooflineCostModel cm(tiny_model(), round_gpu(), ParallelConfig{}, EngineConfig{},
                             hand_options());
  BatchShape b;
  b.add_sequence(1, 9, false, true);
  b.add_sequence(1, 19, false, true);
  const StepTime t = cm.predict(b);
  const double us = 1e-6;
  EXPECT_NEAR(op(t, Op::kQkv), 2 * 1.17152 * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kOProj), 2 * 1.08704 * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kNormRopeEmbed), (2 * 3.02816 + 1.00512) * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kMlp), 2 * 3.52736 * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kAttentionDecode), 2 * 2.04608 * us, 1e-15);
  EXPECT_EQ(op(t, Op::kAttentionPrefill), 0);
  EXPECT_NEAR(op(t, Op::kLmHead), (1.00768 + 1.34048) * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kSampling), 6.21504 * us, 1e-15);
  EXPECT_EQ(op(t, Op::kComm), 0);
  EXPECT_NEAR(op(t, Op::kOverhead), 10 * us, 1e-15);
  EXPECT_NEAR(t.total_s, 41.28864 * us, 1e-14);
}

// One prompt of 8 tokens from an empty cache, sampling its first token. Per layer:
//   qkv:   bytes 16384 + 8*192*2 = 19456 -> 0.19456 us (FLOPs 0.131 us) + 1 = 1.19456 us
//   o:     bytes 8192 + 8*128*2 = 10240 -> 0.1024 us (FLOPs 0.0655 us) + 1 = 1.1024 us
//   norms: (8*64*8 + 2*8*96) * 2 = 11264 B -> 0.11264 + 3 = 3.11264 us
//   mlp:   gate/up 32768 + 8*320*2 = 37888 B -> 0.37888 us (FLOPs 0.262 us); act 6144 B ->
//          0.06144 us; down 16384 + 8*192*2 = 19456 B -> 0.19456 us; + 3 = 3.63488 us
//   attention prefill: causal pairs 8 * (0 + 9/2) = 36; KV (8 read + 8 written) * 128 +
//          8*128*2 = 4096 B -> 0.04096 us (FLOPs 4*16*4*36 = 9216: 0.009 us) + 2 = 2.04096 us
// Once: embedding 2048 B -> 1.02048 us; final norm 3072 B -> 1.03072 us; LM head one row
//   32768 + 320*2 = 33408 B -> 1.33408 us; sampler 256*42 B -> 6.10752 us; overhead 10 us.
TEST(RooflineCostModelTest, PrefillStepMatchesHandComputation) {
  const RooflineCostModel cm(tiny_model(), round_gpu(), ParallelConfig{}, EngineConfig{},
                             hand_options());
  BatchShape b;
  b.add_sequence(8, 0, true, true);
  const StepTime t = cm.predict(b);
  const double us = 1e-6;
  EXPECT_NEAR(op(t, Op::kQkv), 2 * 1.19456 * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kOProj), 2 * 1.1024 * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kNormRopeEmbed), (2 * 3.11264 + 1.02048) * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kMlp), 2 * 3.63488 * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kAttentionPrefill), 2 * 2.04096 * us, 1e-15);
  EXPECT_EQ(op(t, Op::kAttentionDecode), 0);
  EXPECT_NEAR(op(t, Op::kLmHead), (1.03072 + 1.33408) * us, 1e-15);
  EXPECT_NEAR(op(t, Op::kSampling), 6.10752 * us, 1e-15);
  EXPECT_NEAR(t.total_s, 41.66368 * us, 1e-14);
}

TEST(RooflineCostModelTest, TotalIsTheSumOfOps) {
  const RooflineCostModel cm(tiny_model(), round_gpu(), ParallelConfig{}, EngineConfig{});
  BatchShape b;
  b.add_sequence(100, 50, true, false);
  b.add_sequence(1, 300, false, true);
  const StepTime t = cm.predict(b);
  double sum = 0;
  for (double s : t.op_s) sum += s;
  EXPECT_DOUBLE_EQ(t.total_s, sum);
  EXPECT_GT(op(t, Op::kAttentionPrefill), 0);
  EXPECT_GT(op(t, Op::kAttentionDecode), 0);
}

TEST(RooflineCostModelTest, EmptyBatchCostsNothing) {
  const RooflineCostModel cm(tiny_model(), round_gpu(), ParallelConfig{}, EngineConfig{});
  EXPECT_EQ(cm.predict(BatchShape{}).total_s, 0);
}

// Seconds the host's launches add to a step under `engine`'s graphs: the step priced with
// graphs minus the same step priced with none (hand_options: 1 us per launch).
double graph_saving_s(const EngineConfig& engine, const BatchShape& b) {
  RooflineOptions graphs = hand_options();
  graphs.cuda_graphs = true;
  const RooflineCostModel with(tiny_model(), round_gpu(), ParallelConfig{}, engine, graphs);
  const RooflineCostModel without(tiny_model(), round_gpu(), ParallelConfig{}, engine,
                                  hand_options());
  return without.predict(b).total_s - with.predict(b).total_s;
}

EngineConfig engine_with(std::optional<CudaGraphMode> mode, int max_num_seqs = 64) {
  EngineConfig e;
  e.cudagraph_mode = mode;
  e.max_num_seqs = max_num_seqs;
  e.max_num_batched_tokens = 2048;
  return e;
}

BatchShape two_decodes() {
  BatchShape b;
  b.add_sequence(1, 9, false, true);
  b.add_sequence(1, 19, false, true);
  return b;
}

BatchShape small_prefill() {
  BatchShape b;
  b.add_sequence(8, 0, true, true);
  return b;
}

// Kernels per step of tiny_model: 2 layers * (qkv 1 + o 1 + norms 3 + mlp 3 + attention 2) +
// embedding 1 + final norm 1 + LM head 1 + sampler 6 = 29. A piecewise step still launches,
// per layer, one graph and the 2 attention kernels: 6, so it saves 23.
constexpr double kAllLaunchesS = 29e-6;
constexpr double kPiecewiseSavingS = 23e-6;

TEST(RooflineCostModelTest, WholeModelDecodeGraphsDropEveryLaunchOfADecodeStep) {
  // vLLM 0.11+'s default, FULL_AND_PIECEWISE.
  EXPECT_NEAR(graph_saving_s(engine_with(std::nullopt), two_decodes()), kAllLaunchesS, 1e-15);
  EXPECT_NEAR(graph_saving_s(engine_with(CudaGraphMode::kFullDecodeOnly), two_decodes()),
              kAllLaunchesS, 1e-15);
}

TEST(RooflineCostModelTest, PiecewiseGraphsStillLaunchAttentionAndOneGraphPerLayer) {
  EXPECT_NEAR(graph_saving_s(engine_with(CudaGraphMode::kPiecewise), two_decodes()),
              kPiecewiseSavingS, 1e-15);
  // vLLM 0.10's default is PIECEWISE.
  EngineConfig v010 = engine_with(std::nullopt);
  v010.vllm_version = VllmVersion{0, 10};
  EXPECT_NEAR(graph_saving_s(v010, two_decodes()), kPiecewiseSavingS, 1e-15);
}

TEST(RooflineCostModelTest, ACapturedMixedStepReplaysWhatItsModeCapturesForMixedBatches) {
  EXPECT_NEAR(graph_saving_s(engine_with(std::nullopt), small_prefill()), kPiecewiseSavingS, 1e-15);
  EXPECT_NEAR(graph_saving_s(engine_with(CudaGraphMode::kFull), small_prefill()), kAllLaunchesS,
              1e-15);
  // FULL_DECODE_ONLY has no graph for a batch with a prompt.
  EXPECT_NEAR(graph_saving_s(engine_with(CudaGraphMode::kFullDecodeOnly), small_prefill()), 0,
              1e-15);
}

TEST(RooflineCostModelTest, StepsAboveTheLargestCapturedSizeRunWithoutGraphs) {
  // max_num_seqs 2: vLLM 0.11+ captures up to 2 x 2 = 4 tokens.
  BatchShape six;
  for (int i = 0; i < 6; ++i) six.add_sequence(1, 9, false, true);
  EXPECT_GT(graph_saving_s(engine_with(std::nullopt, 8), six), 0);
  EXPECT_NEAR(graph_saving_s(engine_with(std::nullopt, 2), six), 0, 1e-15);
  EXPECT_NEAR(graph_saving_s(engine_with(std::nullopt, 2), small_prefill()), 0, 1e-15);
}

TEST(RooflineCostModelTest, EnforceEagerLaunchesEveryKernel) {
  EngineConfig eager = engine_with(std::nullopt);
  eager.enforce_eager = true;
  EXPECT_NEAR(graph_saving_s(eager, two_decodes()), 0, 1e-15);
  EXPECT_NEAR(graph_saving_s(engine_with(CudaGraphMode::kNone), two_decodes()), 0, 1e-15);
  // The same step costs more eager than graphed: the launches are what the graphs save.
  RooflineOptions graphs = hand_options();
  graphs.cuda_graphs = true;
  const RooflineCostModel graphed(tiny_model(), round_gpu(), ParallelConfig{},
                                  engine_with(std::nullopt), graphs);
  const RooflineCostModel eager_model(tiny_model(), round_gpu(), ParallelConfig{}, eager, graphs);
  EXPECT_NEAR(eager_model.predict(two_decodes()).total_s - graphed.predict(two_decodes()).total_s,
              kAllLaunchesS, 1e-15);
}

ModelSpec llama2_7b_shapes(int layers) {
  ModelSpec m;
  m.name = "Llama-2-7B";
  m.hidden_size = 4096;
  m.num_layers = layers;
  m.num_heads = 32;
  m.num_kv_heads = 32;
  m.head_dim = 128;
  m.intermediate_size = 11008;
  m.vocab_size = 32000;
  m.max_position_embeddings = 4096;
  return m;
}

HardwareSpec catalog_gpu(const std::string& name) {
  return Catalog(SERVESIM_SOURCE_DIR "/configs").resolve_gpu(name);
}

TEST(RooflineCostModelTest, TensorParallelHalvesGemmTimeAndAddsTwoRingAllReducesPerLayer) {
  const ModelSpec m = llama2_7b_shapes(32);
  const HardwareSpec gpu = catalog_gpu("H100-SXM");
  ParallelConfig tp2;
  tp2.tp = 2;
  const RooflineCostModel one(m, gpu, ParallelConfig{}, EngineConfig{});
  const RooflineCostModel two(m, gpu, tp2, EngineConfig{});
  BatchShape b;
  b.add_sequence(4096, 0, true, true);  // compute-bound GEMMs
  const StepTime t1 = one.predict(b);
  const StepTime t2 = two.predict(b);
  // Launch overhead (32 us per op) does not halve; the rest does, up to activation bytes.
  const double launch = 32 * gpu.kernel_launch_s;
  EXPECT_NEAR((t2[Op::kQkv] - launch) / (t1[Op::kQkv] - launch), 0.5, 0.01);
  EXPECT_NEAR((t2[Op::kOProj] - launch) / (t1[Op::kOProj] - launch), 0.5, 0.01);
  EXPECT_NEAR((t2[Op::kMlp] - 3 * launch) / (t1[Op::kMlp] - 3 * launch), 0.5, 0.01);
  EXPECT_EQ(t1[Op::kComm], 0);
  const CommModel comm = CommModel::for_hardware(gpu);
  const double all_reduce = comm.all_reduce_s(int64_t{4096} * 4096 * 2, 2);
  const double logits_gather = comm.all_gather_s(int64_t{32000} * 2, 2);
  EXPECT_NEAR(t2[Op::kComm], 2 * 32 * all_reduce + logits_gather, 1e-12);
  // Ring: 2 (n-1)/n * B / (link * efficiency) + latency, link = 900 GB/s / 2.
  EXPECT_NEAR(all_reduce,
              kAllReduceLatencyS + 4096.0 * 4096 * 2 / (450e9 * kAllReduceBandwidthEfficiency),
              1e-12);
}

TEST(RooflineCostModelTest, Fp8KvCacheHalvesDecodeAttentionBytes) {
  const ModelSpec m = llama2_7b_shapes(1);
  const HardwareSpec gpu = catalog_gpu("H100-SXM");
  EngineConfig fp8;
  fp8.kv_cache_dtype = DType::kFp8;
  RooflineOptions o;
  o.attention_memory_efficiency = 1;
  const RooflineCostModel bf16_kv(m, gpu, ParallelConfig{}, EngineConfig{}, o);
  const RooflineCostModel fp8_model(m, gpu, ParallelConfig{}, fp8, o);
  BatchShape b;
  b.add_sequence(1, 3999, false, true);  // 4000 tokens of context, graphed: no launches
  // KV bytes: bf16 4001 * 2*32*128*2 = 65552384 B; the query/output rows add 2*4096*2 = 16384 B.
  const double bf16_bytes = 4001.0 * 16384 + 16384;
  const double fp8_bytes = 4001.0 * 8192 + 16384;
  EXPECT_NEAR(bf16_kv.predict(b)[Op::kAttentionDecode], bf16_bytes / gpu.memory_bandwidth_Bps,
              1e-12);
  EXPECT_NEAR(fp8_model.predict(b)[Op::kAttentionDecode], fp8_bytes / gpu.memory_bandwidth_Bps,
              1e-12);
  EXPECT_NEAR(fp8_model.predict(b)[Op::kAttentionDecode] / bf16_kv.predict(b)[Op::kAttentionDecode],
              0.5, 0.001);
}

ModelSpec tiny_moe() {
  ModelSpec m = tiny_model();
  m.intermediate_size = 0;
  m.moe = MoeSpec{8, 2, 128, 0, 0, false};
  return m;
}

// Decode (graphed, no launches) on a GPU with so much compute that every kernel is memory
// bound: MLP time is the bytes of the distinct experts read plus activations, per layer:
//   router 64*8*2 + n*(64+8)*2; gate/up D*64*256*2 + n*k*(64+256)*2; SiLU*mul 3*n*k*128*2;
//   down D*128*64*2 + n*k*(128+64)*2, with D = 8 * (1 - (1 - 2/8)^n).
TEST(RooflineCostModelTest, MoeReadsTheExpectedDistinctExperts) {
  HardwareSpec gpu = round_gpu();
  gpu.peak_bf16_flops = 1e18;
  const RooflineCostModel cm(tiny_moe(), gpu, ParallelConfig{}, EngineConfig{});
  auto mlp_bytes = [](double n, double distinct) {
    return 64 * 8 * 2 + n * 72 * 2 + distinct * 32768 + n * 2 * 640 + 3 * n * 2 * 256 +
           distinct * 16384 + n * 2 * 384;
  };
  BatchShape one;
  one.add_sequence(1, 10, false, true);
  // One token uses exactly its top-2 experts.
  EXPECT_NEAR(cm.predict(one)[Op::kMlp], 2 * mlp_bytes(1, 2) / 1e11, 1e-15);
  BatchShape three;
  for (int i = 0; i < 3; ++i) three.add_sequence(1, 10, false, true);
  // 8 * (1 - 0.75^3) = 4.625 experts expected.
  EXPECT_NEAR(cm.predict(three)[Op::kMlp], 2 * mlp_bytes(3, 4.625) / 1e11, 1e-15);
  BatchShape many;
  for (int i = 0; i < 200; ++i) many.add_sequence(1, 10, false, true);
  // 200 tokens touch every expert (to 1e-20): weights of all 8 are read once.
  EXPECT_NEAR(cm.predict(many)[Op::kMlp], 2 * mlp_bytes(200, 8) / 1e11, 1e-15);
}

// The expert GEMMs have their own efficiencies (vLLM's fused-MoE kernels reach far less of the
// peak than its dense GEMMs): a prefill's compute-bound MLP time scales as 1 / the compute one,
// a decode's memory-bound one as 1 / the memory one, and nothing else moves.
TEST(RooflineCostModelTest, ExpertEfficienciesPriceOnlyTheExpertGemms) {
  BatchShape prefill;
  prefill.add_sequence(4096, 0, true, true);
  BatchShape decode;
  decode.add_sequence(1, 10, false, true);
  // Guaranteed copy elision: the model is built in place.
  const auto on_round_gpu = [](const ModelSpec& m, RooflineOptions o) {
    return RooflineCostModel(m, round_gpu(), ParallelConfig{}, EngineConfig{}, o);
  };
  RooflineOptions slow_compute;
  slow_compute.expert_compute_efficiency = 0.25;
  RooflineOptions slow_memory;
  slow_memory.expert_memory_efficiency = 0.5;
  const RooflineCostModel base = on_round_gpu(tiny_moe(), {});
  const RooflineCostModel compute = on_round_gpu(tiny_moe(), slow_compute);
  const RooflineCostModel memory = on_round_gpu(tiny_moe(), slow_memory);
  EXPECT_GT(compute.predict(prefill)[Op::kMlp], 2 * base.predict(prefill)[Op::kMlp]);
  EXPECT_EQ(compute.predict(prefill)[Op::kQkv], base.predict(prefill)[Op::kQkv]);
  EXPECT_EQ(compute.predict(decode)[Op::kMlp], base.predict(decode)[Op::kMlp]);
  EXPECT_GT(memory.predict(decode)[Op::kMlp], 1.5 * base.predict(decode)[Op::kMlp]);
  EXPECT_EQ(memory.predict(decode)[Op::kOProj], base.predict(decode)[Op::kOProj]);
  // A dense model has no experts: the options change nothing.
  EXPECT_EQ(on_round_gpu(tiny_model(), slow_compute).predict(prefill).total_s,
            on_round_gpu(tiny_model(), {}).predict(prefill).total_s);
}

TEST(RooflineCostModelTest, SlidingWindowCapsAttentionContext) {
  ModelSpec sliding = tiny_model();
  sliding.sliding_window = 16;
  sliding.sliding_pattern = SlidingPattern::kAll;
  const RooflineCostModel windowed(sliding, round_gpu(), ParallelConfig{}, EngineConfig{});
  const RooflineCostModel full(tiny_model(), round_gpu(), ParallelConfig{}, EngineConfig{});
  // Context 1000 under a 16-token window reads what context 15 reads without one.
  BatchShape long_ctx;
  long_ctx.sliding_window = 16;
  long_ctx.add_sequence(1, 1000, false, true);
  BatchShape short_ctx;
  short_ctx.add_sequence(1, 15, false, true);
  EXPECT_DOUBLE_EQ(windowed.predict(long_ctx)[Op::kAttentionDecode],
                   full.predict(short_ctx)[Op::kAttentionDecode]);
  EXPECT_GT(full.predict(long_ctx)[Op::kAttentionDecode],
            10 * full.predict(short_ctx)[Op::kAttentionDecode]);
  // Without per-sequence sums the model caps the totals: exact for one sequence, an upper
  // bound for a mix of short and long contexts.
  BatchShape no_window_sums;
  no_window_sums.add_sequence(1, 1000, false, true);
  EXPECT_DOUBLE_EQ(windowed.predict(no_window_sums)[Op::kAttentionDecode],
                   windowed.predict(long_ctx)[Op::kAttentionDecode]);
  BatchShape mixed_exact;
  mixed_exact.sliding_window = 16;
  BatchShape mixed_bound;
  for (int ctx : {2, 3, 5000}) {
    mixed_exact.add_sequence(1, ctx, false, true);
    mixed_bound.add_sequence(1, ctx, false, true);
  }
  EXPECT_GT(windowed.predict(mixed_bound)[Op::kAttentionDecode],
            windowed.predict(mixed_exact)[Op::kAttentionDecode]);
}

TEST(RooflineCostModelTest, PipelineStagePredictsItsShareOfLayers) {
  ModelSpec m = tiny_model();
  m.num_layers = 4;
  ParallelConfig pp2;
  pp2.pp = 2;
  const RooflineCostModel one(m, round_gpu(), ParallelConfig{}, EngineConfig{});
  const RooflineCostModel two(m, round_gpu(), pp2, EngineConfig{});
  EXPECT_EQ(one.num_stages(), 1);
  EXPECT_EQ(two.num_stages(), 2);
  BatchShape b;
  b.add_sequence(64, 0, true, true);
  EXPECT_NEAR(two.predict(b)[Op::kMlp], one.predict(b)[Op::kMlp] / 2, 1e-15);
  EXPECT_DOUBLE_EQ(two.predict(b)[Op::kLmHead], one.predict(b)[Op::kLmHead]);
  EXPECT_EQ(one.stage_transfer_s(64), 0);
  // 64 tokens * 64 hidden * 2 B over PCIe (10 GB/s).
  EXPECT_NEAR(two.stage_transfer_s(64),
              kSendRecvLatencyS + 64.0 * 64 * 2 / (1e10 * kSendRecvBandwidthEfficiency), 1e-15);
}

TEST(RooflineCostModelTest, Fp8WeightsWithoutFp8TensorCoresComputeAtBf16Peak) {
  const ModelSpec m = llama2_7b_shapes(1);
  EngineConfig fp8;
  fp8.dtype = DType::kFp8;
  BatchShape b;
  b.add_sequence(4096, 0, true, false);
  const HardwareSpec a100 = catalog_gpu("A100-80GB-SXM");
  const HardwareSpec h100 = catalog_gpu("H100-SXM");
  ASSERT_EQ(a100.peak_fp8_flops, 0);
  const double a100_bf16 = RooflineCostModel(m, a100, {}, {}).predict(b)[Op::kMlp];
  const double a100_fp8 = RooflineCostModel(m, a100, {}, fp8).predict(b)[Op::kMlp];
  EXPECT_NEAR(a100_fp8 / a100_bf16, 1, 0.01);  // compute bound at 4096 tokens either way
  const double h100_bf16 = RooflineCostModel(m, h100, {}, {}).predict(b)[Op::kMlp];
  const double h100_fp8 = RooflineCostModel(m, h100, {}, fp8).predict(b)[Op::kMlp];
  EXPECT_LT(h100_fp8 / h100_bf16, 0.6);
}

TEST(RooflineCostModelTest, OptionsOverrideTheCatalog) {
  const HardwareSpec gpu = catalog_gpu("H100-SXM");
  RooflineOptions o;
  o.compute_efficiency = 0.5;
  o.kernel_launch_s = 2e-6;
  const RooflineCostModel cm(llama2_7b_shapes(1), gpu, {}, {}, o);
  EXPECT_EQ(cm.compute_efficiency(), 0.5);
  EXPECT_EQ(cm.memory_efficiency(), gpu.memory_efficiency);
  EXPECT_EQ(cm.kernel_launch_s(), 2e-6);
  EXPECT_EQ(cm.step_overhead_s(), kStepOverheadS);
}

TEST(RooflineCostModelTest, HostOverheadGrowsWithTheScheduledSequences) {
  RooflineOptions o = hand_options();
  o.seq_overhead_s = 40e-6;
  const RooflineCostModel cm(tiny_model(), round_gpu(), ParallelConfig{}, EngineConfig{}, o);
  EXPECT_EQ(cm.seq_overhead_s(), 40e-6);
  BatchShape one;
  one.add_sequence(1, 10, false, true);
  BatchShape five = one;
  for (int i = 0; i < 4; ++i) five.add_sequence(1, 10, false, true);
  EXPECT_DOUBLE_EQ(op(cm.predict(one), Op::kOverhead), 10e-6 + 40e-6);
  EXPECT_DOUBLE_EQ(op(cm.predict(five), Op::kOverhead), 10e-6 + 5 * 40e-6);
}

void expect_config_error(RooflineOptions o, const std::string& field) {
  try {
    RooflineCostModel(tiny_model(), round_gpu(), ParallelConfig{}, EngineConfig{}, o);
    ADD_FAILURE() << "no ConfigError for " << field;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(field), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(RooflineCostModelTest, BadOptionsThrowConfigErrorNamingTheOption) {
  // Each option set alone to a value outside its range, and the name the error must carry.
  const std::vector<std::pair<const char*, std::function<void(RooflineOptions&)>>> bad_options = {
      {"compute_efficiency", [](RooflineOptions& o) { o.compute_efficiency = 1.5; }},
      {"memory_efficiency", [](RooflineOptions& o) { o.memory_efficiency = 0; }},
      {"attention_compute_efficiency",
       [](RooflineOptions& o) { o.attention_compute_efficiency = -0.1; }},
      {"expert_compute_efficiency", [](RooflineOptions& o) { o.expert_compute_efficiency = 0; }},
      {"expert_memory_efficiency", [](RooflineOptions& o) { o.expert_memory_efficiency = 1.01; }},
      {"kernel_launch_s", [](RooflineOptions& o) { o.kernel_launch_s = -1e-6; }},
      {"step_overhead_s", [](RooflineOptions& o) { o.step_overhead_s = std::nan(""); }},
      {"seq_overhead_s", [](RooflineOptions& o) { o.seq_overhead_s = -1e-6; }},
      {"all_reduce_efficiency", [](RooflineOptions& o) { o.comm.all_reduce_efficiency = 2; }},
  };
  for (const auto& [name, set] : bad_options) {
    RooflineOptions o;
    set(o);
    expect_config_error(o, name);
  }
  ParallelConfig bad;
  bad.tp = 3;
  EXPECT_THROW(RooflineCostModel(tiny_model(), round_gpu(), bad, EngineConfig{}), ConfigError);
}

// --- against measured operator times (reference/measured/vidur-profiling) ---

using CsvRow = std::map<std::string, std::string>;

std::vector<CsvRow> read_csv(const std::string& path) {
  std::vector<CsvRow> rows;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return rows;
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string cell; std::getline(hs, cell, ',');) header.push_back(cell);
  while (std::getline(in, line)) {
    CsvRow row;
    std::stringstream ls(line);
    std::string cell;
    for (size_t i = 0; i < header.size() && std::getline(ls, cell, ','); ++i) row[header[i]] = cell;
    rows.push_back(std::move(row));
  }
  return rows;
}

struct OpError {
  double max_abs = 0;
  double sum_abs = 0;
  int n = 0;
};

// Per-layer GEMM times of Llama-2-7B at TP 1 against vidur's PyTorch profile. The model's
// QKV, output projection and MLP (gate/up + SiLU*mul + down) of one layer, decode-shaped,
// without launch cost: the profile times kernels on the GPU, and a batch above vLLM's largest
// graph would otherwise be priced with its launches.
void compare_with_vidur(const std::string& gpu_dir, const std::string& gpu_name, double tolerance) {
  const std::string path = std::string(SERVESIM_REFERENCE_DIR) +
                           "/measured/vidur-profiling/compute/" + gpu_dir +
                           "/meta-llama/Llama-2-7b-hf/mlp.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "measured data not found: " << path;
  RooflineOptions kernels_only;
  kernels_only.kernel_launch_s = 0;
  const RooflineCostModel cm(llama2_7b_shapes(1), catalog_gpu(gpu_name), {}, {}, kernels_only);
  std::map<std::string, OpError> errors;
  for (const CsvRow& row : read_csv(path)) {
    if (row.at("num_tensor_parallel_workers") != "1") continue;
    const int n = std::stoi(row.at("num_tokens"));
    BatchShape b;
    for (int i = 0; i < n; ++i) b.add_sequence(1, 0, false, false);
    const StepTime t = cm.predict(b);
    auto ms = [&](const char* name) {
      return std::stod(row.at(std::string("time_stats.") + name + ".median")) * 1e-3;
    };
    const std::pair<const char*, double> pairs[] = {
        {"qkv", t[Op::kQkv] / ms("attn_pre_proj") - 1},
        {"o_proj", t[Op::kOProj] / ms("attn_post_proj") - 1},
        {"mlp", t[Op::kMlp] / (ms("mlp_up_proj") + ms("mlp_act") + ms("mlp_down_proj")) - 1}};
    for (const auto& [name, err] : pairs) {
      OpError& e = errors[name];
      e.max_abs = std::max(e.max_abs, std::abs(err));
      e.sum_abs += std::abs(err);
      ++e.n;
    }
  }
  ASSERT_FALSE(errors.empty());
  for (const auto& [name, e] : errors) {
    const double mean = e.sum_abs / e.n;
    ::testing::Test::RecordProperty(gpu_dir + "_" + name + "_mean_abs_error", std::to_string(mean));
    EXPECT_LT(mean, tolerance) << gpu_dir << " " << name << " mean |error| over " << e.n
                               << " sizes";
  }
}

TEST(RooflineVsMeasuredTest, Llama2_7bGemmsOnA100) {
  compare_with_vidur("a100", "A100-80GB-SXM", 0.20);
}
TEST(RooflineVsMeasuredTest, Llama2_7bGemmsOnH100) {
  compare_with_vidur("h100", "H100-SXM", 0.25);
}

}  // namespace
}  // namespace servesim
