#include "models/comm_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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

TEST(CommModelVsMeasuredTest, A100DgxAllReduce) {
  compare_with_nccl("a100_dgx", 300e9, 0.35);
}
TEST(CommModelVsMeasuredTest, H100DgxAllReduce) {
  compare_with_nccl("h100_dgx", 450e9, 0.35);
}

}  // namespace
}  // namespace servesim
