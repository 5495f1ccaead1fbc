"""The measurements behind ``prefixgate bench server``, through the official ``openai`` SDK against real
``prefixgate local`` processes (``python -m kvcache.server.cli``); each returns plain numbers, nothing printed.

- ``streams``: N greedy streams one after another, then the same N at once, alternated; total tokens/s of
  each (best round).
- ``ttft``: a long shared system prompt with short user turns: a cold request, then a warm one (same
  system prompt, another turn), a fresh system prompt per round; median time to first token of each.
- ``itl``: the inter-token gaps of one running stream, idle and while a long prompt is being prefilled.
Times are taken by the client (what a user sees), after a warm-up request. Not a test: no asserts.
"""

from __future__ import annotations

import contextlib
import itertools
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx


@contextlib.contextmanager
def local_server(model_path: str | None, threads: int, flags: list[str], port: int) -> Iterator[str]:
    """A ``prefixgate local`` process on loopback for the block; yields its ``/v1`` base URL."""
    cmd = [sys.executable, "-m", "kvcache.server.cli", "--port", str(port), "--threads", str(threads), *flags]
    if model_path:
        cmd += ["--model", model_path]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"prefixgate local exited: {proc.stderr.read().strip()[-2000:]}")
            try:
                if httpx.get(f"{base}/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("prefixgate local did not start within 120 s")
            time.sleep(0.1)
        yield f"{base}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def client(base_url: str):
    import openai

    return openai.OpenAI(base_url=base_url, api_key="local", max_retries=0, timeout=600)


def _one_stream(api, prompt, new_tokens: int) -> dict:
    """One greedy streamed completion: its text, tokens and the arrival time of each chunk."""
    start = time.perf_counter()
    stamps, texts, tokens = [], [], 0
    stream = api.completions.create(
        model="local",
        prompt=prompt,
        max_tokens=new_tokens,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"ignore_eos": True},
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].text:
            stamps.append(time.perf_counter())
            texts.append(chunk.choices[0].text)
        if chunk.usage is not None:
            tokens = chunk.usage.completion_tokens
    return {
        "text": "".join(texts),
        "tokens": tokens,
        "start": start,
        "end": time.perf_counter(),
        "stamps": stamps,
    }


def _together(api, prompts: list, new_tokens: int) -> list[dict]:
    results: list[dict | None] = [None] * len(prompts)
    gate = threading.Barrier(len(prompts))

    def run(i: int) -> None:
        gate.wait()
        results[i] = _one_stream(api, prompts[i], new_tokens)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(prompts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def streams(base_url: str, prompts: list, new_tokens: int, repeats: int = 3) -> dict:
    """One after another, then all at once, alternated ``repeats`` times; the best round of each counts
    (the one least disturbed by other processes on a shared machine)."""
    api = client(base_url)
    _one_stream(api, prompts[0], 4)  # warm-up
    rates: dict[str, list[float]] = {"sequential": [], "batched": []}
    texts: dict[str, list[list[str]]] = {"sequential": [], "batched": []}
    tokens = {}
    for _ in range(repeats):
        started = time.perf_counter()
        one_by_one = [_one_stream(api, p, new_tokens) for p in prompts]
        elapsed = time.perf_counter() - started
        together = _together(api, prompts, new_tokens)
        for kind, results, seconds in (
            ("sequential", one_by_one, elapsed),
            ("batched", together, max(r["end"] for r in together) - min(r["start"] for r in together)),
        ):
            tokens[kind] = sum(r["tokens"] for r in results)
            rates[kind].append(tokens[kind] / seconds)
            texts[kind].append([r["text"] for r in results])
    first = texts["sequential"][0]
    return {
        "sequential_tokens": tokens["sequential"],
        "batched_tokens": tokens["batched"],
        "sequential_tokens_per_s": max(rates["sequential"]),
        "batched_tokens_per_s": max(rates["batched"]),
        "sequential_runs": rates["sequential"],
        "batched_runs": rates["batched"],
        "identical": all(t == first for t in texts["sequential"] + texts["batched"]),
    }


def _first_token_s(api, system: str, user: str) -> float:
    start = time.perf_counter()
    stream = api.chat.completions.create(
        model="local",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        max_tokens=2,
        temperature=0,
        stream=True,
    )
    first = None
    for _ in stream:
        first = first or time.perf_counter()
    return (first or time.perf_counter()) - start


def ttft(base_url: str, systems: list[str], turns: list[str]) -> dict:
    """``systems``: one fresh system prompt per round; ``turns``: two user turns per round."""
    api = client(base_url)
    _first_token_s(api, turns[0], turns[1])  # warm-up
    cold, warm = [], []
    for i, system in enumerate(systems):
        cold.append(_first_token_s(api, system, turns[2 * i]))
        warm.append(_first_token_s(api, system, turns[2 * i + 1]))
    return {
        "cold_ttft_s": statistics.median(cold),
        "warm_ttft_s": statistics.median(warm),
        "cold": cold,
        "warm": warm,
    }


def _p(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def itl(
    base_url: str, stream_prompt: list[int], long_prompt: list[int], idle_tokens: int, tail_tokens: int = 20
) -> dict:
    """Gaps between one stream's tokens before and while ``long_prompt`` (token ids) is prefilled."""
    import openai

    api = client(base_url)
    _one_stream(api, stream_prompt, 4)  # warm-up
    stamps: list[float] = []
    window: dict[str, float] = {}

    def long_request() -> None:
        window["sent"] = time.perf_counter()
        api.completions.create(
            model="local", prompt=long_prompt, max_tokens=1, temperature=0, extra_body={"ignore_eos": True}
        )
        window["done"] = time.perf_counter()

    sender = threading.Thread(target=long_request)
    context = api.models.list().data[0].max_context
    stream = api.completions.create(
        model="local",
        prompt=stream_prompt,
        max_tokens=context - len(stream_prompt),
        temperature=0,
        stream=True,
        extra_body={"ignore_eos": True},
    )
    with contextlib.suppress(openai.APIError, httpx.HTTPError):
        for chunk in stream:
            if not (chunk.choices and chunk.choices[0].text):
                continue
            stamps.append(time.perf_counter())
            if len(stamps) == idle_tokens:
                sender.start()
            if "done" in window and sum(s > window["done"] for s in stamps) >= tail_tokens:
                break
    stream.close()
    sender.join()
    gaps = [(b, b - a) for a, b in itertools.pairwise(stamps)]
    idle = [g for _, g in gaps[5 : idle_tokens - 1]]  # after the stream's own start-up
    during = [
        g for end, g in gaps if end > window["sent"] and end - g < window["done"]
    ]  # overlapping the prefill
    return {
        "itl_p50_idle_s": _p(idle, 0.5),
        "itl_p99_idle_s": _p(idle, 0.99),
        "itl_p50_during_prefill_s": _p(during, 0.5),
        "itl_p99_during_prefill_s": _p(during, 0.99),
        "itl_max_during_prefill_s": max(during) if during else None,
        "gaps_during_prefill": len(during),
        "long_prompt_s": window["done"] - window["sent"],
    }
