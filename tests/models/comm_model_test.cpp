#include "models/comm_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "models/hardware_spec.h"

namespace servesim {
namespace {

TEST(CommModelTest, RingAllReduceFollowsTheFormula) {
  CommOptions o;
  o.all_reduce_latency_s = 20e-6;
  o.all_reduce_efficiency = 0.5;
  const CommModel comm(100e9, o);
  // 8 GPUs, 16 MB: 2 * 7/8 * 16e6 B / (100 GB/s * 0.5) = 560 us, + 20 us.
  EXPECT_NEAR(comm.all_reduce_s(16'000'000, 8), 580e-6, 1e-12);
  // 2 GPUs move half as much per byte: 2 * 1/2 * 16e6 / 50e9 = 320 us, + 20 us.
  EXPECT_NEAR(comm.all_reduce_s(16'000'000, 2), 340e-6, 1e-12);
  // All-gather: (n - 1)/n of the buffer: 7/8 * 16e6 / 50e9 = 280 us, + 20 us.
  EXPECT_NEAR(comm.all_gather_s(16'000'000, 8), 300e-6, 1e-12);
  EXPECT_EQ(comm.all_reduce_s(16'000'000, 1), 0);
  EXPECT_EQ(comm.all_reduce_s(0, 8), 0);
  EXPECT_EQ(comm.all_gather_s(1000, 1), 0);
}

TEST(CommModelTest, SendRecvIsLatencyPlusBytesOverLink) {
  CommOptions o;
  o.send_recv_latency_s = 5e-6;
  o.send_recv_efficiency = 0.8;
  const CommModel comm(100e9, o);
  // 8 MB / (100 GB/s * 0.8) = 100 us, + 5 us.
  EXPECT_NEAR(comm.send_recv_s(8'000'000), 105e-6, 1e-12);
  EXPECT_EQ(comm.send_recv_s(0), 0);
}

TEST(CommModelTest, UsesOneDirectionOfNvlinkElsePcie) {
  HardwareSpec nvlink;
  nvlink.nvlink_Bps = 900e9;
  nvlink.pcie_Bps = 64e9;
  EXPECT_EQ(CommModel::for_hardware(nvlink).link_Bps(), 450e9);
  HardwareSpec pcie;
  pcie.pcie_Bps = 32e9;
  EXPECT_EQ(CommModel::for_hardware(pcie).link_Bps(), 32e9);
}

TEST(CommModelTest, VllmCustomAllReduceServesSmallBuffersOnNvlinkUpToEightGpus) {
  HardwareSpec nvlink;
  nvlink.nvlink_Bps = 900e9;
  const CommModel comm = CommModel::for_hardware(nvlink);
  // 64 KiB over 8 GPUs: 5 us + 2 * 7/8 * 65536 B / (450 GB/s * 0.23).
  EXPECT_NEAR(comm.all_reduce_s(65536, 8), 5e-6 + 1.75 * 65536 / (450e9 * 0.23), 1e-15);
  // The largest buffer vLLM's custom all-reduce takes (8 MiB), and one byte more on NCCL.
  const int64_t max = int64_t{8} << 20;
  EXPECT_NEAR(comm.all_reduce_s(max, 2), 5e-6 + max / (450e9 * 0.23), 1e-15);
  EXPECT_NEAR(comm.all_reduce_s(max + 1, 2), 32e-6 + (max + 1) / (450e9 * 0.68), 1e-15);
  // More than 8 GPUs, no NVLink, or the custom all-reduce disabled: NCCL.
  EXPECT_NEAR(comm.all_reduce_s(65536, 16), 32e-6 + 1.875 * 65536 / (450e9 * 0.68), 1e-15);
  HardwareSpec pcie;
  pcie.pcie_Bps = 32e9;
  EXPECT_NEAR(CommModel::for_hardware(pcie).all_reduce_s(65536, 2), 32e-6 + 65536 / (32e9 * 0.68),
              1e-15);
  CommOptions nccl_only;
  nccl_only.custom_all_reduce = false;
  EXPECT_NEAR(CommModel::for_hardware(nvlink, nccl_only).all_reduce_s(65536, 8),
              32e-6 + 1.75 * 65536 / (450e9 * 0.68), 1e-15);
}

TEST(CommModelTest, BadOptionsThrowConfigErrorNamingTheOption) {
  auto expect_error = [](CommOptions o, const std::string& field) {
    try {
      CommModel comm(100e9, o);
      ADD_FAILURE() << "no ConfigError for " << field;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  CommOptions o;
  o.all_reduce_efficiency = 0;
  expect_error(o, "all_reduce_efficiency");
  o = {};
  o.send_recv_efficiency = 1.1;
  expect_error(o, "send_recv_efficiency");
  o = {};
  o.all_reduce_latency_s = -1;
  expect_error(o, "all_reduce_latency_s");
  o = {};
  o.send_recv_latency_s = std::nan("");
  expect_error(o, "send_recv_latency_s");
  o = {};
  o.custom_all_reduce_efficiency = 0;
  expect_error(o, "custom_all_reduce_efficiency");
  o = {};
  o.custom_all_reduce_latency_s = -1e-6;
  expect_error(o, "custom_all_reduce_latency_s");
  EXPECT_THROW(CommModel(0, CommOptions{}), ConfigError);
}

// The default latency and efficiency against NCCL all-reduce timings on 8-GPU DGX nodes
// (reference/measured/vidur-profiling/network/<node>/all_reduce.csv, `size` in bytes, median
// ms), for messages from 1 MB up: the sizes decode and prefill all-reduces have
// (tokens * hidden * 2 B). Mean relative error per node and GPU count, as in docs/cost-model.md.
void compare_with_nccl(const std::string& node, double link_Bps, double tolerance) {
  const std::string path = std::string(SERVESIM_REFERENCE_DIR) +
                           "/measured/vidur-profiling/network/" + node + "/all_reduce.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "measured data not found: " << path;
  const CommModel comm(link_Bps);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string cell; std::getline(hs, cell, ',');) header.push_back(cell);
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return i;
    }
    ADD_FAILURE() << "no column " << name << " in " << path;
    return size_t{0};
  };
  const size_t c_time = column("time_stats.all_reduce.median");
  const size_t c_workers = column("num_workers");
  const size_t c_per_node = column("devices_per_node");
  const size_t c_size = column("size");
  std::map<int, std::pair<double, int>> error_by_gpus;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) cells.push_back(cell);
    const int gpus = std::stoi(cells[c_workers]);
    if (std::stoi(cells[c_per_node]) != gpus) continue;  // across nodes: not NVLink
    const int64_t bytes = std::stoll(cells[c_size]);
    if (bytes < 1'000'000) continue;
    const double measured = std::stod(cells[c_time]) * 1e-3;
    auto& [sum, n] = error_by_gpus[gpus];
    sum += std::abs(comm.all_reduce_s(bytes, gpus) / measured - 1);
    ++n;
  }
  ASSERT_FALSE(error_by_gpus.empty());
  for (const auto& [gpus, e] : error_by_gpus) {
    EXPECT_LT(e.first / e.second, tolerance)
        << node << " " << gpus << " GPUs over " << e.second << " sizes";
  }
}

// vLLM's custom all-reduce as vLLM itself timed it under CUDA graphs (aiconfigurator's
// collector, configs/validation/kernels/vllm-custom-allreduce.csv: 2/4/8 GPUs, 128 B - 8 MiB).
// Mean |log(model / measured)| per GPU: 0.13-0.18 on A100/H100/H200, 0.45 on B200, whose
// custom all-reduce is slower than NVLink 5 would suggest; NCCL's constants give 1.0-1.4.
TEST(CommModelVsMeasuredTest, VllmCustomAllReduceOnFourGpus) {
  std::ifstream in(SERVESIM_SOURCE_DIR "/configs/validation/kernels/vllm-custom-allreduce.csv");
  ASSERT_TRUE(in.good());
  const Catalog catalog(SERVESIM_SOURCE_DIR "/configs");
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::pair<double, int>> error_by_gpu;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 7u) << line;
    const CommModel comm = CommModel::for_hardware(catalog.resolve_gpu(cells[0]));
    const double model = comm.all_reduce_s(std::stoll(cells[5]), std::stoi(cells[4]));
    auto& [sum, n] = error_by_gpu[cells[0]];
    sum += std::abs(std::log(model / (std::stod(cells[6]) * 1e-3)));
    ++n;
  }
  ASSERT_EQ(error_by_gpu.size(), 4u);
  for (const auto& [gpu, e] : error_by_gpu) {
    ::testing::Test::RecordProperty(gpu + "_custom_all_reduce_mean_abs_log_error",
                                    std::to_string(e.first / e.second));
    EXPECT_LT(e.first / e.second, gpu == "B200" ? 0.5 : 0.2) << gpu << " over " << e.second;
  }
}

TEST(CommModelVsMeasuredTest, A100DgxAllReduce) {
  compare_with_nccl("a100_dgx", 300e9, 0.35);
}
TEST(CommModelVsMeasuredTest, H100DgxAllReduce) {
  compare_with_nccl("h100_dgx", 450e9, 0.35);
}

}  // namespace
}  // namespace servesim
