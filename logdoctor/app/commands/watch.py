"""`logdoctor watch`: follow a growing log, locally or over SSH, and keep its diagnosis current.

logdoctor watch vllm-serve.log
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from logdoctor.app.cli import LogdoctorCommand, examples
from logdoctor.app.commands.common import (
    advisories_option,
    engine_option,
    handle_errors,
    load_rule_set,
    rules_options,
    ssh_option_list,
    stderr_console,
    stdout_console,
)
from logdoctor.app.options import option_bundle

if TYPE_CHECKING:
    from logdoctor.app.fleet import HostOptions


def _watch_host_options(values: dict[str, Any]) -> HostOptions:
    from logdoctor.app.watch import watch_host_options

    return watch_host_options(**values)


# The SSH options a follow can honour: how to connect and which log. --save, --jobs, --max-bytes and --read-timeout
# bound a collection that ends; a follow of one host has no end, so they are not offered.
WATCH_SSH = ("--ssh-config", "--identity", "--known-hosts", "--timeout", "--log", "--sudo", "--accept-new")
watch_ssh_options = option_bundle("ssh", ssh_option_list(WATCH_SSH), _watch_host_options)


@click.command(
    cls=LogdoctorCommand,
    epilog=examples(
        "logdoctor watch vllm-serve.log",
        "logdoctor watch vllm-serve.log --interval 10 | tee changes.txt",
        "docker logs -f vllm 2>&1 | logdoctor watch -",
        "logdoctor watch root@kpro5",
        "logdoctor watch root@kpro5:/var/log/vllm/serve.log",
    ),
)
@click.argument("target", metavar="PATH | HOST[:REMOTE_PATH] | -")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=2.0,
    show_default=True,
    help="Seconds between diagnoses while new lines arrive.",
)
@engine_option
@rules_options
@advisories_option
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help="Suppressions file.")
@click.option("--verbose", "-v", is_flag=True, help="The live view lists every could-not-check item.")
@watch_ssh_options
@handle_errors
def watch(
    target: str,
    interval: float,
    engine: str,
    rule_dirs: tuple[Path, ...],
    no_builtin_rules: bool,
    config_path: Path | None,
    verbose: bool,
    ssh: HostOptions,
) -> None:
    """Follow a growing log (tail -F, through rotation) and keep its diagnosis current.

    A missing file is waited for. The view is the current server run alone (a restart in the file, or a
    rotation to a file that begins with a server start, begins a new one; earlier runs get a line each).
    On a terminal it is redrawn in place, cut to the terminal (the verdict and a line per cause first);
    piped, one line is printed for each change of the verdict or the ranked causes. Ctrl-C or SIGTERM
    ends it (exit 0). A host is followed over SSH
    (`tail -F` on the host, reconnecting when the connection drops): its server's log as `diagnose HOST`
    finds it, or the path after `HOST:` or --log (docs/cli.md)."""
    from logdoctor.app.watch import run_watch
    from logdoctor.engine.suppress import load_suppressions

    run_watch(
        target,
        load_rule_set(rule_dirs, no_builtin_rules),
        engine=engine,
        suppressions=load_suppressions(config_path),
        interval=interval,
        console=stdout_console(),
        err=stderr_console(),
        verbose=verbose,
        ssh=ssh,
    )
