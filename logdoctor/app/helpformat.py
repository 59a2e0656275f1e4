"""`--help` of a command, grouped: what it does, its examples, its options in sections (input, output, rules,
SSH, URL and log-store targets, the rest), then its exit codes.

    logdoctor diagnose --help

The sections are found by each option's long name, so a new command's options fall into them as they are
named; an option none names is listed under "Other options".
"""

from __future__ import annotations

import click

# (heading, long option names), in the order shown
SECTIONS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "Input",
        frozenset(
            {
                "--engine",
                "--all-runs",
                "--hosts",
                "--interval",
                "--max-read",
                "--max-gzip-ratio",
                "--input-timeout",
                "--max-seconds",
                "--gpu",
                "--hardware",
                "--baseline",
                "--candidate",
                "--baseline-engine",
                "--candidate-engine",
                "--runs",
            }
        ),
    ),
    (
        "Output",
        frozenset(
            {
                "--format",
                "--output",
                "--fail-on",
                "--verbose",
                "--explain",
                "--all",
                "--explain-detection",
                "--show-unparsed",
            }
        ),
    ),
    (
        "Rules",
        frozenset({"--rules", "--no-builtin-rules", "--advisories", "--config", "--samples", "--update", "--test"}),
    ),
    (
        "SSH: host targets (docs/ssh.md)",
        frozenset(
            {
                "--ssh-config",
                "--identity",
                "--known-hosts",
                "--timeout",
                "--read-timeout",
                "--log",
                "--sudo",
                "--save",
                "--max-bytes",
                "--accept-new",
                "--jobs",
            }
        ),
    ),
    (
        "URL and log-store targets (docs/sources.md)",
        frozenset(
            {
                "--selector",
                "--since",
                "--until",
                "--step",
                "--group-by",
                "--bearer-token-env",
                "--bearer-token-file",
                "--where",
                "--time-column",
                "--body-column",
                "--service-column",
                "--attributes-column",
                "--identity-attribute",
                "--clickhouse-user",
                "--clickhouse-password-file",
                "--clickhouse-ca-file",
                "--max-rows",
            }
        ),
    ),
)
OTHER = "Other options"

EXIT_CODES: dict[str, tuple[tuple[str, str], ...]] = {
    "": (
        ("0", "no finding at or above --fail-on"),
        ("1", "a finding at or above --fail-on"),
        ("2", "usage or input error: a missing or unreadable path, not a log, a bad rule file"),
        ("3", "collection error: a host, URL or log store could not be read, or sent part of it"),
        ("4", "internal error: a bug (--debug shows the traceback)"),
        ("130", "interrupted (Ctrl-C)"),
    ),
    "parse": (
        ("0", "the events were printed"),
        ("2", "usage or input error: a missing or unreadable path, a read cap reached"),
        ("4", "internal error: a bug (--debug shows the traceback)"),
        ("130", "interrupted (Ctrl-C)"),
    ),
    "test": (
        ("0", "every case, golden file and sample passed"),
        ("1", "a case, golden file or sample failed"),
        ("2", "usage error or a bad test file"),
        ("4", "internal error: a bug (--debug shows the traceback)"),
    ),
    "watch": (
        ("0", "ended by Ctrl-C or SIGTERM, or stdin ended"),
        ("2", "usage or input error: a directory, a bad rule file"),
        ("3", "a host could not be followed (connection, host key, authentication, path)"),
        ("4", "internal error: a bug (--debug shows the traceback)"),
    ),
}


def long_name(param: click.Parameter) -> str:
    names = [*param.opts, *param.secondary_opts]
    return next((name for name in names if name.startswith("--")), names[0] if names else "")


def section_of(param: click.Parameter) -> str:
    name = long_name(param)
    return next((heading for heading, names in SECTIONS if name in names), OTHER)


def format_command_help(command: click.Command, ctx: click.Context, formatter: click.HelpFormatter) -> None:
    """click's layout (usage, help, options, epilog) rearranged: usage, help, the examples (the epilog), the
    options in sections, the exit codes."""
    command.format_usage(ctx, formatter)
    command.format_help_text(ctx, formatter)
    command.format_epilog(ctx, formatter)
    groups: dict[str, list[tuple[str, str]]] = {}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is not None:
            groups.setdefault(section_of(param), []).append(record)
    for heading in [*(h for h, _ in SECTIONS), OTHER]:
        if groups.get(heading):
            with formatter.section(heading):
                formatter.write_dl(groups[heading])
    codes = EXIT_CODES.get(command.name or "", EXIT_CODES[""])
    with formatter.section("Exit codes (docs/cli.md)"):
        formatter.write_dl(list(codes))
