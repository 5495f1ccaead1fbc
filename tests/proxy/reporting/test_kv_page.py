"""The KV-cache calculator page against ``prefixgate kv``: the same numbers for every preset,
its state in the URL query, self-contained, and it fits a phone."""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

import httpx
import pytest
from click.testing import CliRunner
from starlette.applications import Starlette

from analyzer import kv
from proxy.access import AdminAccess
from proxy.accounting.ledger import Ledger
from proxy.accounting.metrics import Metrics
from proxy.cli import cli
from proxy.reporting.dashboard import routes
from tests.support.cdp import LAYOUT_JS, Browser
from tests.support.servers import serve

# The CLI's flags, as the page's query names them (underscores).
SETTINGS = [
    {
        "tokens": "8000",
        "batch": "1",
        "bits": "16",
        "gpu_memory": "80GB",
        "bandwidth": "3.35TB/s",
    },  # the seed's defaults
    {
        "tokens": "128K",
        "batch": "8",
        "bits": "8",
        "window": "4096",
        "gpu_memory": "192GB",
        "bandwidth": "8TB/s",
    },
    {
        "tokens": "1M",
        "batch": "3",
        "bits": "4",
        "gpu_memory": "1.5TB",
        "bandwidth": "3,350GB/s",
        "weights": "140GiB",
    },
]
FIGURES = ("bytes_per_token", "total_bytes", "conversations_that_fit", "decode_tokens_per_s_limit")


def cli_kv(query: dict[str, str]) -> dict | str:
    """``prefixgate kv --json`` for a page query: its figures, or its error message."""
    args = ["kv", "--json"]
    for name, value in query.items():
        if value:
            args += [f"--{name.replace('_', '-')}", value]
    result = CliRunner().invoke(cli, args)
    if result.exit_code == 2:
        return result.output.strip().splitlines()[-1].removeprefix("Error: ")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture(scope="module")
def page_url():
    ledger = Ledger(":memory:")
    app = AdminAccess(Starlette(routes=routes(ledger, Metrics())), "t0ken")
    with serve(app) as url:
        yield url
    ledger.close_sync()


@pytest.fixture(scope="module")
def browser(chromium_path):
    with Browser(chromium_path) as b:
        yield b


def load(browser: Browser, url: str, width: int = 1200) -> str:
    browser.open(url, width)
    return browser.wait_for("document.body.dataset.state !== 'loading' && document.body.dataset.state")


def page_rows(browser: Browser) -> dict[str, dict | str]:
    return browser.evaluate("""Object.fromEntries([...document.querySelectorAll('#presets-table tr[data-model]')].map((tr) =>
        [tr.dataset.model, tr.dataset.error || Object.fromEntries([...tr.querySelectorAll('td[data-key]')].map((td) =>
            [td.dataset.key, td.dataset.value === '' ? null : Number(td.dataset.value)]))]))""")


@pytest.mark.parametrize(
    "settings", SETTINGS, ids=["seed-defaults", "long-context-8bit-window", "1M-4bit-own-weights"]
)
def test_every_preset_matches_the_cli(page_url, browser, settings):
    assert (
        load(browser, f"{page_url}/prefixgate/kv?token=t0ken&model=llama-3-8b&{urlencode(settings)}")
        == "ready"
    )
    rows = page_rows(browser)
    assert sorted(rows) == sorted(kv.PRESETS) and sum(isinstance(r, dict) for r in rows.values()) >= 5
    for name in kv.PRESETS:
        want = cli_kv({"model": name, **settings})
        if isinstance(want, str):  # e.g. a 70B model's weights do not fit in 80 GB
            assert rows[name] == want, name  # the same message, word for word
            continue
        for figure in FIGURES:
            assert rows[name][figure] == want.get(figure), (
                name,
                figure,
            )  # exact: the same arithmetic, step for step


def test_the_main_result_and_a_custom_shape_match_the_cli(page_url, browser):
    query = {
        "layers": "80",
        "kv_heads": "8",
        "head_dim": "128",
        "tokens": "131,072",
        "batch": "2",
        "bits": "16",
        "window": "32K",
        "gpu_memory": "2x",
    }
    assert load(browser, f"{page_url}/prefixgate/kv?token=t0ken&{urlencode(query)}") == "error"
    assert (
        browser.evaluate("document.getElementById('error').textContent")
        == "not a size: '2x' (examples: 80GB, 24GiB, 3.35TB/s)"
    )
    assert cli_kv({**query}).endswith("not a size: '2x' (examples: 80GB, 24GiB, 3.35TB/s)")
    query.update(gpu_memory="640GB", weights="140GB", bandwidth="26.8TB/s")
    assert load(browser, f"{page_url}/prefixgate/kv?token=t0ken&{urlencode(query)}") == "ready"
    want = cli_kv(query)
    got = browser.evaluate("""Object.fromEntries(['out-bytes-per-token', 'out-total', 'out-fit', 'out-decode']
        .map((id) => [id, Number(document.getElementById(id).dataset.value)]).concat(
        [['with_cache', Number(document.getElementById('out-decode').dataset.withCache)]]))""")
    assert got == {
        "out-bytes-per-token": want["bytes_per_token"],
        "out-total": want["total_bytes"],
        "out-fit": want["conversations_that_fit"],
        "out-decode": want["decode_tokens_per_s_limit"],
        "with_cache": want["decode_tokens_per_s_limit_with_cache"],
    }
    # the seed's own figures (the explainer's code): 122 conversations of 4,000 tokens, ~209 tokens/s
    load(
        browser,
        f"{page_url}/prefixgate/kv?token=t0ken&model=llama-3-8b&tokens=4000&gpu_memory=80GB&bandwidth=3.35TB/s",
    )
    assert browser.evaluate("document.getElementById('out-fit').textContent") == "122"
    assert browser.evaluate("document.getElementById('out-decode').textContent") == "209"


def test_the_state_lives_in_the_url_query(page_url, browser):
    load(browser, f"{page_url}/prefixgate/kv?token=t0ken")  # no query: the seed explainer's defaults
    assert browser.evaluate("document.getElementById('model').value") == "llama-3-8b"
    browser.evaluate("""(() => { const t = document.getElementById('tokens'); t.value = '128K';
        t.dispatchEvent(new Event('input', {bubbles: true}));
        const b = document.getElementById('bits'); b.value = '8'; b.dispatchEvent(new Event('input', {bubbles: true})); })()""")
    link = browser.evaluate("location.href")
    assert "tokens=128K" in link and "bits=8" in link and "model=llama-3-8b" in link and "token=t0ken" in link
    before = browser.evaluate("document.getElementById('out-total').dataset.value")
    assert load(browser, link) == "ready"  # the link reproduces the calculation
    assert (
        browser.evaluate("document.getElementById('out-total').dataset.value")
        == before
        == str(kv.KVShape(32, 8, 128, 8).bytes_per_token * 131072)
    )
    assert (
        browser.evaluate("document.getElementById('dashboard-link').getAttribute('href')")
        == "dashboard?token=t0ken"
    )


def test_self_contained_and_fits_a_phone(page_url, browser):
    resp = httpx.get(f"{page_url}/prefixgate/kv", headers={"Authorization": "Bearer t0ken"})
    assert resp.status_code == 200 and httpx.get(f"{page_url}/prefixgate/kv").status_code == 401
    html = resp.text
    assert (
        not re.search(r"""(src|href)=["']?(https?:)?//""", html)
        and "<link" not in html
        and "<script src" not in html
    )
    csp = resp.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp and "unsafe-inline" not in csp
    for width in (420, 1400):
        assert (
            load(browser, f"{page_url}/prefixgate/kv?token=t0ken", width) == "ready"
        )  # the CSP let the inline script run
        layout = browser.evaluate(LAYOUT_JS)
        assert layout["scroll_width"] <= layout["viewport"] and layout["wide"] == [], (width, layout)


@pytest.mark.parametrize("tokens", ["9216", "11264", "13312"])  # 1.125, 1.375 and 1.625 GiB exactly
def test_an_exact_tie_rounds_as_the_cli_does(page_url, browser, tokens):
    """1,207,959,552 B is exactly 1.125 GiB: the CLI (Python's format) prints 1.12, half to
    even; JavaScript's toFixed would print 1.13. The page must say what the CLI says."""
    assert load(browser, f"{page_url}/prefixgate/kv?token=t0ken&model=llama-3-8b&tokens={tokens}") == "ready"
    shown = browser.evaluate("document.getElementById('out-total').textContent")
    result = CliRunner().invoke(cli, ["kv", "--model", "llama-3-8b", "--tokens", tokens])
    total_line = next(line for line in result.output.splitlines() if line.startswith("total"))
    assert total_line.endswith("= " + shown), (shown, total_line)
