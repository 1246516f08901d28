#!/usr/bin/env python3
"""Measures what a Python asyncio benchmark client (the shape of vLLM's `vllm bench serve`)
spends on its CPU per request sent, per streamed chunk received and per request finished.
The defaults of service.client.machine (docs/service-layer.md) come from this script's output.

Per chunk: a loopback server process streams vLLM-shaped /v1/completions SSE chunks; the client
reads them with asyncio streams, strips the line, drops the "data: " prefix, json.loads it and
timestamps the token, as vLLM's benchmark client does per chunk. The client's own CPU time
(time.process_time) over the chunks is the figure; the server runs in another process.
Per request: building the request body and json.dumps + encode + write, for two prompt lengths
(the difference gives the per-prompt-token cost); finish: the output record and its latency.
"""
import asyncio
import json
import multiprocessing
import socket
import time

CHUNKS = 200_000
CHUNK = ('data: {"id":"cmpl-8f1c2b9e0d3a4f5e","object":"text_completion","created":1733000000,'
         '"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"text":" the",'
         '"logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}\n\n')


def serve(sock):
    conn, _ = sock.accept()
    conn.recv(1 << 16)
    payload = (CHUNK * 1000).encode()
    for _ in range(CHUNKS // 1000):
        conn.sendall(payload)
    conn.sendall(b"data: [DONE]\n\n")
    conn.close()


async def read_stream(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /v1/completions HTTP/1.1\r\n\r\n")
    await writer.drain()
    itl, last, text, first = [], 0.0, "", True
    start_cpu = time.process_time()
    chunks = 0
    while True:
        line = await reader.readline()
        line = line.strip()
        if not line:
            continue
        chunk = line.decode("utf-8").removeprefix("data: ")
        if chunk == "[DONE]":
            break
        data = json.loads(chunk)
        if choices := data.get("choices"):
            now = time.perf_counter()
            if first:
                first = False
            else:
                itl.append(now - last)
            last = now
            text += choices[0].get("text") or ""
            chunks += 1
    cpu = time.process_time() - start_cpu
    writer.close()
    return cpu / chunks


def per_call(fn, n):
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n


def send_cost(prompt_tokens):
    prompt = " tok" * prompt_tokens  # about four characters per token
    def build():
        body = {"model": "meta-llama/Llama-3.1-8B-Instruct", "prompt": prompt, "temperature": 0.0,
                "max_tokens": 128, "stream": True, "stream_options": {"include_usage": True},
                "ignore_eos": True}
        data = json.dumps(body).encode()
        headers = (f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                   f"application/json\r\nContent-Length: {len(data)}\r\n\r\n").encode()
        return headers + data
    return per_call(build, 20_000)


def finish_cost():
    class Output:
        pass
    start = time.perf_counter()
    def finish():
        o = Output()
        o.generated_text, o.success, o.latency = "x" * 512, True, time.perf_counter() - start
        o.itl, o.ttft, o.output_tokens = [0.01] * 128, 0.05, 128
        return o
    return per_call(finish, 200_000)


def chunk_cv():
    """Spread of one chunk's parse, timed one by one (perf_counter_ns): the interquartile range
    over 1.349 (a normal's IQR in standard deviations) over the median, so that a preemption of
    this process by another on the machine does not count as the parse's own spread."""
    line = CHUNK.strip().encode()
    times = []
    for _ in range(100_000):
        start = time.perf_counter_ns()
        data = json.loads(line.strip().decode("utf-8").removeprefix("data: "))
        data.get("choices")[0].get("text")
        times.append(time.perf_counter_ns() - start)
    times.sort()
    n = len(times)
    return (times[3 * n // 4] - times[n // 4]) / 1.349 / times[n // 2]


def main():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    server = multiprocessing.Process(target=serve, args=(sock,))
    server.start()
    chunk_s = asyncio.run(read_stream(sock.getsockname()[1]))
    server.join()
    short, long = send_cost(100), send_cost(10_100)
    print(f"chunk_s            {chunk_s * 1e6:.2f} us per received SSE chunk")
    per_token = (long - short) / 10_000
    print(f"send_s             {(short - 100 * per_token) * 1e6:.2f} us per request, fixed part")
    print(f"per_prompt_token_s {per_token * 1e9:.2f} ns per prompt token")
    print(f"finish_s           {finish_cost() * 1e6:.2f} us per request")
    print(f"cv                 {chunk_cv():.2f} (one chunk's parse, timed one by one)")


if __name__ == "__main__":
    main()
