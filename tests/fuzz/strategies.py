"""Hypothesis strategies for the fuzz harness: the real corpus logs of fixtures/logs, mutated the ways the hostile-input
audit found to break logdoctor, plus generated rule files and suppression files.

    log_inputs()        (name, bytes, secrets planted) of one mutated corpus log (or a window of 1-40 of its lines)
    rule_files()        text of a rule file: a valid rule with hostile conditions, templates, YAML
    suppression_files() text of a `.logdoctor.yaml`
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted(p for p in (ROOT / "fixtures" / "logs").rglob("*.log") if p.stat().st_size < 64 * 1024)
_TEXTS = {p: p.read_bytes() for p in CORPUS}

ESCAPES = [
    "\x1b]52;c;ZWNobyBwd25lZA==\x1b\\",  # OSC 52: write the clipboard
    "\x1b]0;owned\x07",  # set the title
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b]8;;https://evil.example/\x1b\\x\x1b]8;;\x1b\\",  # OSC 8 hyperlink
    "\x9b31m",  # 8-bit CSI
    "\x9d0;t\x9c",  # 8-bit OSC
    "\u202e",  # right-to-left override
    "\x00",
    "\r",
    "\x7f",
    "\x08\x08",
]
MARKUP = [
    "[link=https://evil.example/]x[/link]",
    "[/x]",
    "[/]",
    "[bold red]",
    "[[",
    "]]",
    ":emoji:",
    "`",
    "```",
    "<img src=x>",
]
NESTING = ["{" * 200, "[" * 200, "(" * 300, "{'a': " * 100, "<" * 100]
NUMBERS = ["9" * 5000, "9" * 310, "9" * 40, ".", "-.", "1e999", "nan", "inf", "-0", "0x1f", "1_000", "١٢٣"]
# Numbers that are not numbers, and the ones a division or a log stumbles on.
ODD_NUMBERS = ["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e999", "1e308", "-1", "-0.5", "0", "0.0", "-0"]
# Token shapes glued to whatever stands where they are put (`tokensghp_...`, `(AKIA...EngineCore pid=1)`).
GLUED = [
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "gho_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "AKIAIOSFODNN7EXAMPLE",
    "ASIAIOSFODNN7EXAMPLE",
    "hf_abcdefghijklmnopqrstuvwxyz12345678",
    "xoxb-1234567890-abcdefghij",
    "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcdefghijT3BlbkFJabcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcdefghij",
    "sk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcdefghijklmnopqrstuvwxyz012AA",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w",
]
# Where a value sits, for an escape sequence inside it.
_VALUE_STARTS = [b"=", b": ", b"'", b'"', b"(", b"/"]
# A run long enough to pass the parse cap (logdoctor/parse/pipeline.py MAX_PARSED_CHARS), of what a long line holds
# (words and spaces: a regex read from each word of such a run to the run's end, 14 s a line at the cap).
_LONG_UNITS = [b"a", b"a ", b"1", b"a=", b"a.", b"x, ", b"'a': ", b"{", b"-", b" ", b"eyJ", b"key=", b"\x1b"]
# (planted text, the secret part that must appear in no output)
SECRETS = [
    ("otlp_traces_endpoint=https://otel:Pa55w0rdX@collector:4317", "Pa55w0rdX"),
    ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_access_key=wJalrXUtnFEMIK7MDENGbPxRfiCY", "wJalrXUtnFEMIK7MDENGbPxRfiCY"),
    ("AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjEJrFAKE", "IQoJb3JpZ2luX2VjEJrFAKE"),
    ("VLLM_API_KEY=vllmsecretvalue1", "vllmsecretvalue1"),
    ("HUGGING_FACE_HUB_TOKEN=hf_abcdefghijklmnopqrstuvwxyz1234", "hf_abcdefghijklmnopqrstuvwxyz1234"),
    ("ANTHROPIC_API_KEY=sk-ant-api03-fakefakefakefake", "sk-ant-api03-fakefakefakefake"),
    ("WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567"),
    ("authorization: bearer abcdefgh12345678zz", "abcdefgh12345678zz"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ('{\\"api_key\\": \\"escapedjsonsecret\\"}', "escapedjsonsecret"),
    ("'api_key': 'quotedsecretvalue'", "quotedsecretvalue"),
    ("--api-key clisecretvalue9", "clisecretvalue9"),
    ("'--api-key', 'listsecretvalue8'", "listsecretvalue8"),
]


def _insert(data: bytes, position: int, piece: bytes) -> bytes:
    position = min(position, len(data))
    return data[:position] + piece + data[position:]


@st.composite
def _mutation(draw: st.DrawFn, data: bytes) -> tuple[bytes, list[tuple[str, str]]]:
    kind = draw(
        st.sampled_from(
            [
                "flip",
                "truncate",
                "duplicate",
                "number",
                "markup",
                "escape",
                "nest",
                "secret",
                "cr",
                "junk",
                "glue",
                "long",
                "odd-number",
                "escape-in-value",
                "utf8-cut",
                "join",
            ]
        )
    )
    where = draw(st.integers(0, max(len(data), 1)))
    planted: list[tuple[str, str]] = []
    if kind == "flip" and data:
        index = where % len(data)
        data = data[:index] + bytes([data[index] ^ draw(st.integers(1, 255))]) + data[index + 1 :]
    elif kind == "truncate":
        data = data[:where]
    elif kind == "duplicate":
        end = min(len(data), where + draw(st.integers(1, 4000)))
        data = data[:end] + data[where:end] * draw(st.integers(1, 20)) + data[end:]
    elif kind == "number":
        digits = [i for i in range(where, min(len(data), where + 2000)) if data[i : i + 1].isdigit()]
        if digits:
            start = digits[0]
            end = start
            while end < len(data) and (data[end : end + 1].isdigit() or data[end : end + 1] == b"."):
                end += 1
            data = data[:start] + draw(st.sampled_from(NUMBERS)).encode() + data[end:]
    elif kind == "markup":
        data = _insert(data, where, draw(st.sampled_from(MARKUP)).encode())
    elif kind == "escape":
        data = _insert(data, where, draw(st.sampled_from(ESCAPES)).encode("utf-8"))
    elif kind == "nest":
        data = _insert(data, where, draw(st.sampled_from(NESTING)).encode())
    elif kind == "secret":
        text, secret = draw(st.sampled_from(SECRETS))
        line_start = data.rfind(b"\n", 0, where) + 1
        data = (
            data[:line_start]
            + b"(APIServer pid=1) INFO 05-08 14:02:11 [x.py:1] "
            + text.encode()
            + b"\n"
            + data[line_start:]
        )
        planted.append((text, secret))
    elif kind == "cr":
        data = data.replace(b"\n", b"\r")
    elif kind == "glue":  # a token glued to the word (or prefix) before and after it
        token = draw(st.sampled_from(GLUED))
        data = _insert(data, where, token.encode())
        planted.append((token, token))
    elif kind == "long":  # one line past the parse cap, at a line's end or inside it
        unit = draw(st.sampled_from(_LONG_UNITS))
        data = _insert(data, where, unit * (draw(st.integers(70_000, 310_000)) // len(unit)))
    elif kind == "odd-number":
        digits = [i for i in range(where, min(len(data), where + 2000)) if data[i : i + 1].isdigit()]
        if digits:
            start = end = digits[0]
            while end < len(data) and (data[end : end + 1].isdigit() or data[end : end + 1] == b"."):
                end += 1
            data = data[:start] + draw(st.sampled_from(ODD_NUMBERS)).encode() + data[end:]
    elif kind == "escape-in-value":
        starts = [i + len(s) for s in _VALUE_STARTS if (i := data.find(s, where)) >= 0]
        if starts:
            data = _insert(data, min(starts), draw(st.sampled_from(ESCAPES)).encode("utf-8"))
    elif kind == "utf8-cut":  # a multi-byte character cut after its first byte or two
        piece = draw(st.sampled_from(["é", "€", "😀", "中", "\u202e"])).encode("utf-8")
        data = _insert(data, where, piece[: draw(st.integers(1, len(piece) - 1))])
    elif kind == "join":  # two lines glued into one (a lost newline)
        newline = data.find(b"\n", where)
        if newline >= 0:
            data = data[:newline] + data[newline + 1 :]
    else:
        data = _insert(data, where, draw(st.binary(max_size=64)))
    return data, planted


@st.composite
def log_inputs(draw: st.DrawFn) -> tuple[str, bytes, list[str]]:
    path = draw(st.sampled_from(CORPUS))
    data = _TEXTS[path]
    if draw(st.integers(0, 9)):  # mostly a window of the log: cheaper, so more inputs an hour
        lines = data.split(b"\n")
        start = draw(st.integers(0, max(len(lines) - 1, 0)))
        data = b"\n".join(lines[start : start + draw(st.integers(1, 40))])
    planted: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(1, 4))):
        data, secrets = draw(_mutation(data))
        planted.extend(secrets)
    # A secret counts while every copy of it still stands in its planted form (its key in front): a later
    # mutation that copies part of the line (`versionuthorization: Basic ...`) or flips a byte of the key leaves
    # a value no documented form names, which no pattern can be asked to find.
    intact = [secret for text, secret in planted if data.count(secret.encode()) == data.count(text.encode())]
    return path.name, data, intact


FACTS = ["kv.usage", "kv.tokens", "spec.acceptance_length", "spec.num_tokens", "parallel.tp", "attention.backend"]
_ATOMS = [
    "max(kv.usage) > 0.9",
    "exists(kv.tokens)",
    "mean(spec.acceptance_length) < 1.3 + 0.1 * spec.num_tokens",
    "attention.backend in ['XFORMERS', 'TORCH_SDPA']",
    "parallel.tp >= 2",
    "not exists(spec.num_tokens)",
    "share(kv.usage > 0.5) >= 0.3",
    "1" + " + 1" * 50 + " > 0",
    "kv.tokens / 0 > 1",
    "nosuch.fact > 1",
    "max(",
    "'unterminated",
]


@st.composite
def conditions(draw: st.DrawFn) -> str:
    atoms = draw(st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=draw(st.integers(1, 1200))))
    glue = draw(st.sampled_from([" and ", " or ", " and not ", " or ("]))
    text = glue.join(atoms)
    depth = draw(st.integers(0, 1200))
    return "(" * depth + text + ")" * draw(st.integers(0, depth + 1))


@st.composite
def templates(draw: st.DrawFn) -> str:
    spec = draw(st.sampled_from(["", ":.2f", ":9999999999.2f", ":.999f", ":>20", ":<64.12f", ":d", ":%", ":999g"]))
    expr = draw(st.sampled_from(["max(kv.usage)", "kv.tokens", "spec.num_tokens * 2", "nosuch", "(" * 50]))
    return f"usage {{{expr}{spec}}} " * draw(st.integers(1, 80))


def _yaml_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@st.composite
def rule_files(draw: st.DrawFn) -> str:
    when = draw(conditions())
    explain = draw(templates())
    body = (
        "id: fuzz-rule\ncause: kv-cache-pressure\ntitle: fuzz\nengines: [vllm]\n"
        f"when: {_yaml_quote(when)}\nimpact: {draw(st.sampled_from(['50', '0', '101', '9' * 400, '.', 'x']))}\n"
        f"explain: {_yaml_quote(explain)}\n"
    )
    extra = draw(
        st.sampled_from(
            [
                "",
                "tags: " + "[" * draw(st.integers(0, 12000)) + "]" * draw(st.integers(0, 12000)) + "\n",
                'samples:\n  - text: "\\x1b]52;c;eA==\\x07"\n',
                "date: 2027-02-30\n",
                "x: &a [*a]\n",
                "a: &a ['lol']\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
                "requires: [" + ", ".join(draw(st.lists(st.sampled_from([*FACTS, "bad"]), max_size=5))) + "]\n",
            ]
        )
    )
    junk = draw(st.text(max_size=40))
    return body + extra + (junk if draw(st.booleans()) else "")


@st.composite
def suppression_files(draw: st.DrawFn) -> bytes:
    expires = draw(
        st.sampled_from(["2027-03-31", "2027-02-30", "0000-00-00", "99999-01-01", "x", "2027-13-01", "null"])
    )
    entry = f"  - rule: {draw(st.sampled_from(['vllm-eager-decode', 'x', '[', '{a: b}']))}\n    reason: r\n    expires: {expires}\n"
    text = "suppress:\n" + entry * draw(st.integers(0, 5))
    extra = draw(
        st.sampled_from(["", "x: " + "{" * draw(st.integers(0, 9000)), "\t\x00bad\n", "suppress: 7\n", "[" * 70])
    )
    raw = (text + extra).encode()
    if draw(st.booleans()):
        raw += draw(st.binary(max_size=16))
    return raw
