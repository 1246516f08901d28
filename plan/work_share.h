// WorkShare: the processes that run one job together, and how they split its independent
// items. Every process runs the same deterministic code; at each parallel step (share_for)
// a process evaluates only the items it owns — item k belongs to rank k % size, a fixed
// round-robin — and all_gather() then gives every process every item's result, so all
// continue from the same state and rank 0's output equals that of a process alone.
//
// sim/ knows nothing of MPI: the CLI implements WorkShare over MPI_COMM_WORLD
// (cli/process_work_share.h); a process alone uses SoloWorkShare; tests run ranks as threads.
// Thread-safety: all_gather() is collective — every rank calls it, from one thread, the
// same number of times in the same order. share_for's body runs on worker threads.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "plan/byte_stream.h"

namespace servesim {

class WorkShare {
 public:
  virtual ~WorkShare() = default;

  virtual int rank() const = 0;  // 0 <= rank() < size()
  virtual int size() const = 0;  // >= 1

  // Collective: every rank passes its bytes; returns every rank's, indexed by rank.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
};

// A process alone: rank 0 of 1; all_gather returns {mine}.
class SoloWorkShare final : public WorkShare {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> all_gather(const std::string& mine) override { return {mine}; }
};

// Runs body(k) for the items k in [0, count) this rank owns, on up to `threads` threads
// (parallel_for), then exchanges results: pack(k, out) writes what body(k) produced on the
// rank that ran it, and unpack(k, in) reads it on every other rank. On return every rank
// holds every item's result. With one rank this is parallel_for(count, threads, body) and
// nothing is packed. A ConfigError from body(k) is rethrown on every rank — the lowest k's,
// as parallel_for does — so the ranks fail together instead of waiting on each other.
void share_for(WorkShare& share, size_t count, int threads, const std::function<void(size_t)>& body,
               const std::function<void(size_t, ByteWriter&)>& pack,
               const std::function<void(size_t, ByteReader&)>& unpack);

}  // namespace servesim
