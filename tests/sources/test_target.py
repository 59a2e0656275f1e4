"""Targets: `[user@]host[:port]`, `ssh://user@host:port`, ssh-config aliases; host or file?"""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.errors import InputError
from logdoctor.sources.target import Target, looks_like_host, parse_target


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("kpro5", Target("kpro5", None, None, "kpro5")),
        ("root@kpro5", Target("kpro5", "root", None, "root@kpro5")),
        ("root@10.0.0.7:2222", Target("10.0.0.7", "root", 2222, "root@10.0.0.7:2222")),
        ("ssh://ops@GPU-Node:2200", Target("GPU-Node", "ops", 2200, "ops@GPU-Node:2200")),
        ("ssh://gpu.example.com/", Target("gpu.example.com", None, None, "gpu.example.com")),
        ("[fe80::1]:22", Target("fe80::1", None, 22, "[fe80::1]:22")),
        ("me@[::1]", Target("::1", "me", None, "me@[::1]")),
        ("::1", Target("::1", None, None, "::1")),
        ("ssh://me@[::1]:2022", Target("::1", "me", 2022, "me@[::1]:2022")),
    ],
)
def test_parse_target(arg: str, expected: Target) -> None:
    assert parse_target(arg) == expected


@pytest.mark.parametrize(
    "arg",
    [
        "root@",
        "@host",
        "host:0",
        "host:99999",
        "host:ssh",
        "-oProxyCommand=x",
        "a b",
        "h;rm",
        "ssh://h/path",
        "[::1",
        "x@$(id)",
    ],
)
def test_parse_target_rejects(arg: str) -> None:
    with pytest.raises(InputError):
        parse_target(arg)


def test_looks_like_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kpro5").write_text("a local file named like a host")
    assert not looks_like_host("kpro5")  # an existing path always wins
    assert not looks_like_host("-")
    assert looks_like_host("root@kpro6")
    assert looks_like_host("gpu-node-3")
    assert looks_like_host("10.0.0.7") and looks_like_host("h:2222") and looks_like_host("ssh://h")
    assert looks_like_host("my_alias", aliases={"my_alias"})
    assert not looks_like_host("my_alias")  # not a valid host name, not an alias: a (missing) file
    assert not looks_like_host("vllm-serve.log")  # missing, but clearly meant as a file
    assert not looks_like_host("logs/vllm.log.gz")
    assert not looks_like_host("server.out")
