"""The `logdoctor` console script: `logdoctor --version` alone is answered before click is imported (the
version is all it prints, as click's version option words it); everything else runs `logdoctor.app.cli`'s group,
with logdoctor's regexes compiled on first use.

    logdoctor --version      # logdoctor, version 0.1.0
"""

from __future__ import annotations

import sys

from logdoctor import __version__

VERSION_LINE = f"logdoctor, version {__version__}"  # click.version_option's "%(prog)s, version %(version)s"


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(VERSION_LINE + "\n")
        sys.stdout.flush()
        return
    from logdoctor.regexes import lazy_regexes

    # logdoctor's modules compile about 300 regexes as they are imported, and a short `diagnose` uses a few
    # dozen: each is compiled when first used (regexes.LazyPattern; docs/benchmarks.md, *Start-up*).
    with lazy_regexes(["logdoctor"]):
        from logdoctor.app.cli import main as group

        group()  # the program name from sys.argv[0], as the console script calling the group did
