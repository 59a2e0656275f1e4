"""`logdoctor rules`: list, show and check rules, and list the facts their conditions may use.

logdoctor rules show spec-low-acceptance
"""

from __future__ import annotations

from pathlib import Path

import click

from logdoctor.app.cli import examples
from logdoctor.app.commands.common import handle_errors, load_rule_set, rules_options, stdout_console
from logdoctor.errors import RuleError, UsageError


@click.group(
    epilog=examples("logdoctor rules list", "logdoctor rules show spec-net-loss", "logdoctor rules check my-rules/"),
    no_args_is_help=True,
)
def rules() -> None:
    """List, show and check rules."""


@rules.command("list", epilog=examples("logdoctor rules list --rules my-rules/"))
@rules_options
@handle_errors
def rules_list(rule_dirs: tuple[Path, ...], no_builtin_rules: bool) -> None:
    """List every rule with its cause and engines."""
    from rich.table import Table
    from rich.text import Text

    from logdoctor.sanitize import clean_text

    loaded = load_rule_set(rule_dirs, no_builtin_rules)
    # Each cause a heading row and its rules under it: an id and a cause side by side took 70 columns, and an
    # 80-column terminal cut both and collapsed the rest to `...`. Only the title wraps.
    table = Table(show_lines=False, box=None, pad_edge=False, show_edge=False)
    for column in ("cause / rule", "engines", "status", "title"):
        table.add_column(column, no_wrap=column != "title", overflow="fold")
    cause = None
    for item in sorted(loaded, key=lambda r: (r.rule.cause, r.id)):
        r = item.rule
        if r.cause != cause:
            cause = r.cause
            table.add_row(Text(clean_text(cause), style="bold"))
        table.add_row(*(Text(clean_text(cell)) for cell in ("  " + r.id, ",".join(r.engines), r.status, r.title)))
    stdout_console().print(table)


@rules.command(
    "show",
    epilog=examples(
        "logdoctor rules show low-acceptance   # a rule", "logdoctor rules show spec-low-acceptance   # a cause"
    ),
)
@click.argument("rule_id", metavar="RULE_ID | CAUSE")
@rules_options
@handle_errors
def rules_show(rule_id: str, rule_dirs: tuple[Path, ...], no_builtin_rules: bool) -> None:
    """Print one rule's file, or list a cause's rules."""
    import difflib

    from logdoctor.sanitize import clean_text, one_line

    loaded = load_rule_set(rule_dirs, no_builtin_rules)
    for item in loaded:
        if item.id == rule_id:
            click.echo(f"# {one_line(item.path)}")
            click.echo(clean_text(Path(item.path).read_text(encoding="utf-8")), nl=False)
            return
    of_cause = sorted((item for item in loaded if item.rule.cause == rule_id), key=lambda item: item.id)
    if of_cause:
        click.echo(f"{one_line(rule_id)} is a cause; its rules (`logdoctor rules show RULE_ID` prints one):")
        width = max(len(one_line(item.id)) for item in of_cause)
        for item in of_cause:
            click.echo(f"  {one_line(item.id):<{width}}  {one_line(clean_text(item.rule.title))}")
        return
    names = sorted({item.id for item in loaded} | {item.rule.cause for item in loaded})
    close = difflib.get_close_matches(rule_id, names, n=3, cutoff=0.6)
    hint = f" (did you mean {' or '.join(close)}?)" if close else " (see `logdoctor rules list`)"
    raise UsageError(f"no rule or cause '{one_line(rule_id)}'{hint}")


@rules.command("facts", epilog=examples("logdoctor rules facts | grep spec."))
def rules_facts() -> None:
    """List every fact a rule condition may use, with its kind."""
    from rich.table import Table

    from logdoctor.facts import FACTS

    table = Table(show_lines=False)
    for column in ("fact", "kind", "meaning"):
        table.add_column(column, no_wrap=column != "meaning")
    for name, spec in FACTS.items():
        table.add_row(name, spec.kind, spec.description)
    stdout_console().print(table)


@rules.command("check", epilog=examples("logdoctor rules check", "logdoctor rules check my-rules/ --no-builtin-rules"))
@click.argument("directories", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--no-builtin-rules", is_flag=True, help="Check DIRECTORIES alone (a pack that replaces the built-in set)."
)
@handle_errors
def rules_check(directories: tuple[Path, ...], no_builtin_rules: bool) -> None:
    """Validate rule files (schema, ids and causes from the paths, unique ids, known facts, samples fire).

    With no DIRECTORIES, checks the built-in rule set; DIRECTORIES are checked against it (no id may
    repeat a built-in one) and only their own samples run."""
    from logdoctor.engine.rules import builtin_rules_dir, load_rules
    from logdoctor.testing.samples import check_samples

    builtin = builtin_rules_dir().resolve()
    against_builtin = not no_builtin_rules and all(d.resolve() != builtin for d in directories)
    loaded = load_rules(directories, builtin=not directories or against_builtin)
    checked = [item for item in loaded if not directories or not item.builtin]
    problems = check_samples(checked)
    if problems:
        raise RuleError(f"{len(problems)} problem(s) in rule samples:\n  " + "\n  ".join(problems))
    click.echo(f"{len(checked)} rules OK")
