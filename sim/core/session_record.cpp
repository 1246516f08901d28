#include "sim/core/session_record.h"

#include <cmath>

#include "sim/core/csv_line.h"

namespace servesim {
namespace {

std::string num(double v) {
  return std::isnan(v) ? std::string() : format_number(v);
}

}  // namespace

std::string_view session_csv_header() {
  return "id,workflow,user,status,cause,start_s,finish_s,e2e_s,first_token_s,ttft_s,llm_calls,"
         "tool_calls,tool_attempts,tool_failures,input_tokens,output_tokens,cached_tokens,"
         "path_llm_queue_s,path_prefill_s,path_decode_s,path_service_s,path_tool_s,"
         "path_llm_calls,path_tool_calls,tool_cache_lookups,tool_cache_hits,llm_cache_lookups,"
         "llm_exact_hits,llm_semantic_hits,cache_lookup_s,path_cache_s,skipped_steps,fallback_"
         "calls";
}

std::string session_csv_line(const SessionRecord& r) {
  std::string line = std::to_string(r.id) + ',' + csv_escape(r.workflow) + ',' +
                     std::to_string(r.user) + ',' + (r.ok ? "ok" : "failed") + ',' +
                     std::string(to_string(r.cause)) + ',' + num(r.start_s) + ',' +
                     num(r.finish_s) + ',' + num(r.e2e_s()) + ',' + num(r.first_token_s) + ',' +
                     num(r.ttft_s());
  for (int64_t n : {int64_t{r.llm_calls}, int64_t{r.tool_calls}, int64_t{r.tool_attempts},
                    int64_t{r.tool_failures}, r.input_tokens, r.output_tokens, r.cached_tokens}) {
    line += ',' + std::to_string(n);
  }
  const CriticalPath& p = r.path;
  for (double s : {p.llm_queue_s, p.prefill_s, p.decode_s, p.service_s, p.tool_s}) {
    line += ',' + (r.ok ? num(s) : std::string());
  }
  line += ',' + (r.ok ? std::to_string(p.llm_calls) : std::string());
  line += ',' + (r.ok ? std::to_string(p.tool_calls) : std::string());
  for (int n : {r.tool_cache_lookups, r.tool_cache_hits, r.llm_cache_lookups, r.llm_exact_hits,
                r.llm_semantic_hits}) {
    line += ',' + std::to_string(n);
  }
  line += ',' + num(r.cache_lookup_s);
  line += ',' + (r.ok ? num(p.cache_s) : std::string());
  line += ',' + std::to_string(r.skipped_steps);
  line += ',' + std::to_string(r.fallback_calls);
  return line;
}

}  // namespace servesim
