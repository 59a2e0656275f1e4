"""docs/cli.md's option reference, from the commands themselves: every option of every command with the default
`--help` shows. tests/test_cli_docs.py compares the two; this prints the section afresh.

    python -m logdoctor.app.clidoc
"""

from __future__ import annotations

import click

from logdoctor.app.cli import main


def option_cell(param: click.Parameter) -> str:
    """How docs/cli.md names an option: every spelling, as `--help` lists them (`-o, --output`)."""
    names = ", ".join(param.opts)
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    return names


def shown_default(param: click.Parameter, ctx: click.Context) -> str:
    """The default as `--help` shows it (`[default: X]`), or "" where it shows none."""
    if not isinstance(param, click.Option):
        return ""
    extra = param.get_help_extra(ctx)
    return str(extra.get("default", "")).removeprefix("(").removesuffix(")")


def command_paths(group: click.Group, ctx: click.Context) -> list[tuple[str, click.Command, click.Context]]:
    """Every command under `group` (loaded), with its full name and a context to read its help in."""
    out: list[tuple[str, click.Command, click.Context]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, info_name=name, parent=ctx)
        out.append((sub.command_path, command, sub))
        if isinstance(command, click.Group):
            out.extend(command_paths(command, sub))
    return out


def option_rows(command: click.Command, ctx: click.Context) -> list[tuple[str, str]]:
    return [
        (option_cell(param), shown_default(param, ctx))
        for param in command.get_params(ctx)
        if isinstance(param, click.Option) and not param.hidden and "--help" not in param.opts
    ]


def option_reference() -> str:
    """The `## Option reference` section of docs/cli.md, from the commands themselves:
    `python -m logdoctor.app.clidoc` prints it."""
    root = click.Context(main, info_name="logdoctor")
    lines: list[str] = []
    for path, command, ctx in [("logdoctor", main, root), *command_paths(main, root)]:
        rows = option_rows(command, ctx)
        if not rows:
            continue
        lines += ["", f"### `{path}`", "", "| option | default |", "|---|---|"]
        lines += [f"| `{names}` | {f'`{default}`' if default else '-'} |" for names, default in rows]
    return "\n".join(lines).lstrip("\n") + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(option_reference(), end="")
