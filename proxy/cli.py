"""The ``prefixgate`` console script: one click group, subcommands loaded lazily.

Each subcommand lives in the module that owns its concern; this file only maps names to
``module:attribute`` so that ``prefixgate lint`` never imports the server, and
``prefixgate serve`` never imports torch. ``local`` and ``bench engine`` live in
``kvcache`` (the optional ``local`` extra) and say so when torch is missing.
"""

from __future__ import annotations

import importlib

import click

COMMANDS: dict[str, str] = {
    "serve": "proxy.server.serve:serve_command",
    "demo": "proxy.demo:demo_command",
    "emulator": "proxy.emulator.cli:emulator_command",
    "lint": "analyzer.lint.cli:lint_command",
    "analyze": "analyzer.logs.cli:analyze_command",
    "kv": "analyzer.kv_cli:kv_command",
    "rewrite": "analyzer.rewrite.cli:rewrite_command",
    "report": "proxy.reporting.report:report_command",
    "bench": "proxy.cli:bench_group",
    "local": "kvcache.server.cli:local_command",
}

BENCH_COMMANDS: dict[str, str] = {
    "proxy": "proxy.bench.command:bench_proxy_command",
    "engine": "kvcache.bench.command:bench_engine_command",
    "server": "kvcache.bench.server:bench_server_command",
    "analyze": "analyzer.bench:bench_analyze_command",
    "rewrite": "proxy.bench.rewrite:bench_rewrite_command",
    "route": "proxy.bench.route:bench_route_command",
    "lint": "analyzer.lint.bench.command:bench_lint_command",
}

HELP = {
    "serve": "Run the caching proxy in front of OpenAI / Anthropic.",
    "demo": "Run the proxy in front of a local upstream (what `make run` runs).",
    "emulator": "Run the upstream emulator (OpenAI + Anthropic + Gemini caching rules) for tests and benchmarks.",
    "lint": "Flag what breaks prompt caching in prompts, request bodies and logs.",
    "analyze": "Find repeated prefixes and money in request logs.",
    "kv": "KV-cache calculator: bytes, conversations that fit, decode ceiling.",
    "rewrite": "Show what --rewrite safe|aggressive would send for a request body.",
    "report": "Cost and savings summary from the ledger.",
    "bench": "Benchmarks (JSON + table): the proxy, the local engine, analyze, rewrite, route.",
    "local": "Serve a local Llama-family model with a real KV cache (OpenAI-style API).",
}

BENCH_HELP = {
    "proxy": "Latency and requests/s the proxy adds, direct vs through the proxy (--store, --held).",
    "engine": "The local engine: no cache vs cache (identical output), prefill/decode speed, bandwidth.",
    "server": "The local server: continuous batching, prefix sharing and chunked prefill, via the openai SDK.",
    "analyze": "Time `prefixgate analyze` on a generated request log.",
    "rewrite": "Cached tokens, hit rate and USD for off / safe / aggressive vs the ideal app.",
    "route": "Round robin vs least-loaded vs prefix routing over several engines, through the proxy.",
    "lint": "Time volatile-value detection and `prefixgate lint` on generated prompts.",
}


def _load(target: str, name: str) -> click.Command:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or "?"
        hint = (
            " (install the local extra: pip install -e '.[local]')"
            if missing in ("torch", "safetensors", "tokenizers", "numpy")
            else ""
        )
        raise click.ClickException(f"`prefixgate {name}` needs the module {missing!r}{hint}") from exc
    return getattr(module, attr)


class LazyGroup(click.Group):
    def __init__(self, *args, lazy: dict[str, str], help_texts: dict[str, str], **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = lazy
        self.help_texts = help_texts

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            return _load(self.lazy[name], name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text without importing every subcommand (torch would load for `--help`).
        rows = [(name, self.help_texts.get(name, "")) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(
    cls=LazyGroup, lazy=COMMANDS, help_texts=HELP, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(package_name="prefixgate")
def cli() -> None:
    """prefixgate: make provider prompt caching hit, and prove it in dollars."""


@click.group(cls=LazyGroup, lazy=BENCH_COMMANDS, help_texts=BENCH_HELP)
def bench_group() -> None:
    """Benchmarks; each prints JSON and a table, measured side by side in one run."""


def main() -> None:
    cli(prog_name="prefixgate")


if __name__ == "__main__":
    main()
