// Property tests: thousands of seeded random workloads (lengths, arrivals, shared prefixes,
// stop tokens, aborts, tight and loose KV budgets, every policy and queue order). At every
// step: blocks are conserved, the token budget and max_num_seqs hold, no sequence passes
// max_model_len, a written KV slot is owned by that sequence alone, and a prefix hit serves
// exactly the tokens the sequence has. At the end: every admitted request finished once with
// exactly its expected output length, nothing leaks, and a seed replays identically. With KV
// offload (40% of the configs that take it) loads and stores complete at random later steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/sched/scheduler.h"
#include "sim/workload/synthetic_prompt.h"

namespace servesim {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr int kNumSeeds = 1500;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kNumSeeds = 1500;
#else
constexpr int kNumSeeds = 5000;
#endif
#else
constexpr int kNumSeeds = 5000;
#endif

constexpr int32_t kVocab = 1000;
constexpr int32_t kStopToken = 1000;  // outside the vocabulary the prompts use

// splitmix64: a portable, seedable generator (std distributions differ across libraries).
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int uniform(int lo, int hi) {  // inclusive
    return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(double p) { return static_cast<double>(next() % 1000000) < p * 1e6; }
};

struct PlannedRequest {
  Request request;
  int arrival_step = 0;
  int abort_step = -1;           // abort when this step is reached (if still live)
  std::vector<int32_t> outputs;  // the token sampled for output i
  int expected_outputs = 0;      // when not aborted
  FinishReason expected_reason = FinishReason::kLength;
};

struct Workload {
  SchedulerConfig config;
  std::vector<PlannedRequest> requests;
};

Workload make_workload(uint64_t seed) {
  Rng rng{seed * 0x2545f4914f6cdd1dULL + 1};
  Workload w;
  SchedulerConfig& c = w.config;
  const int block_sizes[] = {1, 2, 4, 8, 16};
  c.block_size = block_sizes[rng.uniform(0, 4)];
  c.max_num_seqs = rng.uniform(1, 12);
  c.max_model_len = rng.uniform(8, 160);
  c.enable_chunked_prefill = rng.chance(0.75);
  c.enable_prefix_caching = rng.chance(0.8);
  const int min_budget =
      c.enable_chunked_prefill ? c.max_num_seqs : std::max(c.max_num_seqs, c.max_model_len);
  c.max_num_batched_tokens = rng.uniform(min_budget, min_budget + 2 * c.max_model_len);
  if (c.enable_chunked_prefill && rng.chance(0.3)) {
    c.long_prefill_token_threshold = rng.uniform(1, c.max_model_len);
  }
  const int policy = rng.uniform(0, 2);
  c.policy = policy == 0   ? SchedulingPolicy::kContinuous
             : policy == 1 ? SchedulingPolicy::kStatic
                           : SchedulingPolicy::kPrefillFirst;
  c.queue_order = rng.chance(0.3) ? QueueOrder::kPriority : QueueOrder::kFcfs;
  c.static_batch_size = rng.uniform(0, c.max_num_seqs);
  const int blocks_per_max_seq = (c.max_model_len + c.block_size - 1) / c.block_size;
  if (rng.chance(0.5)) {  // tight: about one longest sequence, so preemption and rejection
    c.num_gpu_blocks = 1 + rng.uniform(std::max(1, blocks_per_max_seq / 2), blocks_per_max_seq + 2);
  } else {
    c.num_gpu_blocks = 1 + rng.uniform(blocks_per_max_seq, blocks_per_max_seq * 8);
  }
  c.hash_salt = rng.next() % 3;

  const int n = rng.uniform(1, 80);
  const int horizon = rng.uniform(0, 60);
  const int num_groups = rng.uniform(1, 4);
  for (int i = 0; i < n; ++i) {
    PlannedRequest p;
    Request& r = p.request;
    r.id = 1000 + static_cast<uint64_t>(i) * 7;
    // Mostly prompts that fit; 5% may exceed max_model_len on purpose.
    const int room = rng.chance(0.05) ? 2 * c.max_model_len : c.max_model_len * 2 / 3;
    const int shared = rng.chance(0.6) ? rng.uniform(0, room / 2) : 0;
    const int unique = rng.uniform(0, room / 2);
    r.prompt_token_ids = synthetic_prompt(static_cast<uint64_t>(rng.uniform(0, num_groups - 1)),
                                          shared, static_cast<uint64_t>(i), unique, kVocab);
    if (rng.chance(0.03)) r.prompt_token_ids.clear();  // rejected: empty
    r.max_output_tokens = rng.chance(0.02) ? 0 : rng.uniform(1, 48);
    r.ignore_eos = rng.chance(0.3);
    if (rng.chance(0.7)) r.stop_token_ids = {kStopToken};
    r.priority = rng.uniform(0, 3);
    r.arrival_s = rng.uniform(0, 5);  // ties on purpose
    r.cache_salt = rng.chance(0.1) ? 1 : 0;
    p.arrival_step = rng.uniform(0, horizon);
    if (rng.chance(0.05)) p.abort_step = p.arrival_step + rng.uniform(0, 30);
    // Output i is the stop token with probability 5%.
    const int cap = r.max_output_tokens;
    for (int k = 0; k < std::max(cap, 0); ++k) {
      p.outputs.push_back(rng.chance(0.05) ? kStopToken : rng.uniform(0, kVocab - 1));
    }
    const int prompt = static_cast<int>(r.prompt_token_ids.size());
    const int limit = std::min(cap, c.max_model_len - prompt);
    p.expected_outputs = limit;
    p.expected_reason = FinishReason::kLength;
    const bool stops = !r.ignore_eos && !r.stop_token_ids.empty();
    for (int k = 0; stops && k < limit; ++k) {
      if (p.outputs[k] == kStopToken) {
        // Length is checked first: a stop token that is also the last allowed token is "length".
        p.expected_outputs = k + 1;
        p.expected_reason = k + 1 == limit ? FinishReason::kLength : FinishReason::kStop;
        break;
      }
    }
    w.requests.push_back(std::move(p));
  }
  // KV offload for 40% of the configs that take it, from a stream of its own so the other
  // draws stay what they were; tiers from one block (evicting all the time) to twice the GPU.
  Rng offload{seed ^ 0x6f66666c6f6164ULL};
  if (c.enable_prefix_caching && c.policy != SchedulingPolicy::kStatic && offload.chance(0.4)) {
    c.num_host_kv_blocks = offload.uniform(1, static_cast<int>(c.num_gpu_blocks) * 2);
  }
  std::stable_sort(w.requests.begin(), w.requests.end(),
                   [](const PlannedRequest& a, const PlannedRequest& b) {
                     return a.arrival_step < b.arrival_step;
                   });
  return w;
}

// FNV-1a over the whole trace: what ran, how much, what finished.
struct Fingerprint {
  uint64_t h = 0xcbf29ce484222325ULL;
  void add(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  }
};

std::string describe(uint64_t seed, const SchedulerConfig& c) {
  return "seed " + std::to_string(seed) + " policy " +
         std::string(scheduling_policy_name(c.policy)) + " order " +
         std::string(queue_order_name(c.queue_order)) + " bs " + std::to_string(c.block_size) +
         " seqs " + std::to_string(c.max_num_seqs) + " budget " +
         std::to_string(c.max_num_batched_tokens) + " len " + std::to_string(c.max_model_len) +
         " blocks " + std::to_string(c.num_gpu_blocks) + " chunked " +
         std::to_string(c.enable_chunked_prefill) + " caching " +
         std::to_string(c.enable_prefix_caching) + " thr " +
         std::to_string(c.long_prefill_token_threshold);
}

// What the workloads exercised, so the property test can show it is not vacuous.
struct Coverage {
  int64_t workloads = 0, steps = 0, preemptions = 0, hit_tokens = 0, rejected = 0, aborted = 0,
          finished = 0, stopped = 0, chunked_steps = 0, evictions = 0, host_hit_tokens = 0;
};

// Runs one workload, checking every invariant; returns the trace fingerprint.
uint64_t run_workload(uint64_t seed, Coverage* coverage = nullptr) {
  const Workload w = make_workload(seed);
  const SchedulerConfig& c = w.config;
  SCOPED_TRACE(describe(seed, c));
  Scheduler s(c);
  const BlockPool& pool = s.kv_cache().pool();
  Fingerprint fp;

  std::map<uint64_t, const PlannedRequest*> plan;
  for (const auto& p : w.requests) plan[p.request.id] = &p;
  std::map<uint64_t, std::vector<int32_t>> tokens;  // every live request's tokens
  std::set<uint64_t> done, aborted, rejected, admitted_ever;
  // The KV content the engine would hold: token id per (block, offset); -1 = never written.
  std::vector<int32_t> kv(static_cast<size_t>(c.num_gpu_blocks) * c.block_size, -1);
  // Static policy: requests first admitted since the live admitted set was last empty.
  std::set<uint64_t> live_admitted;
  int static_batch_count = 0;
  // KV offload: transfers in flight, each done at a drawn later step (stores in order).
  Rng delays{seed * 31 + 7};
  std::vector<std::pair<int, uint64_t>> loads;   // (done at step, request id)
  std::vector<std::pair<int, uint64_t>> stores;  // (done at step, scheduler step)

  auto record_finished = [&](const FinishedRequest& f) {
    fp.add(f.id);
    fp.add(static_cast<uint64_t>(f.num_output_tokens));
    EXPECT_TRUE(done.insert(f.id).second) << "request " << f.id << " finished twice";
    live_admitted.erase(f.id);
    const PlannedRequest& p = *plan.at(f.id);
    if (f.status == RequestStatus::kRejected) {
      rejected.insert(f.id);
      EXPECT_FALSE(f.reason.empty());
      EXPECT_EQ(admitted_ever.count(f.id), 0u);
      return;
    }
    if (f.finish_reason == FinishReason::kAbort) {
      aborted.insert(f.id);
      return;
    }
    EXPECT_EQ(f.num_output_tokens, p.expected_outputs) << "request " << f.id;
    EXPECT_EQ(f.finish_reason, p.expected_reason) << "request " << f.id;
    if (coverage && f.finish_reason == FinishReason::kStop) ++coverage->stopped;
    EXPECT_EQ(f.num_prompt_tokens + f.num_output_tokens, static_cast<int>(tokens.at(f.id).size()));
    EXPECT_LE(f.num_prompt_tokens + f.num_output_tokens, c.max_model_len);
    tokens.erase(f.id);
  };

  size_t next_arrival = 0;
  const int max_steps = 20000;
  int step = 0;
  for (; step < max_steps; ++step) {
    while (next_arrival < w.requests.size() && w.requests[next_arrival].arrival_step <= step) {
      const PlannedRequest& p = w.requests[next_arrival++];
      tokens[p.request.id] = p.request.prompt_token_ids;
      s.add_request(p.request);
    }
    const bool all_arrived = next_arrival == w.requests.size();
    if (c.policy == SchedulingPolicy::kStatic) {
      if (all_arrived) {
        s.release_static_batch(/*no_more_arrivals=*/true);
      } else if (s.static_batch_gathering() && step % 5 == 0) {
        s.release_static_batch();  // the gather timeout
      }
    }
    for (const auto& p : w.requests) {
      if (p.abort_step == step && !done.count(p.request.id) && s.find(p.request.id)) {
        EXPECT_TRUE(s.abort(p.request.id));
      }
    }
    for (auto it = loads.begin(); it != loads.end();) {
      if (it->first > step) {
        ++it;
        continue;
      }
      const Sequence* q = s.find(it->second);
      if (q && q->status == RequestStatus::kWaitingForRemoteKv) {
        // The copy from the host: the blocks hold the sequence's own tokens, and no one else
        // references them while they are written.
        const std::vector<int32_t>& t = tokens.at(it->second);
        const int from = q->num_computed_tokens;  // the GPU hit, whole blocks
        const int to = from + q->host_load_blocks * c.block_size;
        for (int pos = from; pos < to; ++pos) {
          const int32_t b = q->kv.block_ids.at(static_cast<size_t>(pos / c.block_size));
          EXPECT_EQ(pool.ref_count(b), 1) << "loading into a shared block";
          kv[static_cast<size_t>(b) * c.block_size + pos % c.block_size] = t[pos];
        }
      }
      s.finish_kv_load(it->second);  // false when it was aborted meanwhile
      it = loads.erase(it);
    }
    while (!stores.empty() && stores.front().first <= step) {
      s.complete_host_stores(stores.front().second);
      stores.erase(stores.begin());
    }
    for (const FinishedRequest& f : s.finished()) {
      if (!done.count(f.id)) record_finished(f);  // rejections and aborts since the update
    }
    if (all_arrived && !s.has_unfinished()) break;

    std::set<uint64_t> running_before;
    for (int32_t slot : s.running_slots()) running_before.insert(s.slot(slot).request_id);
    const SchedulerOutput& out = s.schedule();
    fp.add(out.sequences.size());
    fp.add(static_cast<uint64_t>(out.total_num_tokens));
    for (uint64_t id : out.preempted_ids) fp.add(id);

    // Step-level limits.
    EXPECT_LE(out.total_num_tokens, c.max_num_batched_tokens);
    EXPECT_LE(static_cast<int>(out.sequences.size()), c.max_num_seqs);
    const SchedulerStats st = s.stats();
    EXPECT_LE(st.num_running, c.max_num_seqs);
    EXPECT_EQ(st.kv_blocks_used + pool.num_free_blocks(), st.kv_blocks_total);
    EXPECT_EQ(st.kv_blocks_total, c.num_gpu_blocks - 1);
    EXPECT_LE(pool.num_cached_free_blocks(), pool.num_free_blocks());
    if (step % 7 == 0) {
      pool.check_invariants();
      s.host_kv().check_invariants();
    }
    for (const KvLoad& load : out.kv_loads) {
      EXPECT_TRUE(load.from_host);
      EXPECT_GT(load.num_tokens, 0);
      EXPECT_EQ(load.num_tokens % c.block_size, 0);
      loads.emplace_back(step + delays.uniform(0, 3), load.request_id);
    }
    if (out.num_host_store_blocks > 0) {
      const int due =
          std::max(stores.empty() ? 0 : stores.back().first, step + delays.uniform(0, 2));
      stores.emplace_back(due, out.step);
    }

    int sum = 0, prefill = 0, decode = 0;
    std::set<uint64_t> ids;
    StepResult result;
    for (const ScheduledSequence& e : out.sequences) {
      fp.add(e.request_id);
      fp.add(static_cast<uint64_t>(e.num_new_tokens));
      EXPECT_TRUE(ids.insert(e.request_id).second) << "scheduled twice in a step";
      auto tok_it = tokens.find(e.request_id);
      EXPECT_TRUE(tok_it != tokens.end());
      if (tok_it == tokens.end()) return 0;
      const std::vector<int32_t>& t = tok_it->second;
      const int end = e.num_computed_tokens + e.num_new_tokens;
      sum += e.num_new_tokens;
      (e.is_prefill ? prefill : decode) += 1;
      if (coverage && !e.samples) ++coverage->chunked_steps;
      EXPECT_GE(e.num_new_tokens, 1);
      EXPECT_LE(end, c.max_model_len - 1);
      EXPECT_LE(end, static_cast<int>(t.size()));
      EXPECT_EQ(e.samples, end == static_cast<int>(t.size()));
      if (c.long_prefill_token_threshold > 0) {
        EXPECT_LE(e.num_new_tokens, c.long_prefill_token_threshold);
      }
      if (!admitted_ever.count(e.request_id)) {
        admitted_ever.insert(e.request_id);
        if (live_admitted.empty()) static_batch_count = 0;
        ++static_batch_count;
        if (c.policy == SchedulingPolicy::kStatic) {
          EXPECT_LE(static_batch_count, c.effective_static_batch_size())
              << "static batch admitted a newcomer while running";
        }
      }
      live_admitted.insert(e.request_id);
      // Block table covers the step; hits are whole blocks, never the last token.
      EXPECT_GE(static_cast<int>(e.block_table.size()) * c.block_size, end);
      EXPECT_EQ(e.num_cached_tokens_hit % c.block_size, 0);
      EXPECT_LT(e.num_cached_tokens_hit, static_cast<int>(t.size()));
      if (e.num_cached_tokens_hit > 0) {
        EXPECT_EQ(e.num_computed_tokens, e.num_cached_tokens_hit);
      }
      // The context the step attends to is the sequence's own tokens: at every prefix hit,
      // and now and then for every scheduled sequence.
      if (e.num_cached_tokens_hit > 0 || step % 13 == 0) {
        for (int pos = 0; pos < e.num_computed_tokens; ++pos) {
          const int32_t b = e.block_table[pos / c.block_size];
          if (kv[static_cast<size_t>(b) * c.block_size + pos % c.block_size] != t[pos]) {
            ADD_FAILURE() << "request " << e.request_id << " reads wrong KV at position " << pos;
            return 0;
          }
        }
      }
      for (int pos = e.num_computed_tokens; pos < end; ++pos) {
        const int32_t b = e.block_table[pos / c.block_size];
        EXPECT_NE(b, BlockPool::kNullBlock);
        // Only a block cached in this very step can be shared while written (a request
        // admitted later in the step hit it; the engine writes KV before attention reads it).
        EXPECT_TRUE(pool.ref_count(b) == 1 || pool.is_cached(b)) << "writing into a shared block";
        kv[static_cast<size_t>(b) * c.block_size + pos % c.block_size] = t[pos];
      }
      if (e.samples) {
        const PlannedRequest& p = *plan.at(e.request_id);
        const size_t k = t.size() - p.request.prompt_token_ids.size();
        EXPECT_LT(k, p.outputs.size());
        const int32_t token = k < p.outputs.size() ? p.outputs[k] : 0;
        result.sampled_token_ids.push_back(token);
      }
    }
    EXPECT_EQ(sum, out.total_num_tokens);
    EXPECT_EQ(prefill, out.num_prefill_sequences);
    EXPECT_EQ(decode, out.num_decode_sequences);
    if (c.policy == SchedulingPolicy::kPrefillFirst) {
      EXPECT_TRUE(prefill == 0 || decode == 0) << "prefill_first mixed a step";
    }
    if (!out.preempted_ids.empty()) {
      for (const ScheduledSequence& e : out.sequences) {
        EXPECT_TRUE(running_before.count(e.request_id))
            << "request " << e.request_id << " admitted in a step that preempted";
      }
    }
    // Occasionally abort between schedule() and update().
    if (!out.sequences.empty() && (seed + static_cast<uint64_t>(step)) % 97 == 0) {
      const uint64_t victim = out.sequences.back().request_id;
      EXPECT_TRUE(s.abort(victim));
    }
    // Apply the tokens to our copy, then update.
    size_t k = 0;
    for (const ScheduledSequence& e : out.sequences) {
      if (!e.samples) continue;
      auto it = tokens.find(e.request_id);
      if (it != tokens.end() && s.find(e.request_id))
        it->second.push_back(result.sampled_token_ids[k]);
      ++k;
    }
    s.update(out, result);
    for (const FinishedRequest& f : s.finished()) {
      if (!done.count(f.id)) record_finished(f);
    }
  }
  EXPECT_LT(step, max_steps) << "workload did not drain (livelock)";
  EXPECT_FALSE(s.has_unfinished());
  if (!stores.empty()) s.complete_host_stores(stores.back().second);
  EXPECT_EQ(s.stats().num_held_kv, 0);
  EXPECT_EQ(done.size(), w.requests.size());
  for (const auto& p : w.requests) {
    const uint64_t id = p.request.id;
    EXPECT_TRUE(done.count(id)) << "request " << id << " never finished";
    // Without an abort, an acceptable request is never rejected.
    const int prompt = static_cast<int>(p.request.prompt_token_ids.size());
    const int longest = std::min(prompt + p.request.max_output_tokens, c.max_model_len);
    const int64_t blocks = (longest - 1 + c.block_size - 1) / c.block_size;
    const bool acceptable = prompt > 0 && prompt < c.max_model_len &&
                            p.request.max_output_tokens > 0 && blocks < c.num_gpu_blocks;
    EXPECT_EQ(rejected.count(id) == 0, acceptable) << "request " << id;
  }
  const SchedulerStats st = s.stats();
  EXPECT_EQ(st.kv_blocks_used, 0);
  EXPECT_EQ(st.num_running, 0);
  EXPECT_EQ(st.num_waiting, 0);
  EXPECT_EQ(pool.num_free_blocks(), pool.num_usable_blocks());
  EXPECT_EQ(st.num_finished + st.num_aborted + st.num_rejected,
            static_cast<int64_t>(w.requests.size()));
  EXPECT_LE(st.prefix_cache_hit_tokens, st.prefix_cache_queries_tokens);
  pool.check_invariants();
  s.host_kv().check_invariants();
  EXPECT_LE(st.host_kv_blocks_used, st.host_kv_blocks_total);
  if (coverage) {
    coverage->host_hit_tokens += st.host_kv_hit_tokens;
    ++coverage->workloads;
    coverage->steps += st.num_steps;
    coverage->preemptions += st.num_preemptions_total;
    coverage->hit_tokens += st.prefix_cache_hit_tokens;
    coverage->rejected += st.num_rejected;
    coverage->aborted += st.num_aborted;
    coverage->finished += st.num_finished;
    coverage->evictions += st.num_evicted_blocks;
  }
  fp.add(static_cast<uint64_t>(st.num_preemptions_total));
  fp.add(static_cast<uint64_t>(st.prefix_cache_hit_tokens));
  fp.add(static_cast<uint64_t>(st.host_kv_hit_tokens));
  return fp.h;
}

TEST(SchedulerProperty, RandomWorkloadsKeepEveryInvariant) {
  Coverage cov;
  for (uint64_t seed = 1; seed <= kNumSeeds; ++seed) {
    run_workload(seed, &cov);
    if (::testing::Test::HasFailure()) FAIL() << "first failing seed: " << seed;
  }
  std::printf(
      "%lld workloads, %lld steps: %lld finished (%lld by stop token), %lld rejected, "
      "%lld aborted, %lld preemptions, %lld prefix-hit tokens, %lld evictions, "
      "%lld partial prefill chunks, %lld tokens loaded from the host tier\n",
      static_cast<long long>(cov.workloads), static_cast<long long>(cov.steps),
      static_cast<long long>(cov.finished), static_cast<long long>(cov.stopped),
      static_cast<long long>(cov.rejected), static_cast<long long>(cov.aborted),
      static_cast<long long>(cov.preemptions), static_cast<long long>(cov.hit_tokens),
      static_cast<long long>(cov.evictions), static_cast<long long>(cov.chunked_steps),
      static_cast<long long>(cov.host_hit_tokens));
  // The generator must reach every mechanism, or the invariants above prove little.
  EXPECT_GT(cov.preemptions, cov.workloads / 10);
  EXPECT_GT(cov.hit_tokens, 0);
  EXPECT_GT(cov.rejected, 0);
  EXPECT_GT(cov.aborted, 0);
  EXPECT_GT(cov.stopped, 0);
  EXPECT_GT(cov.evictions, 0);
  EXPECT_GT(cov.chunked_steps, 0);
  EXPECT_GT(cov.host_hit_tokens, 0);
}

TEST(SchedulerProperty, OutcomesAreDeterministicForASeed) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const uint64_t a = run_workload(seed);
    const uint64_t b = run_workload(seed);
    ASSERT_EQ(a, b) << "seed " << seed;
  }
}

}  // namespace
}  // namespace servesim
