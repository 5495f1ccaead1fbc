from click.testing import CliRunner

from proxy.cli import COMMANDS, cli


def test_help_lists_every_subcommand_without_importing_them():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in ("serve", "lint", "analyze", "kv", "report", "bench", "local"):
        assert name in result.output
        assert name in COMMANDS


def test_every_subcommand_has_help():
    for name in COMMANDS:
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert "Usage:" in result.output


def test_unknown_subcommand_is_a_usage_error():
    result = CliRunner().invoke(cli, ["nope"])
    assert result.exit_code == 2
