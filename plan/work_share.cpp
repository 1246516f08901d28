#include "plan/work_share.h"

#include <optional>

#include "models/config_error.h"
#include "plan/parallel_for.h"

namespace servesim {

void share_for(WorkShare& share, size_t count, int threads, const std::function<void(size_t)>& body,
               const std::function<void(size_t, ByteWriter&)>& pack,
               const std::function<void(size_t, ByteReader&)>& unpack) {
  const size_t size = static_cast<size_t>(share.size());
  if (size == 1) {
    parallel_for(count, threads, body);
    return;
  }
  const size_t rank = static_cast<size_t>(share.rank());
  std::vector<size_t> mine;
  for (size_t k = rank; k < count; k += size) mine.push_back(k);
  // A ConfigError is a result like any other here: it travels to every rank.
  std::vector<std::optional<std::string>> errors(mine.size());
  parallel_for(mine.size(), threads, [&](size_t j) {
    try {
      body(mine[j]);
    } catch (const ConfigError& e) {
      errors[j] = e.what();
    }
  });
  ByteWriter out;
  for (size_t j = 0; j < mine.size(); ++j) {
    out.write(errors[j].has_value());
    if (errors[j]) {
      out.write(*errors[j]);
    } else {
      pack(mine[j], out);
    }
  }
  const std::vector<std::string> all = share.all_gather(out.bytes());
  std::optional<std::pair<size_t, std::string>> first_error;
  auto note_error = [&](size_t k, std::string what) {
    if (!first_error || k < first_error->first) first_error.emplace(k, std::move(what));
  };
  for (size_t j = 0; j < mine.size(); ++j) {
    if (errors[j]) note_error(mine[j], *errors[j]);
  }
  for (size_t r = 0; r < size; ++r) {
    if (r == rank) continue;  // our own results are in place already
    ByteReader in(all[r]);
    for (size_t k = r; k < count; k += size) {
      if (in.get<bool>()) {
        note_error(k, in.get<std::string>());
      } else {
        unpack(k, in);
      }
    }
  }
  if (first_error) throw ConfigError(first_error->second);
}

}  // namespace servesim
