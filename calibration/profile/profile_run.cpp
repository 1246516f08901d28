#include "calibration/profile/profile_run.h"

#include <filesystem>
#include <fstream>

#include "models/config_error.h"
#include "models/json_file.h"

namespace servesim {
namespace {

ProfileSample parse_sample(const std::string& line) {
  const nlohmann::json j = nlohmann::json::parse(line);
  ProfileSample s;
  s.shape = j.at("shape").get<int>();
  s.repeat = j.at("repeat").get<int>();
  for (const auto& q : j.at("seqs")) {
    s.seqs.push_back({q.at(0).get<int>(), q.at(1).get<int>(), q.at(2).get<bool>()});
  }
  s.step_s = j.at("step_s").get<double>();
  const auto& ops = j.at("ops_s");
  for (Op op : kAllOps)
    s.op_s[static_cast<size_t>(op)] = ops.at(std::string(op_name(op))).get<double>();
  if (s.shape < 0 || s.repeat < 0 || s.seqs.empty() || !(s.step_s > 0)) {
    throw std::invalid_argument("values out of range");
  }
  return s;
}

}  // namespace

std::string sample_to_json_line(const ProfileSample& s) {
  nlohmann::json seqs = nlohmann::json::array();
  for (const ShapeSequence& q : s.seqs) seqs.push_back({q.new_tokens, q.context, q.prefill});
  nlohmann::json ops = nlohmann::json::object();
  for (Op op : kAllOps) ops[std::string(op_name(op))] = s.op_s[static_cast<size_t>(op)];
  return nlohmann::json{{"shape", s.shape},
                        {"repeat", s.repeat},
                        {"seqs", seqs},
                        {"step_s", s.step_s},
                        {"ops_s", ops}}
      .dump();
}

ProfileRun load_profile_run(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string rerun = "; re-run `servesim calibrate profile --out " + dir + "`";
  if (!fs::is_directory(dir)) {
    throw ConfigError(dir + ": no such profile directory (run `servesim calibrate profile --out " +
                      dir + "` first)");
  }
  const fs::path env_path = fs::path(dir) / kEnvironmentFile;
  if (!fs::exists(env_path)) {
    throw ConfigError(env_path.string() + ": missing, not a profile directory" + rerun);
  }
  ProfileRun run;
  run.environment = load_json_file(env_path.string());
  if (!run.environment.is_object() || !run.environment.contains("model") ||
      !run.environment.contains("backend")) {
    throw ConfigError(env_path.string() + ": lacks model or backend" + rerun);
  }
  const fs::path samples_path = fs::path(dir) / kSamplesFile;
  std::ifstream in(samples_path, std::ios::binary);
  if (!in) throw ConfigError(samples_path.string() + ": missing, no samples recorded" + rerun);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos);
    ++line_no;
    const bool complete = end != std::string::npos;
    const std::string line = text.substr(pos, complete ? end - pos : std::string::npos);
    pos = complete ? end + 1 : text.size();
    if (line.empty()) continue;
    try {
      run.samples.push_back(parse_sample(line));
    } catch (const std::exception&) {
      // Only an unterminated last line can be an interrupted append.
      if (!complete) {
        ++run.dropped_partial_lines;
        break;
      }
      throw ConfigError(samples_path.string() + ":" + std::to_string(line_no) +
                        ": malformed sample line, the directory is corrupt; re-run `servesim "
                        "calibrate profile` with a new --out");
    }
  }
  return run;
}

}  // namespace servesim
