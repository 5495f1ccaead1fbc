"""proxy.tenant: a per-install keyed hash of the API key."""

from __future__ import annotations

import stat

import pytest

from proxy.tenant import ANONYMOUS, SECRET_FILE, TenantHasher, api_key_of, load_or_create_secret


def test_secret_is_created_once_with_mode_0600(tmp_path):
    first = load_or_create_secret(tmp_path / "state")
    second = load_or_create_secret(tmp_path / "state")
    assert first == second and len(first) == 32
    mode = stat.S_IMODE((tmp_path / "state" / SECRET_FILE).stat().st_mode)
    assert mode == 0o600


def test_tenants_differ_per_key_and_per_install(tmp_path):
    a = TenantHasher.for_state_dir(tmp_path / "a")
    b = TenantHasher.for_state_dir(tmp_path / "b")
    key = b"sk-live-one"
    assert a.tenant_of_key(key) == a.tenant_of_key(key)
    assert a.tenant_of_key(key) != a.tenant_of_key(b"sk-live-two")
    assert a.tenant_of_key(key) != b.tenant_of_key(key)  # another install cannot link tenants
    assert key.decode() not in a.tenant_of_key(key)
    assert len(a.tenant_of_key(key)) == 32


def test_key_comes_from_bearer_x_api_key_or_api_key():
    assert api_key_of([(b"authorization", b"Bearer sk-1")]) == b"sk-1"
    assert api_key_of([(b"x-api-key", b"ant-1")]) == b"ant-1"
    assert api_key_of([(b"api-key", b"az-1")]) == b"az-1"
    assert api_key_of([(b"content-type", b"x")]) is None


def test_same_key_through_either_header_is_one_tenant(tmp_path):
    hasher = TenantHasher.for_state_dir(tmp_path)
    assert hasher.tenant_of([(b"authorization", b"Bearer k1")]) == hasher.tenant_of([(b"x-api-key", b"k1")])
    assert hasher.tenant_of([]) == ANONYMOUS


def test_short_secret_refused():
    with pytest.raises(ValueError):
        TenantHasher(b"short")


def test_processes_starting_together_all_get_the_one_whole_secret(tmp_path):
    # Before: the file was created empty, then written; a second starter could read it in
    # between and refuse to start ("secret too short"). Failed 24 of 30 rounds like this one.
    import threading

    for round_ in range(10):
        state, results = tmp_path / str(round_), []
        barrier = threading.Barrier(8)

        def start():
            barrier.wait()
            try:
                results.append(load_or_create_secret(state))
            except ValueError as exc:
                results.append(exc)

        threads = [threading.Thread(target=start) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(results)) == 1 and len(results[0]) == 32, results
        assert [p.name for p in state.iterdir()] == [SECRET_FILE]  # no temporary file left


def test_an_empty_bearer_does_not_hide_the_x_api_key():
    assert api_key_of([(b"authorization", b"Bearer "), (b"x-api-key", b"ant-1")]) == b"ant-1"
    assert api_key_of([(b"authorization", b"Bearer   ")]) is None


@pytest.fixture
def loose_umask():
    import os

    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_state_dir_it_creates_is_0700_whatever_the_umask(tmp_path, loose_umask):
    load_or_create_secret(tmp_path / "a" / "state")
    assert _mode(tmp_path / "a" / "state") == 0o700


def test_the_default_state_dir_is_tightened_a_chosen_one_is_not(tmp_path, monkeypatch, loose_umask):
    from proxy.config import default_state_dir

    monkeypatch.delenv("PREFIXGATE_HOME")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    default = default_state_dir()
    default.mkdir(parents=True, mode=0o755)  # as releases before the fix left it
    default.chmod(0o755)
    TenantHasher.for_state_dir(default)
    assert _mode(default) == 0o700

    chosen = tmp_path / "home"
    chosen.mkdir()
    chosen.chmod(0o750)
    monkeypatch.setenv("PREFIXGATE_HOME", str(chosen))
    TenantHasher.for_state_dir(chosen)
    assert _mode(chosen) == 0o750 and _mode(chosen / SECRET_FILE) == 0o600


def test_the_app_leaves_the_state_dir_0700_and_its_ledger_0600(tmp_path, monkeypatch, loose_umask):
    from proxy.app import create_app
    from proxy.config import ProxyConfig, default_state_dir

    monkeypatch.delenv("PREFIXGATE_HOME")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    app = create_app(ProxyConfig())
    app.state.gate.money.ledger.close_sync()
    state = default_state_dir()
    assert _mode(state) == 0o700
    assert _mode(state / "ledger.sqlite") == 0o600 and _mode(state / SECRET_FILE) == 0o600


def test_gemini_keys_in_the_header_or_the_query_are_one_tenant(tmp_path):
    from proxy.tenant import query_key_of

    hasher = TenantHasher(b"s" * 32)
    one = hasher.tenant_of([(b"x-goog-api-key", b"AIza-one")])
    assert one == hasher.tenant_of([], b"alt=sse&key=AIza-one") == hasher.tenant_of([], b"key=AIza%2Done")
    assert (
        one != hasher.tenant_of([], b"key=AIza-two")
        and hasher.tenant_of([], b"monkey=AIza-one") == "anonymous"
    )
    assert hasher.tenant_of([(b"x-goog-api-key", b"AIza-one")], b"key=other") == one  # the header wins
    assert query_key_of(b"key=&key=k2") == b"k2" and query_key_of(b"alt=sse") is None
