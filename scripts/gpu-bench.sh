#!/usr/bin/env bash
# The engine on a GPU, in one run: every figure of issue 23, as JSON at OUT.json and a table on stdout.
#
#   scripts/gpu-bench.sh OUT.json [extra flags for python -m kvcache.bench.gpu]
#
# Run from the repository root with the system python (no virtualenv). Needs torch with CUDA and a GPU;
# transformers is optional (without it the generate() comparison and the logits check are skipped,
# and said so). Installs nothing and reaches no network. Budget on one H200 (bf16, llama-3-8b shape,
# random weights): build ~10 s, transformers ~30 s, pool + graphs ~10 s, decode batches 1/8/32/64
# ~60 s, identity ~20 s, TTFT at an 8k prefix ~10 s: about 2–3 minutes; `timeout` stops it at 7.
set -euo pipefail

out="${1:-}"
if [[ -z "$out" ]]; then
  echo "usage: scripts/gpu-bench.sh OUT.json [flags]" >&2
  exit 2
fi
shift
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac # relative to where it is run, not the repository
mkdir -p "$(dirname "$out")"
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"

echo "== what this needs beyond the repository: torch with CUDA (required), transformers (optional)"
"$python" - <<'PY'
import importlib.util
import sys

if sys.version_info < (3, 10):  # the engine uses zip(strict=) and X | Y at run time
    sys.exit(f"python {sys.version.split()[0]}: too old (the engine needs 3.10 or later; set PYTHON=...)")
print(f"python {sys.version.split()[0]}")
if importlib.util.find_spec("torch") is None:
    sys.exit("torch: MISSING (required)")
import torch

print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, available: {torch.cuda.is_available()}")
if not torch.cuda.is_available():
    sys.exit("no CUDA device visible: this script measures the GPU path (on the CPU: prefixgate bench engine --device cpu)")
print(f"GPU: {torch.cuda.get_device_name(0)}, {torch.cuda.get_device_properties(0).total_memory / 2**30:.0f} GiB")
spec = importlib.util.find_spec("transformers")
if spec is None:
    print("transformers: missing (optional): the generate() comparison is skipped")
else:
    import transformers

    print(f"transformers {transformers.__version__}")
for name in ("safetensors", "tokenizers", "jinja2", "click", "rich", "starlette", "uvicorn", "httpx"):
    found = importlib.util.find_spec(name) is not None
    print(f"{name}: {'present' if found else 'absent'} (not needed by the suite)")
PY

echo "== the device suite (python -m kvcache.bench.gpu)"
PYTHONUNBUFFERED=1 timeout --signal=TERM --kill-after=15 420 "$python" -m kvcache.bench.gpu --device cuda --out "$out" "$@"
echo "== wrote $out"
