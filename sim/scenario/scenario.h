// Scenario: a whole what-if in one JSON file — model, GPU, parallelism, vLLM engine flags,
// cost model, cluster router, workload, SLOs and metric options — turned into a checked
// SimulationConfig. Every key is documented in docs/config-reference.md; an unknown or
// misspelt key is a ConfigError naming it and the closest valid key.
//
// Overrides ("--set engine.max_num_seqs=128") are applied to the JSON before it is read, so
// they obey the same checks; a value is parsed as JSON when it is valid JSON, else taken as a
// string. Relative paths (model/GPU files, workload file, traces) resolve against the
// scenario file's folder. A Scenario keeps the JSON it was read from, overrides applied, so a
// command reads its file and applies --set once (the run setup records that JSON). Stateless
// functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "sim/scenario/simulation_config.h"

namespace servesim {

struct Scenario {
  std::string name;
  std::string description;
  SimulationConfig config;
  nlohmann::json json;  // what `config` was read from: the file with its overrides applied
};

// Applies "path.to.key=value" overrides in order. Throws ConfigError on a malformed override
// or one that descends into a non-object.
void apply_overrides(nlohmann::json& scenario, const std::vector<std::string>& overrides);

// `base_dir` resolves relative paths; `origin` prefixes error messages (the file name).
Scenario parse_scenario(const nlohmann::json& j, const std::string& base_dir,
                        const std::string& origin, const Catalog& catalog);

// Loads a scenario file, applies overrides, parses it.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const Catalog& catalog);

}  // namespace servesim
