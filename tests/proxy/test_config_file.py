"""proxy.config_file: named upstreams from TOML, and one-line errors naming the line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from proxy.config_file import ConfigFileError, discover, load, parse
from proxy.server.serve import serve_command

GOOD = """\
# upstreams
[[upstream]]
name = "deepseek"
protocol = "openai"
base_url = "https://api.deepseek.com/v1"
rules = "deepseek"
prices = "deepseek"

[[upstream]]
name = "azure"
protocol = "openai"
base_url = "https://res.openai.azure.com/openai"

[[upstream]]
name = "vertex"
protocol = "gemini"
base_url = "https://generativelanguage.googleapis.com/"
"""


def test_a_config_file_lists_upstreams_with_their_lines():
    specs = parse(GOOD, "up.toml")
    assert [(s.name, s.protocol, s.base_url, s.rules, s.prices, s.line) for s in specs] == [
        ("deepseek", "openai", "https://api.deepseek.com/v1", "deepseek", "deepseek", 2),
        ("azure", "openai", "https://res.openai.azure.com/openai", "openai", None, 9),
        ("vertex", "gemini", "https://generativelanguage.googleapis.com", "gemini", None, 14),
    ]


def test_pyproject_is_read_at_tool_prefixgate(tmp_path):
    text = '[project]\nname = "app"\n\n[tool.prefixgate.lint]\nselect = ["PG001"]\n\n' + GOOD.replace(
        "[[upstream]]", "[[tool.prefixgate.upstream]]"
    )
    (tmp_path / "pyproject.toml").write_text(text)
    specs = load(tmp_path / "pyproject.toml")
    assert [s.name for s in specs] == ["deepseek", "azure", "vertex"] and specs[0].line == 8
    assert discover(tmp_path) == tmp_path / "pyproject.toml"


def test_discover_ignores_a_pyproject_without_upstreams(tmp_path):
    assert discover(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[tool.prefixgate.lint]\nselect = ["PG001"]\n')
    assert discover(tmp_path) is None


@pytest.mark.parametrize(
    "text, line, words",
    [
        (
            '[[upstream]]\nname = "x"\nprotocol = "grpc"\nbase_url = "https://a/v1"\n',
            3,
            "unknown protocol 'grpc'",
        ),
        ('[[upstream]]\nname = "x"\nprotocol = "openai"\nbase_url = "ftp://a/v1"\n', 4, "http(s) URL"),
        ('[[upstream]]\nname = "x"\nprotocol = "openai"\nbase_url = "https://k:s@a/v1"\n', 4, "credentials"),
        (
            '[[upstream]]\nname = "x"\nprotocol = "openai"\nbase_url = "https://a/v1"\n\n[[upstream]]\nname = "y"\nprotocol = "openai"\nbase_url = "https://b/v1"\n'
            '\n[[upstream]]\nname = "x"\nprotocol = "anthropic"\nbase_url = "https://c"\n',
            12,
            "duplicate upstream prefix '/x' (first at line 2)",
        ),
        (
            '[[upstream]]\nname = "x"\nprotocol = "openai"\nbase_url = "https://a/v1"\nrule = "deepseek"\n',
            5,
            "unknown key 'rule'",
        ),
        ('[[upstream]]\nname = "x"\nprotocol = "openai"\n', 1, "missing 'base_url'"),
        (
            '[[upstream]]\nname = "x"\nprotocol = "openai"\nbase_url = "https://a/v1"\nrules = "nope"\n',
            5,
            "unknown rules",
        ),
        ('[[upstream]]\nname = "v1beta"\nprotocol = "gemini"\nbase_url = "https://a"\n', 2, "reserved"),
        (
            '[[upstream]]\nname = "openai"\nprotocol = "gemini"\nbase_url = "https://a"\n',
            3,
            "must keep protocol",
        ),
        ('[[upstream]]\nname = "x"\nprotocol = 3\nbase_url = "https://a"\n', 3, "protocol must be a string"),
        ('\n[[upstream]]\nname = "x\n', 3, "not valid TOML"),
        ('[[upstreams]]\nname = "x"\n', 1, "unknown key 'upstreams'"),
        ('upstream = "x"\n', 1, "array of tables"),
    ],
)
def test_bad_config_files_fail_in_one_line_naming_the_line(text, line, words):
    with pytest.raises(ConfigFileError) as info:
        parse(text, "up.toml")
    message = str(info.value)
    assert message.startswith(f"up.toml:{line}: ") and words in message and "\n" not in message


def test_serve_stops_at_start_with_one_line(tmp_path):
    path = tmp_path / "up.toml"
    path.write_text('[[upstream]]\nname = "deepseek"\nprotocol = "openai"\nbase_url = "mailto:x"\n')
    result = CliRunner().invoke(serve_command, ["--config", str(path)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"Error: {path}:4: base_url of upstream 'deepseek' must be an http(s) URL, got 'mailto:x'"
    ]
    missing = CliRunner().invoke(serve_command, ["--config", str(tmp_path / "none.toml")])
    assert missing.exit_code == 2 and "none.toml: cannot read the config file" in missing.output


POOL = """\
[[upstream]]
name = "llama"
protocol = "openai"
base_urls = ["http://engine-0:8000/v1", "http://engine-1:8000/v1/"]
routing = "least-loaded"
health_path = "/health"
health_interval = 2.5
"""


def test_a_pool_of_base_urls_with_its_routing_and_health_keys():
    (spec,) = parse(POOL, "pool.toml")
    assert spec.base_urls == ("http://engine-0:8000/v1", "http://engine-1:8000/v1")
    assert spec.base_url == "http://engine-0:8000/v1" and spec.pooled
    assert (spec.routing, spec.health_path, spec.health_interval) == ("least-loaded", "/health", 2.5)
    (default,) = parse(POOL.replace('routing = "least-loaded"\n', ""), "pool.toml")
    assert default.routing == "prefix"


@pytest.mark.parametrize(
    "old, new, line, words",
    [
        ('routing = "least-loaded"', 'routing = "random"', 5, "routing of upstream 'llama' must be one of"),
        (
            '"http://engine-1:8000/v1/"',
            '"http://engine-0:8000/v1/"',
            4,
            "lists 'http://engine-0:8000/v1' twice",
        ),
        (
            'base_urls = ["http://engine-0:8000/v1", "http://engine-1:8000/v1/"]',
            "base_urls = []",
            4,
            "non-empty",
        ),
        ("health_interval = 2.5", 'health_interval = "5"', 7, "health_interval must be a number"),
        ("health_interval = 2.5", "health_interval = -1", 7, "health_interval of upstream"),
        ('health_path = "/health"', 'health_path = "health"', 6, "health_path of upstream"),
        ('"http://engine-1:8000/v1/"', "3", 4, "base_urls must be a list of strings"),
        ('"http://engine-1:8000/v1/"', '"http://engine-1:8000/api"', 4, "share one path"),
        ('routing = "least-loaded"', 'base_url = "http://x/v1"', 4, "both 'base_url' and 'base_urls'"),
    ],
)
def test_bad_pools_are_start_errors_naming_the_key(old, new, line, words):
    assert old in POOL
    with pytest.raises(ConfigFileError) as err:
        parse(POOL.replace(old, new), "pool.toml")
    assert str(err.value).startswith(f"pool.toml:{line}:") and words in str(err.value), str(err.value)
    assert "\n" not in str(err.value)
