"""The rule files' YAML kept in the start-up cache (logdoctor/userfile.py YamlDataCache)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from logdoctor.engine import rules
from logdoctor.engine.rules import load_rules
from logdoctor.errors import RuleError
from logdoctor.userfile import YamlDataCache, load_yaml

GOOD = """\
id: my-rule
cause: kv-cache-pressure
title: t
engines: [vllm]
requires: [kv.usage]
when: "max(kv.usage) > 0.9"
impact: 50
fix:
  vllm: ["--b", "--a"]
  sglang: ["--c"]
explain: "usage {max(kv.usage) * 100:.0f}%"
"""


def _rule_dir(tmp_path: Path, body: str) -> tuple[Path, Path]:
    directory = tmp_path / "rules"
    path = directory / "kv-cache-pressure" / "my-rule.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(body, encoding="utf-8")
    return directory, path


def test_a_clean_file_comes_back_from_the_cache_as_parsed_in_its_order(tmp_path: Path) -> None:
    cache = YamlDataCache(f"test-{tmp_path.name}-a")
    data, tree = cache.load("f.yaml", GOOD)
    assert tree is not None
    cache.keep("f.yaml")
    cache.save()
    again = YamlDataCache(cache.name)  # a new process: the file on disk
    cached, no_tree = again.load("f.yaml", GOOD)
    assert no_tree is None
    assert cached == data
    assert list(cached) == list(data) and list(cached["fix"]) == ["vllm", "sglang"]
    edited, edited_tree = again.load("f.yaml", GOOD.replace("impact: 50", "impact: 60"))
    assert edited_tree is not None and edited["impact"] == 60  # another text: parsed


def test_data_json_would_change_is_never_kept(tmp_path: Path) -> None:
    cache = YamlDataCache(f"test-{tmp_path.name}-b")
    text = "since: 2026-12-01\n1: one\n"
    data, _ = cache.load("d.yaml", text)
    cache.keep("d.yaml")
    cache.save()
    assert YamlDataCache(cache.name).load("d.yaml", text)[1] is not None  # parsed again, not from the cache
    assert data == load_yaml(text)[0]


def test_a_cached_file_with_a_problem_is_parsed_again_for_its_line_and_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = GOOD.replace('when: "max(kv.usage) > 0.9"', 'when: "max(kv.usag) > 0.9"')
    directory, path = _rule_dir(tmp_path, bad)
    seeded = YamlDataCache(f"test-{tmp_path.name}-c")
    seeded._store().put(seeded._key(str(path), bad), json.dumps(load_yaml(bad)[0]))  # as if it had loaded cleanly
    monkeypatch.setattr(rules, "RULE_YAML", seeded)
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    assert "my-rule.yaml:6:12: when: unknown fact 'kv.usag' (did you mean 'kv.usage'?)" in str(info.value)
    assert str(path) in seeded._forgotten


def test_a_warm_start_imports_no_yaml(tmp_path: Path) -> None:
    probe = "import sys\nfrom logdoctor.engine.rules import load_rules\nload_rules()\nprint('yaml' in sys.modules)\n"
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
    second = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert (first.stdout.strip(), second.stdout.strip()) == ("True", "False")


# constructed documents: what PyYAML makes of the shapes libyaml's nodes are built from directly, and of those left
# to its constructor (an alias, a merge key, a key that is not a scalar, tags of other types)
PARITY = [
    GOOD,
    "a: &x [1, 2]\nb: *x\n",
    "base: &b {k: 1}\nd:\n  <<: *b\n  j: 2\n",
    "a: &s text\nb: *s\n",
    "d: 2027-02-03\nt: 2001-12-14t21:59:43.10-05:00\n",
    "b: !!binary aGVsbG8=\n",
    "s: !!set {a, b}\n",
    "o: !!omap [a: 1, b: 2]\n",
    "a: 1\na: 2\n",
    "n: ~\ni: 0x1F\nj: 0o17\nk: 1_000\nf: .inf\ny: yes\nno: off\n1: one\n2.5: two\n",
    "- !!str 1\n- !!int '7'\n- !!float 1\n- !!map {a: 1}\n- [x, {y: z}]\n",
    "a: |\n  line\n  two\nb: >\n  folded\n  text\n",
    "plain\n",
]


@pytest.mark.parametrize("text", PARITY)
def test_a_document_loads_as_yaml_safe_load_loads_it(text: str) -> None:
    import yaml

    data, _ = load_yaml(text, compose=True)
    assert repr(data) == repr(yaml.safe_load(text))


def test_every_builtin_rule_and_advisory_loads_as_yaml_safe_load_loads_it() -> None:
    import yaml

    from logdoctor.engine.advisories import advisory_files, builtin_advisories_dir

    files = rules.rule_files(rules.builtin_rules_dir()) + advisory_files(builtin_advisories_dir())
    assert len(files) > 100
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert repr(load_yaml(text)[0]) == repr(yaml.safe_load(text)), path
