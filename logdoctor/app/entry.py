"""The `logdoctor` console script: `logdoctor --version` alone is answered before click is imported (the
version is all it prints, as click's version option words it); everything else runs `logdoctor.app.cli`'s group.

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
    from logdoctor.app.cli import main as group

    group()  # the program name from sys.argv[0], as the console script calling the group did
