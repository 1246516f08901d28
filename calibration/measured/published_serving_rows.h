// read_published_serving_rows: end-to-end serving runs published as one CSV row each — the
// layout of ai-dynamo/aiconfigurator's silicon samples (the shared reference set
// published-vllm-h100-qwen3-32b.csv):
//   engine,engine_version,model,gpu,precision,mode,isl,osl,concurrency,tp,pp,ttft_ms,tpot_ms
// Each row is a closed-loop run at `concurrency` with fixed input (`isl`) and output (`osl`)
// lengths; ttft_ms and tpot_ms are means. Columns are found by name (extra ones ignored); only
// aggregated deployments (mode "agg", or no mode column) are read. `precision`, where given and
// not empty, is the precision the weights were served in (fp8: `--quantization fp8`), which
// the run is then simulated with.
//
// Errors: ConfigError "file:line: column: expected ..., got '...'" for a malformed row, a
// missing column, a disaggregated row, a precision servesim does not know; "file: no rows" for
// an empty file.
// Stateless; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "calibration/measured/measured_run.h"

namespace servesim {

// True when the file's first line has the columns above (how `calibrate serving` tells this
// layout from a per-request trace).
bool is_published_serving_rows(const std::string& path);

// One MeasuredRun per row, named "file:line" (format "published"), each issued by `protocol`
// when simulated (the rows do not say how their benchmark ran).
std::vector<MeasuredRun> read_published_serving_rows(
    const std::string& path, const BenchmarkProtocol& protocol = BenchmarkProtocol::steady());

}  // namespace servesim
