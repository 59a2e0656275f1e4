"""The registry's lazily compiled regexes (logdoctor/registry.py, LazyPattern): the same answers as re.compile."""

from __future__ import annotations

import copy
import importlib
import pickle
import re
import sys
from pathlib import Path

import pytest

from logdoctor.registry import REGISTRY, LazyPattern, is_pattern, lazy_regexes


def test_engine_module_regexes_are_lazy_and_behave_as_compiled() -> None:
    REGISTRY.specs()
    common = sys.modules["logdoctor.engines.vllm.common"]
    lazy = [value for value in vars(common).values() if isinstance(value, LazyPattern)]
    if not lazy:  # imported before the registry (another test did): compiled at once, as before
        return
    for pattern in lazy:
        assert isinstance(pattern.pattern, str)
        real = re.compile(pattern.pattern, pattern._flags)
        assert is_pattern(pattern)
        assert pattern.pattern == real.pattern
        text = "Ran 12.5 s, tokens: 300, 'flash_attn' x=1"
        assert [m.span() for m in pattern.finditer(text)] == [m.span() for m in real.finditer(text)]
        assert pattern.flags == real.flags and pattern.groupindex == real.groupindex
        assert pattern == real and hash(pattern) == hash(real)
        assert pickle.loads(pickle.dumps(pattern)) == real  # noqa: S301 (our own bytes)
        assert copy.deepcopy(pattern) is pattern


def test_only_the_engine_modules_get_lazy_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fake_engine").mkdir()
    (tmp_path / "fake_engine" / "__init__.py").write_text("")
    (tmp_path / "fake_engine" / "lines.py").write_text("import re\nA = re.compile(r'(?P<n>\\d+) ms', re.I)\n")
    (tmp_path / "fake_engine_helper.py").write_text("import re\nB = re.compile(r'\\d+')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with lazy_regexes(["fake_engine"]):
        engine = importlib.import_module("fake_engine.lines")
        other = importlib.import_module("fake_engine_helper")
        inner = re.compile(r"x")  # this test module is not an engine module
    assert re.compile is not None and isinstance(re.compile("y"), re.Pattern)  # the real compile again
    assert isinstance(engine.A, LazyPattern) and isinstance(other.B, re.Pattern) and isinstance(inner, re.Pattern)
    assert engine.A.search("took 12 MS").group("n") == "12"
    assert engine.A.flags == re.compile(r"(?P<n>\d+) ms", re.I).flags
    # after its first use the pattern's methods are the compiled pattern's own
    assert engine.A.__dict__["search"].__self__ is engine.A.compiled()
    assert not is_pattern("text") and is_pattern(other.B)
    for name in ("fake_engine.lines", "fake_engine", "fake_engine_helper"):
        sys.modules.pop(name, None)


def test_the_table_describes_the_builtin_packages_as_they_are() -> None:
    """logdoctor/engines/registry_table.py, which lets the registry answer without importing a package, is what the
    packages say (regenerate it with `python -m logdoctor.engines.registry_table`)."""
    from logdoctor.engines.registry_table import TABLE
    from logdoctor.registry import BUILTIN, builtin_table

    assert list(TABLE) == list(BUILTIN)
    assert builtin_table() == TABLE


def test_keywords_lead_to_the_same_line_types_as_the_imported_packages() -> None:
    """The lazy keyword index offers a line the line types the index over every imported package offers, in order."""
    from logdoctor.parse.keywords import KeywordIndex

    lazy = KeywordIndex(registry=REGISTRY)
    full = KeywordIndex(REGISTRY.grammars())
    assert lazy.keywords == full.keywords
    for keyword in full.keywords:
        assert lazy.grammars_for(keyword) == full.grammars_for(keyword), keyword


def test_a_short_vllm_log_imports_no_other_engine(tmp_path: Path) -> None:
    """Only the packages whose keywords a log holds are imported: a vLLM log's parse leaves SGLang's and NCCL's line
    types unimported (a fresh process: this one may have imported them already)."""
    import subprocess

    log = tmp_path / "vllm.log"
    log.write_text(
        "INFO 05-08 14:02:05 [__init__.py:239] Automatically detected platform cuda.\n"
        "(APIServer pid=2961) INFO 05-08 14:02:24 [model.py:547] Resolved architecture: Qwen3ForCausalLM\n",
        encoding="utf-8",
    )
    program = (
        "import sys\n"
        "from logdoctor.parse.pipeline import EventStream\n"
        "events = list(EventStream('log', enumerate(open(sys.argv[1], encoding='utf-8').read().splitlines(), 1)))\n"
        "assert events, 'no events'\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith(('logdoctor.engines.', 'logdoctor.inputs.')))))\n"
    )
    done = subprocess.run([sys.executable, "-c", program, str(log)], capture_output=True, text=True, check=True)
    imported = set(done.stdout.split())
    assert "logdoctor.engines.vllm.model" in imported
    assert not {m for m in imported if m.startswith(("logdoctor.engines.sglang", "logdoctor.engines.nccl"))}
    assert not {m for m in imported if m.startswith("logdoctor.inputs.")}


def test_the_console_script_compiles_logdoctors_regexes_on_first_use(tmp_path: Path) -> None:
    """Under the console script (logdoctor/app/entry.py) a logdoctor module's top-level regex is a LazyPattern, and a
    diagnosis reads the same as the command group's run in this process, whose regexes were compiled at once."""
    import subprocess

    from click.testing import CliRunner

    from logdoctor.app.cli import main

    log = tmp_path / "vllm.log"
    log.write_text(
        "INFO 05-08 14:02:05 [__init__.py:239] Automatically detected platform cuda.\n"
        "(APIServer pid=2961) INFO 05-08 14:02:24 [model.py:547] Resolved architecture: Qwen3ForCausalLM\n",
        encoding="utf-8",
    )
    args = ["diagnose", str(log), "--format", "json", "--fail-on", "never"]
    program = (
        "import sys\n"
        "from logdoctor.app import entry\n"
        "sys.argv = ['logdoctor', *sys.argv[1:]]\n"
        "try:\n"
        "    entry.main()\n"
        "finally:\n"
        "    from logdoctor import redact\n"
        "    from logdoctor.registry import LazyPattern\n"
        "    assert isinstance(redact._PEM_BEGIN, LazyPattern), type(redact._PEM_BEGIN)\n"
    )
    done = subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == CliRunner().invoke(main, args).output
