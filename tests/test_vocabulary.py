"""logdoctor/vocabulary.py: one list of engine-neutral settings, spelled by each engine's package."""

from __future__ import annotations

from logdoctor.facts import FACTS
from logdoctor.registry import REGISTRY, Spelling
from logdoctor.vocabulary import DIFF_ROWS, GROUPS, SETTINGS


def test_settings_read_declared_facts() -> None:
    for setting in SETTINGS.values():
        for name in (*setting.facts, *([setting.detail] if setting.detail else [])):
            assert name in FACTS, (setting.key, name)
    assert len({s.fact for s in SETTINGS.values()}) == len(SETTINGS)  # one setting a fact


def test_diff_rows_are_the_settings_with_a_group() -> None:
    assert [s.key for s in DIFF_ROWS] == [s.key for s in SETTINGS.values() if s.group is not None]
    assert set(GROUPS) == {s.group for s in DIFF_ROWS}


def test_engines_spell_only_settings_of_the_vocabulary() -> None:
    for spec in REGISTRY.specs():
        assert sorted(set(spec.flags) - set(SETTINGS)) == [], spec.name
        assert sorted(set(spec.config_facts) - set(FACTS)) == [], spec.name


def test_composite_settings_have_a_port_on_every_engine_that_spells_them() -> None:
    for spec in REGISTRY.specs():
        if any(SETTINGS[name].composite for name in spec.flags):
            assert spec.port is not None, spec.name


def test_spelling_key_and_render() -> None:
    assert Spelling("--tp-size", config_keys=("tp_size",)).key == "tp_size"
    assert Spelling("--tp-size", config_keys=("tp_size",)).render(2) == "--tp-size 2"
    assert Spelling("--x", "--x={value}", shown_as="x line").key == "x line"
    assert Spelling("--x", "--x={value}").render(3) == "--x=3"
