#include "models/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "models/config_error.h"
#include "models/json_file.h"
#include "models/name_match.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

// Names compare without case and without the separators people vary ("Llama-2-7B",
// "llama_2_7b", "llama 2 7b").
std::string normalise(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

// HF repo names contain '/', so only an existing file or a .json name counts as a path.
bool looks_like_path(const std::string& s) {
  return s.ends_with(".json") || (s.find('/') != std::string::npos && fs::exists(s));
}

}  // namespace

Catalog::Catalog(std::string config_dir) : config_dir_(std::move(config_dir)) {
  if (config_dir_.empty()) {
    const char* env = std::getenv("SERVESIM_CONFIG_DIR");
    config_dir_ = env != nullptr && *env != '\0' ? env : SERVESIM_DEFAULT_CONFIG_DIR;
  }
}

std::vector<std::string> Catalog::json_files(const std::string& subdir) const {
  const fs::path dir = fs::path(config_dir_) / subdir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ConfigError("catalog: " + dir.string() +
                      " is not a directory; set SERVESIM_CONFIG_DIR to servesim's configs/ folder");
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

ModelSpec Catalog::load_model_file(const std::string& path) {
  const nlohmann::json j = load_json_file(path);
  if (j.is_object() && (j.contains("model_type") || j.contains("architectures"))) {
    ModelSpec m = ModelSpec::from_hf_config(j, path);
    if (m.name.empty()) m.name = fs::path(path).parent_path().filename().string();
    if (m.name.empty()) m.name = fs::path(path).stem().string();
    return m;
  }
  return ModelSpec::from_json(j, path);
}

HardwareSpec Catalog::load_gpu_file(const std::string& path) {
  return HardwareSpec::from_json(load_json_file(path), path);
}

std::vector<ModelSpec> Catalog::models() const {
  std::vector<ModelSpec> out;
  for (const std::string& f : json_files("models")) out.push_back(load_model_file(f));
  std::sort(out.begin(), out.end(),
            [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
  return out;
}

std::vector<HardwareSpec> Catalog::gpus() const {
  std::vector<HardwareSpec> out;
  for (const std::string& f : json_files("hardware")) out.push_back(load_gpu_file(f));
  std::sort(out.begin(), out.end(),
            [](const HardwareSpec& a, const HardwareSpec& b) { return a.name < b.name; });
  return out;
}

ModelSpec Catalog::resolve_model(const std::string& name_or_path) const {
  if (name_or_path.empty())
    throw ConfigError("--model: a model name or config.json path is required");
  if (looks_like_path(name_or_path)) return load_model_file(name_or_path);
  return resolve_model_name(name_or_path);
}

ModelSpec Catalog::resolve_model_name(const std::string& name) const {
  const std::string key = normalise(name);
  std::vector<std::string> names;
  std::vector<ModelSpec> all = models();
  for (ModelSpec& m : all) {
    if (normalise(m.name) == key || (!m.hf_repo.empty() && normalise(m.hf_repo) == key)) return m;
    names.push_back(m.name);
  }
  // A unique prefix names a model too ("Mistral-7B" for "Mistral-7B-v0.1").
  const ModelSpec* unique = nullptr;
  int matches = 0;
  for (const ModelSpec& m : all) {
    if (normalise(m.name).starts_with(key)) {
      unique = &m;
      ++matches;
    }
  }
  if (matches == 1) return *unique;
  throw ConfigError("--model: unknown model '" + name + "'" + did_you_mean(name, names) +
                    "; run 'servesim models' for the catalog or pass a config.json path");
}

ModelSpec Catalog::resolve_checkpoint_name(const std::string& name) const {
  std::vector<std::string> tries{name};
  // Another organisation's copy (nvidia/..., RedHatAI/...) is the same architecture.
  if (const size_t slash = name.rfind('/'); slash != std::string::npos && slash + 1 < name.size())
    tries.push_back(name.substr(slash + 1));
  for (const char* suffix : {"-Instruct", "-instruct", "-Chat", "-chat", "-FP8", "-hf"}) {
    const std::vector<std::string> so_far = tries;
    for (const std::string& t : so_far) {
      const size_t at = t.rfind(suffix);
      if (at != std::string::npos)
        tries.push_back(t.substr(0, at) + t.substr(at + std::string_view(suffix).size()));
    }
  }
  for (const std::string& t : tries) {
    try {
      return resolve_model_name(t);
    } catch (const ConfigError&) {
    }
  }
  return resolve_model_name(name);  // throws, naming what was given
}

HardwareSpec Catalog::resolve_gpu(const std::string& name_or_path) const {
  if (name_or_path.empty()) throw ConfigError("--gpu: a GPU name or JSON path is required");
  if (looks_like_path(name_or_path)) return load_gpu_file(name_or_path);
  const std::string key = normalise(name_or_path);
  std::vector<std::string> names;
  for (HardwareSpec& h : gpus()) {
    if (normalise(h.name) == key) return h;
    for (const std::string& alias : h.aliases) {
      if (normalise(alias) == key) return h;
    }
    names.push_back(h.name);
  }
  throw ConfigError("--gpu: unknown GPU '" + name_or_path + "'" +
                    did_you_mean(name_or_path, names) +
                    "; run 'servesim gpus' for the catalog or pass a JSON file");
}

}  // namespace servesim
