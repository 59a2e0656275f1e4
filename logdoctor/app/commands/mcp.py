"""`logdoctor mcp`: serve the diagnosis to agents over the Model Context Protocol (stdio; docs/agents.md).

logdoctor mcp --known-hosts ~/.ssh/known_hosts
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from logdoctor.app.cli import LogdoctorCommand, examples
from logdoctor.app.commands.common import handle_errors
from logdoctor.app.options import parse_size, read_limit_options
from logdoctor.errors import UsageError

if TYPE_CHECKING:
    from logdoctor.sources.limits import ReadLimits


@click.command(
    cls=LogdoctorCommand,
    epilog=examples(
        "logdoctor mcp",
        "logdoctor mcp --ssh-config ~/.ssh/config --known-hosts ~/.ssh/known_hosts",
        "claude mcp add logdoctor -- logdoctor mcp",
    ),
)
@click.option("--ssh-config", type=click.Path(dir_okay=False), help="ssh config file for host targets.")
@click.option("--known-hosts", type=click.Path(dir_okay=False), help="known_hosts file (default ~/.ssh/known_hosts).")
@click.option(
    "-i", "--identity", "identities", multiple=True, type=click.Path(dir_okay=False), help="Private key (repeatable)."
)
@click.option(
    "--accept-new", is_flag=True, help="Trust and record an unknown host key (never a changed one), on every call."
)
@click.option("--sudo", is_flag=True, help="Read root-only logs on hosts with `sudo -n`.")
@click.option("--timeout", type=click.FloatRange(min=0.1), help="Seconds to connect and log in to a host.")
@click.option("--read-timeout", type=click.FloatRange(min=0.1), help="Seconds one remote log read may take.")
@click.option(
    "--max-bytes",
    type=str,
    metavar="SIZE",
    callback=lambda c, p, v: None if v is None else parse_size(c, p, v),
    help="Most bytes of log lines to transfer from one host (default 64M).",
)
@read_limit_options
@handle_errors
def mcp(
    ssh_config: str | None,
    known_hosts: str | None,
    identities: tuple[str, ...],
    accept_new: bool,
    sudo: bool,
    timeout: float | None,
    read_timeout: float | None,
    max_bytes: int | None,
    limits: ReadLimits,
) -> None:
    """Serve diagnose, diff and parse to agents over the Model Context Protocol (stdio).

    Tools: diagnose, diff, parse (paged), explain, causes, gpus. Each runs as the CLI does, with the
    options given here for every call: the same caps, redaction and known_hosts policy. Needs the
    mcp extra (pip install 'logdoctor[mcp]')."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise UsageError("logdoctor mcp needs the MCP SDK: pip install 'logdoctor[mcp]'") from None
    from logdoctor.app.mcp import ServerPolicy, serve

    serve(
        ServerPolicy(
            limits=limits,
            ssh_config=ssh_config,
            known_hosts=known_hosts,
            identities=identities,
            accept_new=accept_new,
            sudo=sudo,
            timeout=timeout,
            read_timeout=read_timeout,
            max_bytes=max_bytes,
        )
    )
