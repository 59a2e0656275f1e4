"""The commands of `logdoctor`, one module each, imported when the command runs (logdoctor/app/cli.py lists them).

logdoctor diagnose vllm-serve.log   # imports logdoctor.app.commands.diagnose, not parse, diff, watch, rules or test
"""
