#include "sim/service/vllm_frontend.h"

namespace servesim {

FrontendSpec vllm_frontend() {
  FrontendSpec f;
  f.station.name = "frontend";
  f.station.workers = 1;
  f.station.request_s = Distribution::fixed(kVllmIntakeS);
  f.station.per_prompt_token_s = kVllmTokeniseS;
  f.station.cv = kVllmCv;
  f.step_s = Distribution::fixed(kVllmStepS);
  f.per_output_token_s = kVllmPerTokenS;
  return f;
}

ServiceSpec vllm_service() {
  ServiceSpec s;
  s.enabled = true;
  s.frontend = vllm_frontend();
  return s;
}

}  // namespace servesim
