"""The stages wired into one diagnosis: numbered lines of one deployment in, a Diagnosis out (`run.py`), the
events' server starts and deployment clues gathered as they stream by (`tap.py`), and a big file parsed in
worker processes, range by range (`parallel.py`). `logdoctor.app` and `logdoctor.testing` both run it.
"""
