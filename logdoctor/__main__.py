"""`python -m logdoctor`."""

from logdoctor.cli import run

run()
