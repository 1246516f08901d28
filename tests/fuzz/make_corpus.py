#!/usr/bin/env python3
"""Writes the seed corpora (tests/fuzz/corpus/<target>/) and the JSON-key dictionaries
(tests/fuzz/<target>.dict) from the bundled configs and test data. Re-run after a schema
change; the output is deterministic. Usage: python3 tests/fuzz/make_corpus.py"""
import codecs
import json
import pathlib
import re
import struct

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "fuzz"
CORPUS = FUZZ / "corpus"
HF_TEST = ROOT / "tests" / "models" / "hf_import_test.cpp"


def write(target, name, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (folder / name).write_bytes(data)


def keys_of(value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            keys_of(v, out)
    elif isinstance(value, list):
        for v in value:
            keys_of(v, out)


def dict_entry(token):
    # libFuzzer's dictionary syntax: printable ASCII, with \\, \" and \xNN escapes.
    out = ""
    for ch in token:
        if ch in '\\"':
            out += "\\" + ch
        elif 32 <= ord(ch) < 127:
            out += ch
        else:
            out += "\\x%02X" % ord(ch)
    return '"%s"' % out


def write_dict(target, docs, extra=()):
    keys = set()
    for d in docs:
        keys_of(d, keys)
    tokens = {'"%s"' % k for k in keys} | set(extra)
    lines = ["# JSON keys and tokens of %s's inputs (tests/fuzz/make_corpus.py)" % target]
    for i, t in enumerate(sorted(tokens)):
        lines.append("k%d=%s" % (i, dict_entry(t)))
    (FUZZ / (target + ".dict")).write_text("\n".join(lines) + "\n")


JSON_TOKENS = ["{", "}", "[", "]", ":", ",", "true", "false", "null", "-1", "0", "1e308",
               "2147483648", "9223372036854775808", "-0.0", "1e-320", '"\\u0000"']


def scenarios():
    docs = []
    for path in sorted((ROOT / "configs" / "scenarios").glob("*.json")):
        text = path.read_text()
        write("fuzz_scenario", path.name, text)
        docs.append(json.loads(text))
    quick = (ROOT / "configs" / "scenarios" / "quickstart.json").read_text()
    write("fuzz_scenario", "quickstart-with-overrides.json",
          quick + "\0engine.max_num_seqs=8\0parallel.tensor_parallel_size=2\0workload.seed=7")
    write("fuzz_scenario", "override-into-string.json", quick + "\0model.name=x")
    for path in ["broken_scenario.json", "typo_scenario.json", "malformed.json"]:
        write("fuzz_scenario", path, (ROOT / "tests" / "cli" / "data" / path).read_bytes())
    write_dict("fuzz_scenario", docs, JSON_TOKENS + ["=", "."])
    return docs


def workloads(scenario_docs):
    docs = [d["workload"] for d in scenario_docs if isinstance(d.get("workload"), dict)]
    # Every example of docs/workloads.md (each kind, option and distribution). The files they
    # name are small stand-ins in seeds/ (fuzz_workload's base folder): the bundled 868 KB CSV
    # read at every execution would make each one slow, not the parser.
    text = (ROOT / "docs" / "workloads.md").read_text()
    docs += [json.loads(b) for b in re.findall(r"```(?:json)?\n(.*?)```", text, re.S)]
    seeds = FUZZ / "seeds"
    lengths = (ROOT / "configs" / "workloads" / "traces" /
               "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv")
    (seeds / lengths.name).write_text("".join(lengths.read_text().splitlines(True)[:40]))
    stand_ins = {"AzureLLMInferenceTrace_conv.csv": TRACES["azure"][0],
                 "BurstGPT_1.csv": TRACES["burstgpt"][0], "mooncake_trace.jsonl": TRACES["mooncake"][0],
                 "x.csv": TRACES["azure"][1]}
    for name, body in stand_ins.items():
        (seeds / name).write_text(body)
    for i, d in enumerate(docs):
        write("fuzz_workload", "workload-%02d.json" % i, json.dumps(d, indent=1))
    write_dict("fuzz_workload", docs, JSON_TOKENS)


def models():
    docs = []
    for path in sorted((ROOT / "configs" / "models").glob("*.json")):
        text = path.read_text()
        write("fuzz_model_config", path.name, text)
        docs.append(json.loads(text))
    write("fuzz_model_config", "tinyllama_hf_config.json",
          (ROOT / "tests" / "cli" / "data" / "tinyllama_config.json").read_text())
    source = HF_TEST.read_text()
    for name, body in re.findall(r'\{"([^"]+)", R"\((\{.*?\})\)"\}', source, re.S):
        write("fuzz_model_config", "hf-%s.json" % name, body)
        docs.append(json.loads(body))
    write_dict("fuzz_model_config", docs, JSON_TOKENS)


def gpus():
    docs = []
    for path in sorted((ROOT / "configs" / "hardware").glob("*.json")):
        text = path.read_text()
        write("fuzz_gpu_json", path.name, text)
        docs.append(json.loads(text))
    write_dict("fuzz_gpu_json", docs, JSON_TOKENS)


def profiles():
    text = (FUZZ / "seeds" / "profile.json").read_text()
    write("fuzz_calibration_profile", "profile.json", text)
    write_dict("fuzz_calibration_profile", [json.loads(text)], JSON_TOKENS + ['"fp32"', '"bf16"'])


TRACES = {
    "azure": ["TIMESTAMP,ContextTokens,GeneratedTokens\n"
              "2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n"
              "2023-11-16 18:15:51.0,1200,0\n",
              "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46,10,1\r\n"],
    "burstgpt": ["Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                 "5,ChatGPT,472,18,490,Conversation log\n45,GPT-4,1087,0,1087,API log\n"
                 "118,ChatGPT,417,346,763,Conversation log\n"],
    "splitwise": None,  # taken from the bundled traces below
    "mooncake": ['{"timestamp": 0, "input_length": 6955, "output_length": 52, "hash_ids": [0, 1, 2]}\n'
                 '{"timestamp": 2000, "input_length": 1024, "output_length": 10, "hash_ids": [0, 46]}\n'],
}


def traces():
    bundled = ROOT / "configs" / "workloads" / "traces"
    TRACES["splitwise"] = [
        "".join((bundled / name).read_text().splitlines(True)[:12])
        for name in ["splitwise_code.csv", "splitwise_conv.csv"]]
    for fmt, seeds in TRACES.items():
        for i, text in enumerate(seeds):
            write("fuzz_trace_" + fmt, "%s-%d.trace" % (fmt, i), text)
            write("fuzz_trace_auto", "%s-%d.trace" % (fmt, i), text)
    csv_tokens = [",", "\n", "\r\n", '"', "-", ".", "e", "nan", "inf", "2023-11-16 18:15:46.6805900"]
    for fmt in list(TRACES) + ["auto"]:
        header = ["arrived_at", "num_prefill_tokens", "num_decode_tokens", "TIMESTAMP",
                  "ContextTokens", "GeneratedTokens", "Timestamp", "Request tokens",
                  "Response tokens", "timestamp", "input_length", "output_length", "hash_ids"]
        (FUZZ / ("fuzz_trace_%s.dict" % fmt)).write_text(
            "# column names and tokens of trace files (tests/fuzz/make_corpus.py)\n" +
            "".join("k%d=%s\n" % (i, dict_entry(t)) for i, t in enumerate(header + csv_tokens)))


def safetensors_file(tensors, metadata=None):
    header, data, offset = {}, b"", 0
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(payload)]}
        data += payload
        offset += len(payload)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def safetensors():
    write("fuzz_safetensors", "f32.safetensors", safetensors_file(
        {"w": ("F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4))}, {"format": "pt"}))
    write("fuzz_safetensors", "mixed.safetensors", safetensors_file({
        "a.f16": ("F16", [3], struct.pack("<3H", 0x3C00, 0x7C00, 0x0001)),
        "b.bf16": ("BF16", [1, 2], struct.pack("<2H", 0x3F80, 0xFF80)),
        "c.scalar": ("F32", [], struct.pack("<f", 0.5))}))
    write("fuzz_safetensors", "empty-tensor.safetensors", safetensors_file(
        {"e": ("F32", [0, 4], b"")}))
    docs = [{"dtype": "F32", "shape": [], "data_offsets": [], "__metadata__": {}}]
    write_dict("fuzz_safetensors", docs, JSON_TOKENS + ['"F16"', '"BF16"', '"F32"', '"I64"'])


# The first byte of an openai_request input: bit 0 the endpoint (1: chat), bits 1-2 the
# vocabulary (0: 32000 tokens, 1: 257, 2: 100, 3: 1); see fuzz_openai_request.cpp.
OPENAI_BODIES = [
    (0, {"model": "tiny", "prompt": "Hello, world", "max_tokens": 8}),
    (0, {"prompt": [1, 2, 3], "max_tokens": 4, "min_tokens": 2, "stop_token_ids": [7],
         "ignore_eos": True, "temperature": 0, "seed": 42}),
    (0, {"prompt": [[5, 6, 7]], "stream": True, "stream_options": {"include_usage": True,
         "continuous_usage_stats": True}, "top_p": 0.9}),
    (0, {"prompt": ["one prompt"], "n": 1, "echo": False, "logprobs": None, "user": "u"}),
    (2, {"prompt": "byte \u00e9 beyond 100 tokens"}),
    (6, {"prompt": [0]}),
    (1, {"model": "tiny", "messages": [{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": "Hi"}],
         "max_completion_tokens": 32, "stream": True}),
    (1, {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
                                                   {"type": "text", "text": "b"}]}],
         "max_tokens": 4000, "temperature": 1e308}),
    (1, {"messages": [], "tools": []}),
]


def openai_requests():
    docs = []
    for i, (head, body) in enumerate(OPENAI_BODIES):
        write("fuzz_openai_request", "body-%02d.json" % i, bytes([head]) + json.dumps(body).encode())
        docs.append(body)
    write("fuzz_openai_request", "not-an-object.json", b"\x00[1,2]")
    write("fuzz_openai_request", "malformed.json", b'\x01{"messages": [')
    extra = ['"best_of"', '"presence_penalty"', '"frequency_penalty"', '"stop"', '"tool_choice"',
             '"response_format"', '"use_beam_search"', '"top_k"', '"assistant"', '"text"']
    write_dict("fuzz_openai_request", docs, JSON_TOKENS + extra)


def http_request(method, target, body=None, headers=(), version="1.1"):
    lines = ["%s %s HTTP/%s" % (method, target, version), "Host: 127.0.0.1"]
    lines += list(headers)
    data = b""
    if body is not None:
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        lines += ["Content-Type: application/json", "Content-Length: %d" % len(data)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def chunked(data, size):
    out = b""
    for i in range(0, len(data), size):
        part = data[i:i + size]
        out += b"%x\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\n\r\n"


# The bytes a client sends to `engine serve` (fuzz_serve_http.cpp): requests one after another
# on one connection, valid and not.
def serve_http():
    t = "fuzz_serve_http"
    completion = {"model": "tiny-serve", "prompt": "Hello", "max_tokens": 4}
    chat = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "stream": True,
            "stream_options": {"include_usage": True}}
    write(t, "health.http", http_request("GET", "/health"))
    write(t, "completion.http", http_request("POST", "/v1/completions", completion))
    write(t, "completion-stream.http",
          http_request("POST", "/v1/completions", dict(completion, stream=True)))
    write(t, "chat-stream.http", http_request("POST", "/v1/chat/completions", chat))
    write(t, "pipelined.http", http_request("GET", "/v1/models") + http_request("GET", "/version") +
          http_request("POST", "/v1/completions", completion) + http_request("GET", "/metrics"))
    body = json.dumps(completion).encode()
    write(t, "chunked.http", b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
          b"Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n" +
          chunked(body, 7))
    write(t, "expect-continue.http",
          http_request("POST", "/v1/completions", completion, ["Expect: 100-continue"]))
    write(t, "head-then-get.http", http_request("HEAD", "/health") + http_request("GET", "/health"))
    write(t, "wrong-method.http", http_request("GET", "/v1/completions") +
          http_request("DELETE", "/health") + http_request("GET", "/nowhere?x=1"))
    write(t, "http10-close.http", http_request("GET", "/health", version="1.0") +
          http_request("GET", "/health"))
    write(t, "connection-close.http",
          http_request("GET", "/health", headers=["Connection: close"]) + http_request("GET", "/"))
    write(t, "bad-json.http", http_request("POST", "/v1/chat/completions", b'{"messages": ['))
    write(t, "cut-body.http", http_request("POST", "/v1/completions", completion)[:-5])
    write(t, "malformed-line.http", b"GET\r\n\r\n")
    write(t, "oversize-length.http", b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
          b"Content-Length: 99999999999\r\n\r\n{}")
    tokens = ["GET ", "POST ", "HEAD ", "PUT ", "OPTIONS ", " HTTP/1.1\r\n", " HTTP/1.0\r\n",
              "\r\n", "\r\n\r\n", "Host: ", "Content-Length: ", "Transfer-Encoding: chunked",
              "Transfer-Encoding: gzip, chunked", "Connection: close", "Connection: keep-alive",
              "Expect: 100-continue", "Content-Type: application/json", "/v1/completions",
              "/v1/chat/completions", "/v1/models", "/health", "/version", "/metrics", "?",
              "0\r\n\r\n", "ffffffffffffffff\r\n", "18446744073709551616"]
    keys = set()
    for d in (completion, chat):
        keys_of(d, keys)
    text_dict(t, "HTTP/1.1 framing tokens, routes and request JSON keys",
              tokens + sorted('"%s"' % k for k in keys) + JSON_TOKENS)


def run_folders():
    summary = {"scenario": "quickstart", "model": "Llama-3-8B", "gpu": "H100-SXM", "seed": 1,
               "simulated_s": 12.5,
               "summary": {"requests": 3, "completed": 2, "rejected": 1, "timed_out": 0,
                           "duration_s": 12.5, "request_throughput_per_s": 0.16,
                           "output_tokens_per_s": 20.0, "error_rate": 0.33,
                           "ttft": {"count": 2, "mean_ms": 30.0, "p50_ms": 25.0, "p99_ms": 35.0},
                           "tpot": {"count": 1, "p50_ms": 8.0}, "itl": None},
               "steps": {"count": 40}, "replicas": []}
    header = ("id,replica,status,arrival_s,first_scheduled_s,first_token_s,finish_s,"
              "prompt_tokens,output_tokens,cached_prompt_tokens,preemptions,queueing_s,"
              "ttft_s,tpot_s,e2e_s,step_index,cause\n")
    rows = ("0,0,ok,0.0,0.001,0.025,1.2,512,128,0,0,0.001,0.025,0.008,1.2,3,\n"
            "1,0,ok,0.5,0.52,0.535,0.9,64,1,0,1,0.02,0.035,,0.4,7,\n"
            "2,,rejected,1.0,,,1.0,9000,0,0,0,,,,,,too_long\n")
    text = json.dumps(summary, indent=1)
    write("fuzz_run_folder", "simulated.run", text + "\0" + header + rows)
    measured = dict(summary)
    del measured["simulated_s"]
    write("fuzz_run_folder", "measured-crlf.run",
          json.dumps(measured) + "\0" + (header + rows).replace("\n", "\r\n"))
    write("fuzz_run_folder", "no-requests.run", text)
    write("fuzz_run_folder", "header-only.run", text + "\0" + header)
    extra = ['"ok"', '"rejected"', '"timed_out"', ",", "\n", "\r\n", "nan", "inf", "\0"]
    extra += ['"%s"' % c for c in header.strip().split(",")]
    write_dict("fuzz_run_folder", [summary], JSON_TOKENS + extra)


def services(scenario_docs):
    docs = [d["service"] for d in scenario_docs if "service" in d]
    # Every example of docs/service-layer.md with a service block.
    text = (ROOT / "docs" / "service-layer.md").read_text()
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        try:
            d = json.loads(block)
        except ValueError:
            continue
        if isinstance(d, dict) and "service" in d:
            docs.append(d["service"])
    docs.append({"client": {"timeout_s": 30, "retry": {
        "max_attempts": 100, "on": ["rate_limited", "queue_full", "timed_out"],
        "initial_backoff_s": 1e-300, "max_backoff_s": 1e300, "multiplier": 1e300,
        "jitter": "equal"}}})
    docs.append({"gateway": {"workers": 2, "queue_capacity": 8, "timeout_s": 5,
                             "rate_limit": {"tokens_per_min": 6000}},
                 "stages": [{"name": "retrieval", "request_s": {"type": "lognormal",
                                                              "mean": 0.05, "std": 0.02}}]})
    for i, d in enumerate(docs):
        write("fuzz_service", "service-%02d.json" % i, json.dumps(d, indent=1))
    write("fuzz_service", "none.json", '"none"')
    write_dict("fuzz_service", docs, JSON_TOKENS + ['"none"', '"full"', '"equal"',
                                                    '"rate_limited"', '"queue_full"',
                                                    '"timed_out"', '"fixed"', '"lognormal"'])


CALIBRATION = ROOT / "tests" / "calibration"
MEASURED = CALIBRATION / "data" / "measured"


def vllm_bench_results():
    docs = []
    for path in sorted(MEASURED.glob("vllm-bench-*.json")):
        text = path.read_text()
        write("fuzz_vllm_bench_result", path.name, text)
        docs.append(json.loads(text))
    # The layouts' corners: a rate as a number, a ramp-up, legacy arrays without latencies.
    detailed = json.loads((MEASURED / "vllm-bench-detailed.json").read_text())
    ramp = dict(detailed, request_rate=4.5, burstiness=0.5, ramp_up_strategy="linear",
                max_concurrency=None)
    write("fuzz_vllm_bench_result", "ramp-up.json", json.dumps(ramp))
    no_latencies = {k: v for k, v in detailed.items() if k not in ("latencies", "start_times")}
    write("fuzz_vllm_bench_result", "itls-only.json", json.dumps(no_latencies))
    tokens = ['"inf"', '"linear"', '"exponential"', "1e-320", "-1e308", "1e308"]
    write_dict("fuzz_vllm_bench_result", docs, JSON_TOKENS + tokens)


TIMING_COLUMNS = ["arrival_s", "send_time", "send_s", "start_time", "arrival_time",
                  "first_token_s", "first_token_time", "last_token_s", "last_token_time",
                  "finish_s", "end_time", "prompt_tokens", "input_tokens", "prompt_len",
                  "input_len", "output_tokens", "completion_tokens", "output_len", "error"]


def text_dict(target, what, tokens):
    (FUZZ / (target + ".dict")).write_text(
        "# %s (tests/fuzz/make_corpus.py)\n" % what +
        "".join("k%d=%s\n" % (i, dict_entry(t)) for i, t in enumerate(tokens)))


def timing_traces():
    write("fuzz_timing_trace_csv", "trace.csv", (MEASURED / "trace.csv").read_text())
    write("fuzz_timing_trace_csv", "aliases-crlf.csv",
          "send_time,first_token_time,end_time,input_len,output_len\r\n"
          "5.5,5.75,6.0,10,3\r\n5.0,5.1,5.2,20,1\r\n5.5,5.6,5.9,30,2\r\n")
    write("fuzz_timing_trace_jsonl", "trace.jsonl", (MEASURED / "trace.jsonl").read_text())
    write("fuzz_timing_trace_jsonl", "canonical.jsonl",
          '{"arrival_s": 1e9, "first_token_s": 1e9, "last_token_s": 1000000000.5, '
          '"prompt_tokens": 7, "output_tokens": 2, "error": null}\n'
          '{"arrival_s": -3, "prompt_tokens": 1, "error": "refused"}\n')
    csv_tokens = [",", "\n", "\r\n", '"', "-", ".", "e", "nan", "inf", "1e308", "-1e308"]
    text_dict("fuzz_timing_trace_csv", "column names and tokens of timing traces",
              TIMING_COLUMNS + csv_tokens)
    write_dict("fuzz_timing_trace_jsonl", [{c: 0 for c in TIMING_COLUMNS}],
               JSON_TOKENS + ["\n", "-1e308", "1e308"])


def published_rows():
    rows = (CALIBRATION / "data" / "published" / "qwen3-32b-h100-rows.csv").read_text()
    header = rows.splitlines()[0]
    write("fuzz_published_rows", "qwen3-32b-h100-rows.csv", rows)
    write("fuzz_published_rows", "no-mode-no-pp.csv",
          "model,gpu,isl,osl,concurrency,tp,ttft_ms,tpot_ms,extra\n"
          "Llama-3-8B,h100_sxm,512,64,1,1,20.5,7.25,x\n\n"
          '"Llama-3-8B",h100_sxm,+512,64,32,8,1e3,0.5,\n')
    write("fuzz_published_rows", "disaggregated.csv",
          header + "\nvllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,fp8,disagg,1,1,1,1,1,1,1\n")
    tokens = [",", "\n", "\r\n", '"', "agg", "disagg", "nan", "inf", "1e308", "2147483648"]
    text_dict("fuzz_published_rows", "column names and tokens of published serving rows",
              header.split(",") + tokens)


def run_provenance():
    shipped = ROOT / "configs" / "validation" / "published-vllm-h100-qwen3-32b-provenance.csv"
    text = shipped.read_text()
    header = text.splitlines()[0]
    write("fuzz_run_provenance", "qwen3-32b-h100-provenance.csv", text)
    write("fuzz_run_provenance", "recorded-elsewhere.csv",
          header + "\n2,,1024,128,8,16,a\n2,fp8,1024,128,8,,b\n")
    write("fuzz_run_provenance", "twice-crlf.csv",
          header + "\r\n2,,1024,128,8,8,a\r\n2,,1024,128,8,8,a\r\n")
    tokens = [",", "\n", "\r\n", '"', "fp8", "bf16", "mxfp4", "0", "-1", "2147483648"]
    text_dict("fuzz_run_provenance", "column names and tokens of run provenance files",
              header.split(",") + tokens)


def cpp_string_literals(block):
    # The bytes the literals hold: C++ escapes (\\n, \\", \\xFF) as Python's bytes escapes read them.
    return b"".join(codecs.escape_decode(lit.encode())[0]
                    for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', block))


# Phrases of every line VllmStartupLog recognises (calibration/measured/vllm_startup_log.h).
LOG_PHRASES = [
    "Initializing a V1 LLM engine (v", "Initializing an LLM engine (v", ") with config: ",
    "non-default args: {", "vLLM API server version ", "Chunked prefill is enabled with ",
    "max_num_batched_tokens=", "Model loading took ", "Loading model weights took ", " GiB",
    "GiB", " GB", "total_gpu_memory (", ") x gpu_memory_utilization (", ") = ",
    "model weights take ", "; non_torch_memory takes ", "; PyTorch activation peak memory takes ",
    "; the rest of the memory reserved for KV Cache is ", "Memory profiling results: ",
    "total_gpu_memory=", "peak_torch_memory=", "non_torch_memory=", "kv_cache_size=",
    "gpu_memory_utilization=", "Available KV cache memory: ", "reserved ",
    " GiB memory for KV Cache as specified by", "GPU KV cache size: ", " tokens",
    "Maximum concurrency for ", " tokens per request: ", "x", "# GPU blocks: ",
    ", # CPU blocks: ", "# CUDA blocks: ", "num_gpu_blocks is: ", "Graph capturing finished in ",
    " secs, took ", "Estimated CUDA graph memory: ", " GiB total", "CUDA graph pool memory: ",
    " GiB (actual), ", " GiB (estimated)", "Free memory on device (", " GiB) on startup. ",
    "Desired GPU memory utilization is (", "Actual usage is ",
    " GiB for consumed memory (weights + non-torch), ", " GiB for peak activation",
    ", and ", " GiB for CUDAGraph memory", "Profiling CUDA graph memory: ", "PIECEWISE=",
    "FULL=", "(largest=", "current --gpu-memory-utilization=", " is equivalent",
    "model=", "tensor_parallel_size=", "pipeline_parallel_size=", "max_seq_len=",
    "max_model_len=", "max_num_seqs=", "block_size=", "kv_cache_dtype=", "dtype=torch.",
    "quantization=", "enforce_eager=", "chunked_prefill_enabled=", "enable_chunked_prefill=",
    "'model': '", "'tensor_parallel_size': ", "True", "False", "None", "fp8", "float16",
    "bfloat16", "0.23.0", "0.6.4.post1", "\n", "\r\n", ",", "-", ".", "99999999999999999999",
]


def startup_logs():
    logs = {path.name: path.read_text()
            for path in sorted((CALIBRATION / "data" / "vllm-logs").glob("*.log"))}
    # The inline logs of the parser's tests, each a run of C++ string literals.
    source = (CALIBRATION / "vllm_startup_log_test.cpp").read_text()
    for i, block in enumerate(re.findall(r"std::istringstream in\((.*?)\);", source, re.S)):
        logs["inline-%02d.log" % i] = cpp_string_literals(block)
    for target in ["fuzz_vllm_startup_log", "fuzz_memory_log"]:
        for name, text in logs.items():
            write(target, name, text)
        text_dict(target, "phrases of the vLLM start-up log lines read", LOG_PHRASES)


def sse(events, eol="\n"):
    return "".join("data: %s%s%s" % (e, eol, eol) for e in events)


def loadtest_streams():
    # First byte: bit 0 the endpoint (0 completions, 1 chat), bits 1-7 the read size - 1.
    def completion(text, usage=None):
        d = {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": None}]}
        if usage is not None:
            d["choices"] = []
            d["usage"] = usage
        return json.dumps(d)

    def chat(delta, usage=None):
        d = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        if usage is not None:
            d["choices"] = []
            d["usage"] = usage
        return json.dumps(d)

    usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    streams = {
        "completions.sse": (0, sse([completion(" a"), completion(" b"), completion(" c"),
                                    completion("", usage), "[DONE]"])),
        "completions-crlf.sse": (6, sse([completion(" a"), completion(" b"), "[DONE]"], "\r\n")),
        "chat.sse": (1, sse([chat({"role": "assistant", "content": ""}), chat({"content": "Hi"}),
                             chat({"content": "!"}), chat({}, usage), "[DONE]"])),
        "chat-cr.sse": (255, sse([chat({"content": "x"}), "[DONE]"], "\r")),
        "comments-and-fields.sse": (2, ": keep-alive\n\nevent: message\nid: 7\nretry: 10\n"
                                       "data: " + completion(" z") + "\n\ndata: [DONE]\n\n"),
        "multiline-data.sse": (0, "data: {\"choices\":\ndata: [{\"text\": \"a\"}]}\n\n"),
        "server-error.sse": (1, sse([json.dumps({"error": {"message": "boom", "type": "x",
                                                           "code": 500}})])),
        "error-string.sse": (0, sse([json.dumps({"error": "overloaded"})])),
        "not-json.sse": (0, sse(["<html>502</html>"])),
        "cut-mid-event.sse": (8, "data: " + completion(" a") + "\n\ndata: {\"choi"),
        "negative-usage.sse": (0, sse([completion("", {"prompt_tokens": -1,
                                                       "completion_tokens": -5})])),
        "huge-usage.sse": (1, sse([chat({}, {"prompt_tokens": 4294967297,
                                             "completion_tokens": 9223372036854775807})])),
    }
    for name, (head, body) in streams.items():
        write("fuzz_loadtest_stream", name, bytes([head]) + body.encode())
    text_dict("fuzz_loadtest_stream", "server-sent-event fields and chunk keys",
              ["data:", "data: ", "event:", "id:", "retry:", ":", "\n", "\r\n", "\r", "[DONE]",
               '"choices"', '"text"', '"delta"', '"content"', '"role"', '"usage"',
               '"prompt_tokens"', '"completion_tokens"', '"error"', '"message"', "{", "}", "[",
               "]", "null", "-1", "2147483648", "9223372036854775808", "1e308"])


def prometheus_texts():
    vllm = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 7.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 2.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.4375
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="m"} 3.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.001",model_name="m"} 0.0
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 12.0
vllm:time_to_first_token_seconds_count{model_name="m"} 12.0
vllm:time_to_first_token_seconds_sum{model_name="m"} 1.5
"""
    texts = {
        "vllm-v1.txt": vllm,
        "vllm-two-engines.txt": vllm + 'vllm:num_requests_running{engine="1",model_name="m"} 5\n',
        "vllm-v0.txt": "vllm:num_requests_running 1\nvllm:gpu_cache_usage_perc 0.5 1700000000000\n"
                       "vllm:num_preemptions 0\n",
        "sglang.txt": 'sglang:num_running_reqs{name="m"} 4\nsglang:num_queue_reqs{name="m"} 1\n'
                      'sglang:token_usage{name="m"} 0.2\n',
        "tgi.txt": "tgi_batch_current_size 3\ntgi_queue_size 0\n",
        "special-values.txt": "vllm:num_requests_running NaN\nvllm:num_requests_waiting +Inf\n"
                              "vllm:kv_cache_usage_perc -Inf\nvllm:num_preemptions_total -4\n",
        "huge-values.txt": "vllm:num_requests_running 1e300\nvllm:num_requests_waiting 3e9\n",
        "crlf.txt": vllm.replace("\n", "\r\n"),
        "odd-lines.txt": "{no_name} 1\nname_only\nvllm:num_requests_running{unclosed 2\n\n  \n",
    }
    for name, text in texts.items():
        write("fuzz_prometheus_text", name, text)
    text_dict("fuzz_prometheus_text", "Prometheus text tokens and the metric names read",
              ["# HELP ", "# TYPE ", " gauge", " counter", "{", "}", '="', '",', "_bucket",
               "_total", " ", "\n", "\r\n", "NaN", "+Inf", "-Inf", "Inf", "-0", "1e308", "1e-320",
               "vllm:num_requests_running", "vllm:num_requests_waiting",
               "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
               "vllm:num_preemptions_total", "vllm:num_preemptions", "sglang:num_running_reqs",
               "sglang:num_queue_reqs", "sglang:token_usage", "tgi_batch_current_size",
               "tgi_queue_size"])



def endpoint_urls():
    urls = ["http://127.0.0.1:8000", "http://localhost:8000/", "http://gateway/llm/",
            "http://[::1]:9000", "http://[fe80::1%25eth0]:8000/v1prefix", "http://h:",
            "http://my-host.example.com:65535/a/b", "https://h:1", "http://u@h:1",
            "http://h:1/?q=1", "http://h:0", "http://[::1", "ftp://h"]
    for i, url in enumerate(urls):
        write("fuzz_endpoint_url", "url-%02d.txt" % i, url)
    text_dict("fuzz_endpoint_url", "URL parts",
              ["http://", "https://", ":", "/", "[", "]", "@", "?", "#", "%", " ", "\t", "\r\n",
               "\x00", "80", "65535", "65536", "0", "::1", "localhost", "127.0.0.1"])


def cli_values():
    # The first byte picks the parser (fuzz_cli_values.cpp): 0 --vary, 1 --slo, 2 a size,
    # 3 --vllm-version, 4 --dtype.
    values = [(0, "engine.max_num_seqs=32,64,128"), (0, "workload.arrival.rate_qps=0.5:4:0.5"),
              (0, 'workload.prompt_tokens={"type":"uniform","min":1,"max":9},[1,2]'),
              (0, "a=1:0:1"), (0, "a=0:1e9:1e-9"), (1, "ttft:p99=0.5"), (1, "tpot:p50=40ms"),
              (1, "e2e:p95=2s"), (1, "itl:p90=0"), (2, "8GiB"), (2, "512MiB"), (2, "0.5g"),
              (2, "8589934592"), (2, "-1"), (3, "0.12"), (3, "v0.11.1rc6.dev115+gbc926c122"),
              (3, "0.3"), (4, "bf16"), (4, "fp8"), (4, "int4"), (4, "auto")]
    for i, (parser, value) in enumerate(values):
        write("fuzz_cli_values", "value-%02d.txt" % i, chr(parser) + value)
    text_dict("fuzz_cli_values", "flag value tokens",
              ["\x00", "\x01", "\x02", "\x03", "\x04", "=", ",", ":", "{", "}", "[", "]", '"',
               "ttft", "tpot", "itl", "e2e", "p50", "p90", "p95", "p99", "ms", "s", "GiB", "MiB",
               "KiB", "B", "G", "nan", "inf", "1e308", "1e-320", "0x1p3", "v", "rc", "0.23",
               "0.4", "bf16", "fp16", "fp32", "fp8", "int8", "int4", "engine.max_num_seqs"])


if __name__ == "__main__":
    docs = scenarios()
    traces()
    workloads(docs)
    models()
    gpus()
    profiles()
    safetensors()
    openai_requests()
    serve_http()
    run_folders()
    services(docs)
    vllm_bench_results()
    timing_traces()
    published_rows()
    run_provenance()
    startup_logs()
    loadtest_streams()
    prometheus_texts()
    endpoint_urls()
    cli_values()
