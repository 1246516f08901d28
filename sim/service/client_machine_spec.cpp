#include "sim/service/client_machine_spec.h"

#include <limits>

#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

Distribution seconds(JsonObjectReader& r, const std::string& key, const std::string& base_dir,
                     const Distribution& fallback) {
  const nlohmann::json& j = r.raw(key);
  if (j.is_null()) return fallback;
  return Distribution::from_json(j, r.context() + "." + key, base_dir, 0.0, false);
}

double finite_non_negative(JsonObjectReader& r, const std::string& key, double fallback) {
  const double v = r.optional<double>(key, fallback);
  if (!(v >= 0) || v == std::numeric_limits<double>::infinity()) {
    r.fail(key, "must be a finite number >= 0");
  }
  return v;
}

}  // namespace

ClientMachineSpec ClientMachineSpec::from_json(const nlohmann::json& j, const std::string& context,
                                               const std::string& base_dir) {
  if (!j.is_object()) {
    throw ConfigError(context + ": must be an object such as {\"threads\": 1}, got " + j.dump());
  }
  JsonObjectReader r(j, context);
  ClientMachineSpec m;
  m.threads = r.optional<int>("threads", m.threads);
  if (m.threads < 1 || m.threads > kMaxThreads) {
    r.fail("threads", "must be between 1 and " + std::to_string(kMaxThreads) +
                          " (the client's event loops or worker processes)");
  }
  m.send_s = seconds(r, "send_s", base_dir, m.send_s);
  m.per_prompt_token_s = finite_non_negative(r, "per_prompt_token_s", m.per_prompt_token_s);
  m.chunk_s = seconds(r, "chunk_s", base_dir, m.chunk_s);
  m.finish_s = seconds(r, "finish_s", base_dir, m.finish_s);
  m.cv = finite_non_negative(r, "cv", m.cv);
  r.finish();
  return m;
}

}  // namespace servesim
