// Catalog: the bundled models (configs/models/*.json) and GPUs (configs/hardware/*.json),
// looked up by name, alias or Hugging Face repo, or loaded from a user's file.
//
// The catalog directory is $SERVESIM_CONFIG_DIR when set, else the configs/ folder of the
// source tree servesim was built from. Lookups are case-insensitive. Each resolve call reads
// the files it needs; nothing is cached, so a Catalog is cheap and thread-compatible
// (const methods may run concurrently).
#pragma once

#include <string>
#include <vector>

#include "models/hardware_spec.h"
#include "models/model_spec.h"

namespace servesim {

class Catalog {
 public:
  // `config_dir` empty: $SERVESIM_CONFIG_DIR, else the build's source configs/.
  explicit Catalog(std::string config_dir = "");

  const std::string& config_dir() const { return config_dir_; }

  std::vector<ModelSpec> models() const;   // sorted by name
  std::vector<HardwareSpec> gpus() const;  // sorted by name

  // A catalog name/alias/HF repo, or a path to a JSON file (servesim schema or a Hugging
  // Face config.json, detected by its model_type key). Unknown names throw ConfigError
  // with the closest catalog names.
  ModelSpec resolve_model(const std::string& name_or_path) const;
  // The same for a name read from a file servesim did not write (a vLLM log, a bench result):
  // catalog names, aliases and HF repos only, never a path, so such a file cannot make
  // servesim open another file.
  ModelSpec resolve_model_name(const std::string& name) const;
  // The architecture of a served checkpoint named in such a file (a vLLM log, a published row):
  // resolve_model_name, else the name without its organisation (what follows the last '/') and
  // without its variant suffixes (-Instruct, -Chat, -FP8, -hf, in any combination), which keep
  // their base model's architecture. Throws
  // resolve_model_name's error for the name as given.
  ModelSpec resolve_checkpoint_name(const std::string& name) const;
  HardwareSpec resolve_gpu(const std::string& name_or_path) const;

  // Loads one file, servesim schema or HF config.json.
  static ModelSpec load_model_file(const std::string& path);
  static HardwareSpec load_gpu_file(const std::string& path);

 private:
  std::vector<std::string> json_files(const std::string& subdir) const;

  std::string config_dir_;
};

}  // namespace servesim
