#include "sim/agent/session_trace.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/config_error.h"
#include "models/json_object_reader.h"
#include "sim/core/csv_line.h"

namespace servesim {
namespace {

using nlohmann::json;

constexpr int kMaxTokens = 100'000'000;
constexpr int kMaxAttempts = 1'000'000;

const char* kind_name(TraceCallKind k) {
  switch (k) {
    case TraceCallKind::kLlm:
      return "llm";
    case TraceCallKind::kTool:
      return "tool";
    case TraceCallKind::kLookup:
      return "lookup";
  }
  return "llm";
}

json call_json(const TraceCall& c) {
  json j = {{"type", kind_name(c.kind)}, {"after", c.after}};
  if (c.kind == TraceCallKind::kLlm) {
    j["input_tokens"] = c.input_tokens;
    j["output_tokens"] = c.output_tokens;
    j["stream"] = c.stream;
    j["prompt_blocks"] = c.prompt_blocks;
    j["output_blocks"] = c.output_blocks;
    return j;
  }
  j["wait_s"] = c.wait_s;
  if (c.kind == TraceCallKind::kLookup) {
    j["hit"] = c.hit;
    return j;
  }
  j["attempts"] = c.attempts;
  j["ok"] = c.ok;
  if (c.cached) {
    j["cached"] = true;
    j["lookup_s"] = c.lookup_s;
    j["cache_hit"] = c.cache_hit;
  }
  return j;
}

int tokens(JsonObjectReader& r, const std::string& key) {
  const int n = r.non_negative_int(key, 0);
  if (n > kMaxTokens) r.fail(key, "must be at most 1e8 tokens");
  return n;
}

double seconds(JsonObjectReader& r, const std::string& key) {
  const double s = r.optional<double>(key, 0.0);
  if (!(s >= 0) || !std::isfinite(s)) {
    r.fail(key, "must be a finite number of seconds >= 0, got " + format_number(s));
  }
  return s;
}

std::vector<uint64_t> blocks(JsonObjectReader& r, const std::string& key, int max_blocks) {
  const json& a = r.raw(key);
  std::vector<uint64_t> out;
  if (a.is_null()) return out;
  if (!a.is_array()) r.fail(key, "must be an array of block ids (non-negative integers)");
  if (static_cast<int64_t>(a.size()) > max_blocks) {
    r.fail(key, "has " + std::to_string(a.size()) + " blocks, more than its tokens fill (" +
                    std::to_string(max_blocks) + " of " + std::to_string(kTraceBlockTokens) + ")");
  }
  for (const json& b : a) {
    if (!b.is_number_unsigned() && !(b.is_number_integer() && b.get<int64_t>() >= 0)) {
      r.fail(key, "must hold non-negative integer block ids, got " + b.dump());
    }
    out.push_back(b.get<uint64_t>());
  }
  return out;
}

TraceCall parse_call(const json& j, const std::string& where, size_t index) {
  JsonObjectReader r(j, where);
  TraceCall c;
  const std::string type = r.required<std::string>("type");
  if (type == "llm") {
    c.kind = TraceCallKind::kLlm;
  } else if (type == "tool") {
    c.kind = TraceCallKind::kTool;
  } else if (type == "lookup") {
    c.kind = TraceCallKind::kLookup;
  } else {
    r.fail("type", "must be llm, tool or lookup, got \"" + type + "\"");
  }
  const json& after = r.raw("after");
  if (!after.is_null() && !after.is_array()) r.fail("after", "must be an array of call indices");
  for (const json& a : after.is_array() ? after : json::array()) {
    if (!a.is_number_integer() || a.get<int64_t>() < 0 ||
        a.get<int64_t>() >= static_cast<int64_t>(index)) {
      r.fail("after", "must name earlier calls of the session (0.." + std::to_string(index) +
                          " exclusive), got " + a.dump());
    }
    c.after.push_back(a.get<int>());
  }
  if (c.kind == TraceCallKind::kLlm) {
    c.input_tokens = tokens(r, "input_tokens");
    if (c.input_tokens < 1) r.fail("input_tokens", "must be >= 1");
    c.output_tokens = tokens(r, "output_tokens");
    if (c.output_tokens < 1) r.fail("output_tokens", "must be >= 1");
    c.stream = r.optional<bool>("stream", true);
    c.prompt_blocks = blocks(r, "prompt_blocks", c.input_tokens / kTraceBlockTokens);
    const int total = (c.input_tokens + c.output_tokens) / kTraceBlockTokens;
    c.output_blocks = blocks(r, "output_blocks", total - static_cast<int>(c.prompt_blocks.size()));
  } else {
    c.wait_s = seconds(r, "wait_s");
    if (c.kind == TraceCallKind::kLookup) {
      c.hit = r.optional<std::string>("hit", "miss");
      if (c.hit != "exact" && c.hit != "semantic" && c.hit != "miss") {
        r.fail("hit", "must be exact, semantic or miss, got \"" + c.hit + "\"");
      }
    } else {
      c.lookup_s = seconds(r, "lookup_s");
      if (c.lookup_s > c.wait_s) r.fail("lookup_s", "must be at most wait_s");
      c.attempts = r.non_negative_int("attempts", 1);
      if (c.attempts > kMaxAttempts) r.fail("attempts", "must be at most 1000000");
      c.ok = r.optional<bool>("ok", true);
      c.cached = r.optional<bool>("cached", false);
      c.cache_hit = r.optional<bool>("cache_hit", false);
      if (!c.cached && (c.cache_hit || c.lookup_s > 0)) {
        r.fail("cached", "must be true for a tool with lookup_s or cache_hit");
      }
    }
  }
  r.finish();
  return c;
}

}  // namespace

std::string session_trace_line(const TracedSession& s) {
  json calls = json::array();
  for (const TraceCall& c : s.calls) calls.push_back(call_json(c));
  const json j = {{"session", s.session},
                  {"workflow", s.workflow},
                  {"user", s.user},
                  {"start_s", s.start_s},
                  {"calls", calls}};
  return j.dump();
}

TracedSession parse_session_trace_line(const std::string& line, const std::string& where) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& e) {
    throw ConfigError(where + ": not a JSON object (" + std::string(e.what()).substr(0, 80) +
                      "); a session trace has one session object a line");
  }
  JsonObjectReader r(j, where);
  TracedSession s;
  s.session = r.required<uint64_t>("session");
  s.workflow = r.optional<std::string>("workflow", "trace");
  s.user = r.optional<uint32_t>("user", 0);
  s.start_s = seconds(r, "start_s");
  const json& calls = r.raw("calls");
  if (!calls.is_array() || calls.empty()) {
    r.fail("calls", "must be a non-empty array of calls (llm, tool, lookup)");
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    s.calls.push_back(parse_call(calls[i], where + ": calls[" + std::to_string(i) + "]", i));
  }
  r.finish();
  return s;
}

std::vector<TracedSession> read_session_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the session trace");
  std::vector<TracedSession> sessions;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    sessions.push_back(parse_session_trace_line(line, path + ":" + std::to_string(number)));
  }
  if (sessions.empty()) throw ConfigError(path + ": the session trace has no sessions");
  return sessions;
}

}  // namespace servesim
