// Built when SERVESIM_MPI is on: MPI_COMM_WORLD when started by a launcher, else alone.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "cli/process_work_share.h"
#include "models/config_error.h"

namespace servesim {
namespace {

// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx and PMI launchers (srun, MPICH's
// hydra) set PMIX_RANK or PMI_SIZE.
bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

// MPI calls come from the main thread only; worker threads run simulations (FUNNELED).
class MpiWorkShare final : public WorkShare {
 public:
  MpiWorkShare() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiWorkShare() override { MPI_Finalize(); }
  MpiWorkShare(const MpiWorkShare&) = delete;
  MpiWorkShare& operator=(const MpiWorkShare&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> all_gather(const std::string& mine) override {
    // Sizes first, as 64-bit counts, so every rank sees the same total and an oversized
    // exchange fails on all of them alike.
    const long long my_size = static_cast<long long>(mine.size());
    std::vector<long long> sizes(static_cast<size_t>(size_));
    MPI_Allgather(&my_size, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
    std::vector<int> counts(sizes.size());
    std::vector<int> offsets(sizes.size());
    long long total = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
      offsets[r] = static_cast<int>(std::min<long long>(total, INT_MAX));
      counts[r] = static_cast<int>(std::min<long long>(sizes[r], INT_MAX));
      total += sizes[r];
    }
    if (total > INT_MAX) {
      throw ConfigError("MPI: the ranks' results exceed 2 GiB in one step; plan fewer candidates");
    }
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), counts[static_cast<size_t>(rank_)], MPI_BYTE, all.data(),
                   counts.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD);
    std::vector<std::string> out;
    out.reserve(sizes.size());
    for (size_t r = 0; r < sizes.size(); ++r) out.push_back(all.substr(offsets[r], counts[r]));
    return out;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<WorkShare> join_process_work_share() {
  if (!started_by_mpi_launcher()) return std::make_unique<SoloWorkShare>();
  return std::make_unique<MpiWorkShare>();
}

}  // namespace servesim
