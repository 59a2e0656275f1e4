"""The application: the command line and the orchestration of the stages below it.

The stages (sources, parse, facts, engine, perf, diff, report) know nothing of this package; it wires them into
runs (`run.py`), deployments, fleets of hosts, URL and store targets, `watch`, and the click commands
(`cli.py`, `commands/`). `entry.py` is the console script.
"""
