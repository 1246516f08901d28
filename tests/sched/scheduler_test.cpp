// Scheduler: each rule step by step — chunk sizes, mixing, limits, preemption order, prefix
// hits, stop conditions, rejection, abort, and the static and prefill_first policies.
#include "engine/sched/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "models/config_error.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;

SchedulerConfig small_config() {
  SchedulerConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 64;
  c.max_model_len = 256;
  c.block_size = 4;
  c.num_gpu_blocks = 1000;
  return c;
}

// Prompt tokens distinct per id unless `base` is given.
Request make_request(uint64_t id, int prompt_len, int max_output, int32_t base = -1) {
  Request r;
  r.id = id;
  r.prompt_token_ids.resize(prompt_len);
  std::iota(r.prompt_token_ids.begin(), r.prompt_token_ids.end(),
            base >= 0 ? base : static_cast<int32_t>(id * 100000));
  r.max_output_tokens = max_output;
  r.ignore_eos = true;
  return r;
}

struct Step {
  std::vector<ScheduledSequence> seqs;
  std::vector<uint64_t> preempted;
  std::vector<FinishedRequest> finished;
  int total = 0;
  const ScheduledSequence* find(uint64_t id) const {
    for (const auto& e : seqs) {
      if (e.request_id == id) return &e;
    }
    return nullptr;
  }
};

// One schedule() + update(), sampling `token` for every sampling sequence.
Step run_step(Scheduler& s, int32_t token = 1) {
  const SchedulerOutput& out = s.schedule();
  Step step{out.sequences, out.preempted_ids, {}, out.total_num_tokens};
  StepResult r;
  for (const auto& e : out.sequences) {
    if (e.samples) r.sampled_token_ids.push_back(token);
  }
  s.update(out, r);
  step.finished = s.finished();
  return step;
}

std::vector<FinishedRequest> run_to_completion(Scheduler& s, int max_steps = 10000) {
  std::vector<FinishedRequest> all;
  for (int i = 0; i < max_steps && s.has_unfinished(); ++i) {
    Step st = run_step(s);
    all.insert(all.end(), st.finished.begin(), st.finished.end());
  }
  EXPECT_FALSE(s.has_unfinished());
  return all;
}

// ---------------------------------------------------------------------------------------
// Configuration

void expect_config_error(SchedulerConfig c, const std::string& field) {
  try {
    c.validate();
    ADD_FAILURE() << "no error for " << field;
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr(field));
  }
}

TEST(SchedulerConfig, RefusesInvalidFieldsByName) {
  SchedulerConfig ok = small_config();
  ok.validate();
  auto c = ok;
  c.block_size = 0;
  expect_config_error(c, "block_size");
  c = ok;
  c.num_gpu_blocks = 0;
  expect_config_error(c, "num_gpu_blocks");
  c = ok;
  c.max_num_seqs = 0;
  expect_config_error(c, "max_num_seqs");
  c = ok;
  c.max_num_batched_tokens = 0;
  expect_config_error(c, "max_num_batched_tokens");
  c = ok;
  c.max_num_batched_tokens = 4;  // below max_num_seqs
  expect_config_error(c, "max_num_batched_tokens");
  c = ok;
  c.max_model_len = 1;
  expect_config_error(c, "max_model_len");
  c = ok;
  c.enable_chunked_prefill = false;  // 64 < max_model_len 256
  expect_config_error(c, "max_num_batched_tokens");
  c = ok;
  c.long_prefill_token_threshold = -1;
  expect_config_error(c, "long_prefill_token_threshold");
  c = ok;
  c.static_batch_size = 9;
  expect_config_error(c, "static_batch_size");
  EXPECT_THROW(Scheduler{SchedulerConfig{}}, ConfigError);  // num_gpu_blocks has no default
}

TEST(SchedulerConfig, ParsesPolicyNames) {
  EXPECT_EQ(parse_scheduling_policy("continuous", "policy"), SchedulingPolicy::kContinuous);
  EXPECT_EQ(parse_scheduling_policy("Static", "policy"), SchedulingPolicy::kStatic);
  EXPECT_EQ(parse_scheduling_policy("prefill_first", "policy"), SchedulingPolicy::kPrefillFirst);
  EXPECT_EQ(parse_queue_order("priority", "order"), QueueOrder::kPriority);
  try {
    parse_scheduling_policy("greedy", "scenario.scheduler.policy");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("scenario.scheduler.policy"));
    EXPECT_THAT(e.what(), HasSubstr("prefill_first"));
  }
  EXPECT_THROW(parse_queue_order("lifo", "order"), ConfigError);
  EXPECT_EQ(scheduling_policy_name(SchedulingPolicy::kPrefillFirst), "prefill_first");
}

// ---------------------------------------------------------------------------------------
// Continuous batching

TEST(Scheduler, ChunkedPrefillSplitsAPromptByTheBudget) {
  auto c = small_config();
  c.max_num_batched_tokens = 16;
  Scheduler s(c);
  s.add_request(make_request(1, 40, 2));
  const std::vector<int> chunks{16, 16, 8};
  for (size_t i = 0; i < chunks.size(); ++i) {
    Step st = run_step(s);
    ASSERT_EQ(st.seqs.size(), 1u);
    EXPECT_EQ(st.seqs[0].num_new_tokens, chunks[i]);
    EXPECT_EQ(st.seqs[0].num_computed_tokens, 16 * static_cast<int>(i));
    EXPECT_TRUE(st.seqs[0].is_prefill);
    EXPECT_EQ(st.seqs[0].samples, i == 2);
  }
  Step decode = run_step(s);
  ASSERT_EQ(decode.seqs.size(), 1u);
  EXPECT_EQ(decode.seqs[0].num_new_tokens, 1);
  EXPECT_EQ(decode.seqs[0].num_computed_tokens, 40);
  EXPECT_FALSE(decode.seqs[0].is_prefill);
  EXPECT_TRUE(decode.seqs[0].samples);
  ASSERT_EQ(decode.finished.size(), 1u);
  EXPECT_EQ(decode.finished[0].num_output_tokens, 2);
}

TEST(Scheduler, DecodesAndPrefillChunksMixInOneStep) {
  auto c = small_config();
  c.max_num_batched_tokens = 16;
  Scheduler s(c);
  s.add_request(make_request(1, 4, 10));
  run_step(s);  // prefill of 1
  s.add_request(make_request(2, 40, 1));
  Step st = run_step(s);
  ASSERT_EQ(st.seqs.size(), 2u);
  EXPECT_EQ(st.seqs[0].request_id, 1u);  // running first
  EXPECT_EQ(st.seqs[0].num_new_tokens, 1);
  EXPECT_EQ(st.seqs[1].request_id, 2u);  // then the new prompt, chunked to the budget left
  EXPECT_EQ(st.seqs[1].num_new_tokens, 15);
  EXPECT_EQ(st.total, 16);
  st = run_step(s);  // the unfinished chunk is now a running sequence: after 1's decode
  EXPECT_EQ(st.seqs[0].num_new_tokens, 1);
  EXPECT_EQ(st.seqs[1].num_new_tokens, 15);
  EXPECT_EQ(st.seqs[1].num_computed_tokens, 15);
  st = run_step(s);
  EXPECT_EQ(st.seqs[1].num_new_tokens, 10);
  EXPECT_TRUE(st.seqs[1].samples);
}

TEST(Scheduler, LongPrefillThresholdCapsEachChunk) {
  auto c = small_config();
  c.long_prefill_token_threshold = 8;
  Scheduler s(c);
  s.add_request(make_request(1, 20, 1));
  s.add_request(make_request(2, 5, 1));
  Step st = run_step(s);
  ASSERT_EQ(st.seqs.size(), 2u);
  EXPECT_EQ(st.seqs[0].num_new_tokens, 8);
  EXPECT_EQ(st.seqs[1].num_new_tokens, 5);
  st = run_step(s);
  EXPECT_EQ(st.seqs[0].num_new_tokens, 8);
  st = run_step(s);
  EXPECT_EQ(st.seqs[0].num_new_tokens, 4);
}

TEST(Scheduler, MaxNumSeqsLimitsAdmission) {
  auto c = small_config();
  c.max_num_seqs = 2;
  Scheduler s(c);
  s.add_request(make_request(1, 4, 2));
  s.add_request(make_request(2, 4, 5));
  s.add_request(make_request(3, 4, 1));
  Step st = run_step(s);
  EXPECT_EQ(st.seqs.size(), 2u);
  EXPECT_EQ(s.stats().num_waiting, 1);
  st = run_step(s);  // 1 finishes at the end of this step
  EXPECT_EQ(st.seqs.size(), 2u);
  EXPECT_EQ(st.find(3), nullptr);
  st = run_step(s);
  EXPECT_NE(st.find(3), nullptr);
}

TEST(Scheduler, WithoutChunkedPrefillAPromptWaitsForTheWholeBudget) {
  auto c = small_config();
  c.enable_chunked_prefill = false;
  c.max_model_len = 32;
  c.max_num_batched_tokens = 32;
  Scheduler s(c);
  s.add_request(make_request(1, 20, 5));
  s.add_request(make_request(2, 20, 5));
  Step st = run_step(s);
  ASSERT_EQ(st.seqs.size(), 1u);  // 20 does not fit the 12 left: head-of-line wait
  EXPECT_EQ(st.total, 20);
  st = run_step(s);
  ASSERT_EQ(st.seqs.size(), 2u);
  EXPECT_EQ(st.seqs[1].num_new_tokens, 20);
  EXPECT_EQ(st.total, 21);
}

// ---------------------------------------------------------------------------------------
// Preemption

// bs 4, 4 usable blocks. 1 (prompt 4) and 2 (prompt 4) decode; 3 waits. Each needs a new
// block every 4 tokens; the pool runs out when 1 needs its third block.
TEST(Scheduler, FcfsPreemptsTheMostRecentlyAdmittedAndAdmitsNothingThatStep) {
  auto c = small_config();
  c.num_gpu_blocks = 5;
  c.max_num_seqs = 2;
  Scheduler s(c);
  s.add_request(make_request(1, 4, 8));
  s.add_request(make_request(2, 4, 8));
  s.add_request(make_request(3, 4, 1));
  int step = 0;
  Step st;
  do {
    st = run_step(s);
    ++step;
  } while (st.preempted.empty() && step < 20);
  // Step 6: request 1 computes its 9th token and needs a third block.
  EXPECT_EQ(step, 6);
  EXPECT_EQ(st.preempted, std::vector<uint64_t>{2});
  ASSERT_EQ(st.seqs.size(), 1u);
  EXPECT_EQ(st.seqs[0].request_id, 1u);
  // A block was free after the preemption (and 3 needs one), but nothing is admitted in a
  // step that preempted.
  EXPECT_EQ(s.kv_cache().pool().num_free_blocks(), 1);
  EXPECT_EQ(s.stats().num_waiting, 2);
  EXPECT_EQ(s.find(2)->status, RequestStatus::kPreempted);
  EXPECT_EQ(s.find(2)->num_computed_tokens, 0);
  // The preempted request went to the front: it is admitted before 3.
  // Admission positions as (step, index in the step).
  std::pair<int, int> admitted_2{-1, -1}, admitted_3{-1, -1};
  auto position = [](const Step& st, uint64_t id) {
    for (size_t j = 0; j < st.seqs.size(); ++j) {
      if (st.seqs[j].request_id == id) return static_cast<int>(j);
    }
    return -1;
  };
  std::vector<FinishedRequest> fin;
  for (int i = 0; i < 100 && s.has_unfinished(); ++i) {
    st = run_step(s);
    const bool first_2 = admitted_2.first < 0 && st.find(2);
    if (first_2) admitted_2 = {i, position(st, 2)};
    if (admitted_3.first < 0 && st.find(3)) admitted_3 = {i, position(st, 3)};
    if (const ScheduledSequence* e = st.find(2); e && first_2) {
      // Recompute of prompt + 5 outputs, minus any block still cached, sampling at the end.
      EXPECT_TRUE(e->is_prefill);
      EXPECT_EQ(e->num_cached_tokens_hit + e->num_new_tokens, 9);
    }
    fin.insert(fin.end(), st.finished.begin(), st.finished.end());
  }
  EXPECT_GE(admitted_2.first, 0);
  EXPECT_LT(admitted_2, admitted_3);
  ASSERT_EQ(fin.size(), 3u);
  for (const auto& f : fin) {
    EXPECT_EQ(f.num_output_tokens, f.id == 3 ? 1 : 8);
    EXPECT_EQ(f.num_preemptions, f.id == 2 ? 1 : 0);
  }
  EXPECT_EQ(s.stats().num_preemptions_total, 1);
}

// Running order [2 (priority 1), 1 (priority 0)]; when 1 needs a block, FCFS preempts 1
// itself (the newest) but priority preempts 2 although 2 was already scheduled this step.
TEST(Scheduler, PriorityPreemptsLowestPriorityAndReturnsItsBudget) {
  for (QueueOrder order : {QueueOrder::kFcfs, QueueOrder::kPriority}) {
    auto c = small_config();
    c.num_gpu_blocks = 5;
    c.queue_order = order;
    Scheduler s(c);
    auto low = make_request(2, 4, 10);
    low.priority = 1;
    s.add_request(low);
    run_step(s);  // 2: 4 prompt tokens, 1 block
    auto high = make_request(1, 6, 10);
    high.priority = 0;
    high.arrival_s = 1.0;
    s.add_request(high);
    Step st;
    for (int i = 0; i < 10 && st.preempted.empty(); ++i) st = run_step(s);
    if (order == QueueOrder::kFcfs) {
      ASSERT_TRUE(s.add_request(make_request(3, 4, 1)));  // waits: nothing admitted this step
      EXPECT_EQ(st.preempted, std::vector<uint64_t>{1});
      ASSERT_EQ(st.seqs.size(), 1u);
      EXPECT_EQ(st.seqs[0].request_id, 2u);
    } else {
      EXPECT_EQ(st.preempted, std::vector<uint64_t>{2});
      ASSERT_EQ(st.seqs.size(), 1u);
      EXPECT_EQ(st.seqs[0].request_id, 1u);
      EXPECT_EQ(st.total, 1);  // 2's token was taken back out of the step
    }
    auto fin = run_to_completion(s);
    EXPECT_EQ(fin.size(), order == QueueOrder::kFcfs ? 3u : 2u);
  }
}

TEST(Scheduler, PriorityOrdersAdmissionByPriorityThenArrival) {
  auto c = small_config();
  c.queue_order = QueueOrder::kPriority;
  c.max_num_seqs = 1;
  Scheduler s(c);
  auto a = make_request(1, 4, 1);
  a.priority = 5;
  a.arrival_s = 0.0;
  auto b = make_request(2, 4, 1);
  b.priority = 0;
  b.arrival_s = 2.0;
  auto d = make_request(3, 4, 1);
  d.priority = 0;
  d.arrival_s = 1.0;
  s.add_request(a);
  s.add_request(b);
  s.add_request(d);
  std::vector<uint64_t> order;
  while (s.has_unfinished()) {
    Step st = run_step(s);
    for (const auto& e : st.seqs) order.push_back(e.request_id);
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{3, 2, 1}));
}

// ---------------------------------------------------------------------------------------
// Prefix caching

TEST(Scheduler, PrefixHitAtAdmissionSkipsCachedBlocks) {
  auto c = small_config();
  c.block_size = 16;
  c.max_num_batched_tokens = 256;
  Scheduler s(c);
  s.add_request(make_request(1, 40, 1, /*base=*/0));
  run_step(s);  // computes 40 tokens; blocks [0,16) and [16,32) are full and cached
  s.add_request(make_request(2, 50, 1, /*base=*/0));
  Step st = run_step(s);
  ASSERT_EQ(st.seqs.size(), 1u);
  EXPECT_EQ(st.seqs[0].num_cached_tokens_hit, 32);
  EXPECT_EQ(st.seqs[0].num_computed_tokens, 32);
  EXPECT_EQ(st.seqs[0].num_new_tokens, 18);
  ASSERT_EQ(st.finished.size(), 1u);
  EXPECT_EQ(st.finished[0].num_cached_prompt_tokens, 32);
  // Exactly two blocks' worth of prompt: the last token is recomputed, so one block hits.
  s.add_request(make_request(3, 32, 1, /*base=*/0));
  st = run_step(s);
  EXPECT_EQ(st.seqs[0].num_cached_tokens_hit, 16);
  EXPECT_EQ(st.seqs[0].num_new_tokens, 16);
  const SchedulerStats stats = s.stats();
  EXPECT_EQ(stats.prefix_cache_queries_tokens, 40 + 50 + 32);
  EXPECT_EQ(stats.prefix_cache_hit_tokens, 32 + 16);
  EXPECT_NEAR(stats.prefix_cache_hit_rate(), 48.0 / 122.0, 1e-12);
}

TEST(Scheduler, CacheSaltIsolatesPrefixes) {
  auto c = small_config();
  Scheduler s(c);
  auto a = make_request(1, 20, 1, 0);
  a.cache_salt = 7;
  s.add_request(a);
  run_step(s);
  auto b = make_request(2, 20, 1, 0);
  b.cache_salt = 8;
  s.add_request(b);
  EXPECT_EQ(run_step(s).seqs[0].num_cached_tokens_hit, 0);
  auto d = make_request(3, 20, 1, 0);
  d.cache_salt = 7;
  s.add_request(d);
  EXPECT_EQ(run_step(s).seqs[0].num_cached_tokens_hit, 16);
}

// allocate_slots() caches a block as soon as a scheduled step will fill it. If the step is
// taken back (abort between schedule() and update()), that block's KV was never computed and
// must not be served to a later request.
TEST(Scheduler, BlocksOfAStepThatNeverRanAreNotServedFromTheCache) {
  Scheduler s(small_config());  // block size 4
  s.add_request(make_request(1, 7, 5, /*base=*/0));
  run_step(s);  // computes tokens 0..6; block 0 is full and cached
  std::vector<int32_t> tokens = s.find(1)->tokens;  // 7 prompt tokens + 1 sampled
  ASSERT_EQ(tokens.size(), 8u);
  const SchedulerOutput& out = s.schedule();  // would compute token 7, filling block 1
  ASSERT_EQ(out.sequences.size(), 1u);
  EXPECT_EQ(s.kv_cache().pool().num_cached_blocks(), 2);
  EXPECT_TRUE(s.abort(1));
  s.update(out, StepResult{{1}});
  EXPECT_EQ(s.kv_cache().pool().num_cached_blocks(), 1);
  Request again = make_request(2, 9, 1);
  again.prompt_token_ids.assign(tokens.begin(), tokens.end());
  again.prompt_token_ids.push_back(3);
  s.add_request(again);
  const SchedulerOutput& next = s.schedule();
  EXPECT_EQ(next.sequences[0].num_cached_tokens_hit, 4);  // block 0 only
}

TEST(Scheduler, PrefixCachingOffNeverHits) {
  auto c = small_config();
  c.enable_prefix_caching = false;
  Scheduler s(c);
  s.add_request(make_request(1, 20, 1, 0));
  run_step(s);
  s.add_request(make_request(2, 20, 1, 0));
  EXPECT_EQ(run_step(s).seqs[0].num_cached_tokens_hit, 0);
  EXPECT_EQ(s.stats().prefix_cache_queries_tokens, 0);
}

// ---------------------------------------------------------------------------------------
// Stop conditions and limits

TEST(Scheduler, StopTokenFinishesUnlessIgnoreEos) {
  Scheduler s(small_config());
  auto a = make_request(1, 4, 10);
  a.ignore_eos = false;
  a.stop_token_ids = {7};
  auto b = make_request(2, 4, 3);
  b.ignore_eos = true;
  b.stop_token_ids = {7};
  s.add_request(a);
  s.add_request(b);
  run_step(s, 1);
  Step st = run_step(s, 7);
  ASSERT_EQ(st.finished.size(), 1u);
  EXPECT_EQ(st.finished[0].id, 1u);
  EXPECT_EQ(st.finished[0].finish_reason, FinishReason::kStop);
  EXPECT_EQ(st.finished[0].reason, "stop");
  EXPECT_EQ(st.finished[0].num_output_tokens, 2);
  st = run_step(s, 7);
  ASSERT_EQ(st.finished.size(), 1u);
  EXPECT_EQ(st.finished[0].id, 2u);
  EXPECT_EQ(st.finished[0].finish_reason, FinishReason::kLength);
  EXPECT_EQ(st.finished[0].num_output_tokens, 3);
}

TEST(Scheduler, MaxModelLenCapsTheSequence) {
  auto c = small_config();
  c.max_model_len = 10;
  Scheduler s(c);
  s.add_request(make_request(1, 6, 100));
  std::vector<FinishedRequest> fin;
  while (s.has_unfinished()) {
    Step st = run_step(s);
    for (const auto& e : st.seqs) EXPECT_LE(e.num_computed_tokens + e.num_new_tokens, 9);
    fin.insert(fin.end(), st.finished.begin(), st.finished.end());
  }
  ASSERT_EQ(fin.size(), 1u);
  EXPECT_EQ(fin[0].num_output_tokens, 4);  // 6 + 4 = max_model_len
  EXPECT_EQ(fin[0].finish_reason, FinishReason::kLength);
}

TEST(Scheduler, RejectsWhatCanNeverRunWithAReason) {
  auto c = small_config();
  c.max_model_len = 64;
  c.num_gpu_blocks = 9;  // 8 usable blocks = 32 tokens
  Scheduler s(c);
  EXPECT_FALSE(s.add_request(make_request(1, 0, 4)));
  EXPECT_FALSE(s.add_request(make_request(2, 64, 4)));
  EXPECT_FALSE(s.add_request(make_request(3, 4, 0)));
  EXPECT_FALSE(s.add_request(make_request(4, 30, 10)));  // 39 tokens in KV: 10 blocks
  EXPECT_TRUE(s.add_request(make_request(5, 30, 3)));    // 32 tokens: fits alone
  const auto& f = s.finished();
  ASSERT_EQ(f.size(), 4u);
  for (const auto& r : f) {
    EXPECT_EQ(r.status, RequestStatus::kRejected);
    EXPECT_EQ(r.finish_reason, FinishReason::kRejected);
  }
  EXPECT_THAT(f[0].reason, HasSubstr("empty"));
  EXPECT_THAT(f[1].reason, HasSubstr("max_model_len"));
  EXPECT_THAT(f[2].reason, HasSubstr("max_output_tokens"));
  EXPECT_THAT(f[3].reason, HasSubstr("KV blocks"));
  EXPECT_EQ(s.stats().num_rejected, 4);
  // Rejections are still listed after the next update(), then dropped.
  Step st = run_step(s);
  EXPECT_EQ(st.finished.size(), 4u);
  st = run_step(s);
  EXPECT_EQ(st.finished.size(), 0u);
  EXPECT_THROW(s.add_request(make_request(5, 4, 1)), std::invalid_argument);
  run_to_completion(s);
}

// ---------------------------------------------------------------------------------------
// Abort, API contract

TEST(Scheduler, AbortFreesWaitingAndRunningRequests) {
  Scheduler s(small_config());
  s.add_request(make_request(1, 8, 10));
  s.add_request(make_request(2, 8, 10));
  run_step(s);
  s.add_request(make_request(3, 8, 10));
  EXPECT_TRUE(s.abort(3));
  EXPECT_TRUE(s.abort(1));
  EXPECT_FALSE(s.abort(1));
  EXPECT_FALSE(s.abort(99));
  EXPECT_EQ(s.stats().num_running, 1);
  EXPECT_EQ(s.stats().num_waiting, 0);
  EXPECT_EQ(s.stats().num_aborted, 2);
  ASSERT_EQ(s.finished().size(), 2u);
  EXPECT_EQ(s.finished()[1].reason, "abort");
  // Abort between schedule() and update(): the entry is skipped, its token consumed.
  const SchedulerOutput& out = s.schedule();
  ASSERT_EQ(out.sequences.size(), 1u);
  EXPECT_TRUE(s.abort(2));
  s.update(out, StepResult{{5}});
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.kv_cache().pool().num_used_blocks(), 0);
  s.kv_cache().check_invariants();
}

TEST(Scheduler, EnforcesTheScheduleUpdateProtocol) {
  Scheduler s(small_config());
  s.add_request(make_request(1, 4, 3));
  const SchedulerOutput& out = s.schedule();
  EXPECT_THROW(s.schedule(), std::logic_error);
  EXPECT_THROW(s.update(out, StepResult{}), std::invalid_argument);  // one token missing
  SchedulerOutput copy = out;
  EXPECT_THROW(s.update(copy, StepResult{{1}}), std::invalid_argument);
  s.update(out, StepResult{{1}});
  // An empty step needs no update().
  Scheduler idle(small_config());
  EXPECT_TRUE(idle.schedule().empty());
  EXPECT_TRUE(idle.schedule().empty());
  EXPECT_EQ(idle.stats().num_steps, 2);
}

TEST(Scheduler, OutputCarriesTheBlockTable) {
  Scheduler s(small_config());
  s.add_request(make_request(1, 10, 2));
  const SchedulerOutput& out = s.schedule();
  ASSERT_EQ(out.sequences.size(), 1u);
  EXPECT_EQ(out.sequences[0].block_table.size(), 3u);  // 10 tokens, block size 4
  for (int32_t b : out.sequences[0].block_table) EXPECT_NE(b, BlockPool::kNullBlock);
  s.update(out, StepResult{{1}});
}

// ---------------------------------------------------------------------------------------
// Static batching

TEST(Scheduler, StaticBatchRunsToCompletionBeforeTheNextForms) {
  auto c = small_config();
  c.policy = SchedulingPolicy::kStatic;
  c.static_batch_size = 2;
  Scheduler s(c);
  s.add_request(make_request(1, 4, 3));
  s.add_request(make_request(2, 4, 5));
  s.add_request(make_request(3, 4, 2));
  for (int i = 0; i < 5; ++i) {
    Step st = run_step(s);
    EXPECT_EQ(st.find(3), nullptr) << "step " << i;
    EXPECT_EQ(st.seqs.size(), i < 3 ? 2u : 1u);
  }
  // One request waits; a batch of 2 is not full, so nothing runs until released.
  EXPECT_TRUE(s.static_batch_gathering());
  EXPECT_TRUE(s.schedule().empty());
  s.release_static_batch();
  EXPECT_FALSE(s.static_batch_gathering());
  Step st = run_step(s);
  EXPECT_NE(st.find(3), nullptr);
  // A new arrival during the batch waits for it to finish.
  s.add_request(make_request(4, 4, 2));
  s.add_request(make_request(5, 4, 2));
  st = run_step(s);  // 3 finishes
  EXPECT_EQ(st.seqs.size(), 1u);
  st = run_step(s);  // the full batch {4, 5} forms
  EXPECT_EQ(st.seqs.size(), 2u);
  run_to_completion(s);
}

TEST(Scheduler, StaticNoMoreArrivalsStartsPartialBatches) {
  auto c = small_config();
  c.policy = SchedulingPolicy::kStatic;
  c.static_batch_size = 4;
  Scheduler s(c);
  for (uint64_t id = 1; id <= 6; ++id) s.add_request(make_request(id, 4, 2));
  s.release_static_batch(/*no_more_arrivals=*/true);
  Step st = run_step(s);
  EXPECT_EQ(st.seqs.size(), 4u);
  run_step(s);  // first batch finishes
  st = run_step(s);
  EXPECT_EQ(st.seqs.size(), 2u);  // the remaining 2 start without a further release
  run_to_completion(s);
}

TEST(Scheduler, StaticBatchReadmitsItsPreemptedMembersFirst) {
  auto c = small_config();
  c.policy = SchedulingPolicy::kStatic;
  c.static_batch_size = 2;
  c.num_gpu_blocks = 5;  // 4 usable blocks of 4 tokens
  Scheduler s(c);
  s.add_request(make_request(1, 4, 8));
  s.add_request(make_request(2, 4, 8));
  s.add_request(make_request(3, 4, 1));
  s.add_request(make_request(4, 4, 1));
  bool saw_preemption = false;
  bool batch_done = false;
  std::vector<FinishedRequest> fin;
  for (int i = 0; i < 100 && s.has_unfinished(); ++i) {
    Step st = run_step(s);
    saw_preemption |= !st.preempted.empty();
    if (!batch_done) {
      EXPECT_EQ(st.find(3), nullptr);
      EXPECT_EQ(st.find(4), nullptr);
    }
    fin.insert(fin.end(), st.finished.begin(), st.finished.end());
    batch_done = fin.size() >= 2;
  }
  EXPECT_TRUE(saw_preemption);
  ASSERT_EQ(fin.size(), 4u);
  EXPECT_EQ(fin[0].id + fin[1].id, 3u);  // 1 and 2 first
}

// ---------------------------------------------------------------------------------------
// Prefill-first

TEST(Scheduler, PrefillFirstNeverMixesPrefillAndDecode) {
  auto c = small_config();
  c.policy = SchedulingPolicy::kPrefillFirst;
  c.max_num_batched_tokens = 8;
  Scheduler s(c);
  s.add_request(make_request(1, 4, 10));
  Step st = run_step(s);
  EXPECT_TRUE(st.seqs[0].is_prefill);
  st = run_step(s);
  ASSERT_EQ(st.seqs.size(), 1u);
  EXPECT_FALSE(st.seqs[0].is_prefill);
  s.add_request(make_request(2, 20, 2));
  // Chunks of 8, 8, 4 while request 1 does not decode.
  for (int chunk : {8, 8, 4}) {
    st = run_step(s);
    ASSERT_EQ(st.seqs.size(), 1u);
    EXPECT_EQ(st.seqs[0].request_id, 2u);
    EXPECT_EQ(st.seqs[0].num_new_tokens, chunk);
  }
  st = run_step(s);  // now both decode together
  ASSERT_EQ(st.seqs.size(), 2u);
  EXPECT_FALSE(st.seqs[0].is_prefill);
  EXPECT_FALSE(st.seqs[1].is_prefill);
  run_to_completion(s);
}

// ---------------------------------------------------------------------------------------
// Counters

TEST(Scheduler, StatsCountRunningWaitingAndBlocks) {
  auto c = small_config();
  c.max_num_seqs = 1;
  Scheduler s(c);
  s.add_request(make_request(1, 9, 4));
  s.add_request(make_request(2, 4, 4));
  run_step(s);
  const SchedulerStats st = s.stats();
  EXPECT_EQ(st.num_running, 1);
  EXPECT_EQ(st.num_waiting, 1);
  EXPECT_EQ(st.kv_blocks_used, 3);
  EXPECT_EQ(st.kv_blocks_total, 999);
  EXPECT_NEAR(st.kv_usage, 3.0 / 999.0, 1e-12);
  EXPECT_EQ(st.num_steps, 1);
  run_to_completion(s);
  EXPECT_EQ(s.stats().num_finished, 2);
  EXPECT_EQ(s.stats().kv_blocks_used, 0);
}

}  // namespace
}  // namespace servesim
