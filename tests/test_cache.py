"""The verified cache on disk (logdoctor/cache.py) and the parsed-condition cache built on it: a stale, corrupt,
foreign or unwritable cache is ignored and rebuilt, and the rules load the same with it as without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logdoctor import cache as cache_module
from logdoctor.cache import VerifiedCache
from logdoctor.engine import conditioncache
from logdoctor.engine.conditioncache import decode, encode
from logdoctor.engine.conditions import parse_condition, parse_expression
from logdoctor.engine.rules import load_rules, rule_as_dict

ROOT = Path(__file__).resolve().parents[1]


def _fresh(directory: Path, key: str = "k1") -> VerifiedCache:
    return VerifiedCache("conditions", key, directory=directory)


def test_round_trip_and_every_kind_of_bad_file_reads_as_empty(tmp_path: Path) -> None:
    store = _fresh(tmp_path)
    store.put("condition\0x > 1", ["lit", 1.0])
    assert store.save()
    path = tmp_path / "conditions.json"
    assert _fresh(tmp_path).get("condition\0x > 1") == ["lit", 1.0]
    assert _fresh(tmp_path, key="k2").get("condition\0x > 1") is None  # stale: another logdoctor or grammar

    good = path.read_bytes()
    header, _, body = good.partition(b"\n")
    tampered = header + b"\n" + body.replace(b"1.0", b"2.0")  # the digest no longer matches the body
    path.write_bytes(tampered)
    assert _fresh(tmp_path).get("condition\0x > 1") is None
    path.write_bytes(good[: len(good) // 2])  # cut short
    assert _fresh(tmp_path).get("condition\0x > 1") is None
    path.write_bytes(b"\xff\x00not json at all")
    assert _fresh(tmp_path).get("condition\0x > 1") is None
    path.write_bytes(good)
    path.chmod(0o666)  # writable by others: someone else could have planted it
    assert _fresh(tmp_path).get("condition\0x > 1") is None
    path.chmod(0o600)
    assert _fresh(tmp_path).get("condition\0x > 1") == ["lit", 1.0]


def test_oversized_or_linked_cache_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _fresh(tmp_path)
    store.put("a", 1)
    store.save()
    monkeypatch.setattr(cache_module, "MAX_FILE_BYTES", 10)
    assert _fresh(tmp_path).get("a") is None
    monkeypatch.undo()
    target = tmp_path / "elsewhere.json"
    (tmp_path / "conditions.json").rename(target)
    (tmp_path / "conditions.json").symlink_to(target)
    assert _fresh(tmp_path).get("a") is None  # O_NOFOLLOW


def test_unwritable_directory_costs_the_cache_not_the_run(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    store = VerifiedCache("conditions", "k", directory=blocked / "logdoctor")
    store.put("a", 1)
    assert store.save() is False
    assert store.get("a") == 1  # still answers from memory


def test_every_builtin_condition_round_trips_through_the_encoding() -> None:
    for item in load_rules():
        nodes = [item.when, item.ruled_out_when, item.metric]
        nodes += [node for parts in item.templates.values() for _, node, _ in parts]
        for node in nodes:
            if node is not None:
                assert decode(json.loads(json.dumps(encode(node)))) == node


@pytest.mark.parametrize(
    "damaged",
    [
        ["lit", 1],  # an int: the grammar only makes floats
        ["fact", "x", 0],
        ["cmp", "~=", ["lit", 1.0], ["lit", 2.0]],
        ["agg", "eval", ["fact", "x", 1]],
        ["agg", "mean", ["lit", 1.0]],
        ["bool", "and", "not a list"],
        ["unknown-tag"],
        "not a tree",
    ],
)
def test_decode_refuses_what_encode_never_writes(damaged: object) -> None:
    with pytest.raises(ValueError):
        decode(damaged)


def test_a_damaged_entry_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = VerifiedCache("conditions", "k", directory=tmp_path)
    monkeypatch.setattr(conditioncache, "_caches", [store])
    text = "mean(spec.acceptance_length) < 1.3 and spec.num_tokens >= 2"
    expected = parse_condition(text)
    store.put(f"condition\0{text}", ["cmp", "~=", ["lit", 1.0]])  # does not decode
    assert parse_condition(text) == expected
    assert store.get(f"condition\0{text}") == encode(expected)  # parsed again and put back
    assert parse_expression("spec.num_tokens * 2") == decode(store.get("expression\0spec.num_tokens * 2"))


def _load_in_child(cache_home: Path, *extra: str) -> str:
    """`rules list` style dump of the built-in rules, loaded in a fresh process with this cache directory."""
    code = (
        "import json, sys\n"
        "from logdoctor.engine.rules import load_rules, rule_as_dict\n"
        "from logdoctor.engine.conditioncache import encode\n"
        "out = []\n"
        "for r in load_rules():\n"
        "    parts = {k: [(t, encode(n) if n is not None else None, s) for t, n, s in v] for k, v in r.templates.items()}\n"
        "    out.append([rule_as_dict(r), encode(r.when), r.ruled_out_when and encode(r.ruled_out_when), parts])\n"
        "print(json.dumps(out, sort_keys=True))\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    for item in extra:
        key, _, value = item.partition("=")
        env[key] = value
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_rules_load_identically_cold_warm_corrupt_and_off(tmp_path: Path) -> None:
    home = tmp_path / "cache"
    cold = _load_in_child(home)  # parses with pyparsing and writes the cache
    path = home / "logdoctor" / "conditions.json"
    assert path.is_file()
    warm = _load_in_child(home)
    assert warm == cold
    (snapshot,) = (home / "logdoctor").glob("rule-set-*.pickle")  # the warm start read the rule set whole, from here
    snapshot.unlink()  # so that the next start loads the files, through the parsed-condition cache
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"cmp"', b'"bool"', 1))  # corrupt: the digest fails, so it is rebuilt
    assert _load_in_child(home) == cold
    assert path.read_bytes() == data  # rebuilt to the same content
    off = _load_in_child(tmp_path / "unused", "LOGDOCTOR_NO_CACHE=1")
    assert off == cold and not (tmp_path / "unused").exists()
    assert rule_as_dict(load_rules()[0])  # and in this process too


def test_a_snapshot_is_used_only_as_written_for_its_key(tmp_path: Path) -> None:
    """A snapshot (logdoctor/cache.py, `Snapshot`) gives back what was saved under the same key; another key, a
    changed byte, a file others may write or a class it is not allowed to make read as no snapshot."""
    from logdoctor.cache import Snapshot
    from logdoctor.engine.rules import SNAPSHOT_CLASSES, LoadedRule

    rules = load_rules()
    store = Snapshot("rule-set", SNAPSHOT_CLASSES, directory=tmp_path)
    assert store.save("k1", rules)
    back = store.load("k1")
    assert isinstance(back, list) and all(isinstance(item, LoadedRule) for item in back)
    assert [rule_as_dict(r) for r in back] == [rule_as_dict(r) for r in rules]
    assert [encode(r.when) for r in back] == [encode(r.when) for r in rules]
    assert [r.templates for r in back] == [r.templates for r in rules]
    assert store.load("k2") is None  # another rule set or logdoctor
    path = tmp_path / "rule-set.pickle"
    good = path.read_bytes()
    path.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))  # the digest no longer matches
    assert store.load("k1") is None
    path.write_bytes(good)
    path.chmod(0o666)
    assert store.load("k1") is None  # others may write it
    path.chmod(0o600)
    assert store.load("k1") is not None
    assert Snapshot("rule-set", (), directory=tmp_path).load("k1") is None  # a class it may not make
    assert store.save("k1", [os.system])  # a function named in the file is refused, never called
    assert store.load("k1") is None


def test_an_edited_rule_file_is_loaded_afresh(tmp_path: Path) -> None:
    """The snapshot's key covers every file of the set: an edited rule is read from its file."""
    from logdoctor.engine.loading import snapshot_key
    from logdoctor.engine.rules import builtin_rules_dir, rule_files

    directory = builtin_rules_dir()
    files = rule_files(directory)
    copy = tmp_path / "rules"
    for path in files:
        target = copy / path.relative_to(directory)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    before = snapshot_key("rule", copy)
    assert snapshot_key("rule", copy) == before
    edited = rule_files(copy)[0]
    edited.write_text(edited.read_text(encoding="utf-8").replace("impact:", "impact:  ", 1), encoding="utf-8")
    assert snapshot_key("rule", copy) != before
