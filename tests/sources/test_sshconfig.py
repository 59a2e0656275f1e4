"""ssh config: Include expansion (which paramiko lacks) and resolution of a target."""

from __future__ import annotations

from pathlib import Path

import paramiko
import pytest

from logdoctor.errors import ConfigError
from logdoctor.sources.sshconfig import SshConfig, expand_includes, load_ssh_config, resolve


def config_from(path: Path, relative_to: Path) -> SshConfig:
    return SshConfig(
        user=paramiko.SSHConfig.from_text(expand_includes(path, relative_to=str(relative_to))),
        system=None,
        path=str(path),
    )


def test_include_relative_glob_and_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh" / "conf.d").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    (home / ".ssh" / "conf.d" / "20-b.conf").write_text("Host b\n    HostName 10.0.0.2\n")
    (home / ".ssh" / "conf.d" / "10-a.conf").write_text("Host a\n    HostName 10.0.0.1\n    Port 2201\n")
    (home / "extra.conf").write_text("Host c\n    User carol\n")
    main = home / ".ssh" / "config"
    main.write_text("Include conf.d/*.conf ~/extra.conf missing/*.conf\nHost *\n    User default\n")

    cfg = config_from(main, home / ".ssh")

    assert cfg.lookup("a")["hostname"] == "10.0.0.1" and cfg.lookup("a")["port"] == "2201"
    assert cfg.lookup("b")["hostname"] == "10.0.0.2"
    assert cfg.lookup("c")["user"] == "carol"
    assert cfg.lookup("a")["user"] == "default"
    assert cfg.aliases() == {"a", "b", "c"}


def test_include_restores_the_including_block(tmp_path: Path) -> None:
    (tmp_path / "inc.conf").write_text("Host other\n    User someone\n")
    main = tmp_path / "config"
    main.write_text("Host gpu\n    Include inc.conf\n    Port 2222\n")
    cfg = config_from(main, tmp_path)
    assert cfg.lookup("gpu").get("port") == "2222"
    assert "port" not in cfg.lookup("other")


def test_include_loop_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("Include b\n")
    (tmp_path / "b").write_text("Include a\n")
    with pytest.raises(ConfigError, match="Include loop"):
        expand_includes(tmp_path / "a", relative_to=str(tmp_path))


def test_resolve_precedence_and_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / "config"
    path.write_text(
        """Host kpro5
    HostName 192.0.2.5
    User ops
    Port 2200
    IdentityFile ~/.ssh/gpu
    IdentityFile ~/.ssh/gpu2
    IdentitiesOnly yes
    ProxyJump bastion,admin@hop2:2022
    HashKnownHosts yes
    UserKnownHostsFile ~/kh
    ConnectTimeout 7
    Compression yes
Host *
    IdentityAgent none
"""
    )
    cfg = load_ssh_config(str(path))
    host = resolve("kpro5", cfg)
    assert (host.hostname, host.user, host.port) == ("192.0.2.5", "ops", 2200)
    assert host.identity_files == (f"{tmp_path}/.ssh/gpu", f"{tmp_path}/.ssh/gpu2")
    assert host.identities_only and host.hash_known_hosts and host.compression and not host.use_agent
    assert host.proxy_jump == ("bastion", "admin@hop2:2022")
    assert host.user_known_hosts == (f"{tmp_path}/kh",)
    assert host.connect_timeout == 7.0
    assert host.known_hosts_name == "[192.0.2.5]:2200"
    explicit = resolve("kpro5", cfg, user="root", port=22, identity_files=["/k"])
    assert (explicit.user, explicit.port, explicit.identity_files[0]) == ("root", 22, "/k")
    assert explicit.known_hosts_name == "192.0.2.5"
    plain = resolve("192.0.2.9", cfg)
    assert (plain.hostname, plain.port, plain.proxy_jump) == ("192.0.2.9", 22, ())


def test_system_config_fills_in_but_never_overrides() -> None:
    user = paramiko.SSHConfig.from_text("Host gpu\n    HostName 10.1.1.1\n")
    system = paramiko.SSHConfig.from_text("Host *\n    HashKnownHosts yes\n    HostName ignored\n    Port 2022\n")
    host = resolve("gpu", SshConfig(user=user, system=system, path=None))
    assert host.hostname == "10.1.1.1" and host.port == 2022 and host.hash_known_hosts


def test_missing_explicit_config_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_ssh_config(str(tmp_path / "nope"))
    assert load_ssh_config("/dev/null").lookup("x")["hostname"] == "x"  # `-F /dev/null` style
