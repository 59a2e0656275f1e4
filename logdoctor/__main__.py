"""`python -m logdoctor`."""

from logdoctor.app.cli import run

run()
