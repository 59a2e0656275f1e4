"""known_hosts files read and matched the way OpenSSH's `ssh` does (hostfile.c, match.c).

    book = KnownHosts.load(["/root/.ssh/known_hosts"])
    verdict = book.check("[127.0.0.2]:2222", "ssh-ed25519", key_blob)   # ok | new | changed | revoked

One line a key: `[@revoked|@cert-authority] PATTERNS KEYTYPE BASE64 [comment]`. PATTERNS is either
one hashed name (`|1|salt|hmac-sha1`) or a comma list of names and wildcards (`*`, `?`) where a
leading `!` negates (a negated match rules the line out). The name looked up is the host name,
`[host]:port` when the port is not 22, lowercased. Several lines may match a host: any line with the
presented key accepts it; the key counts as *changed* only when a line of the same key type holds a
different key and none holds this one; a matching `@revoked` line refuses the key whatever else
matches. `@cert-authority` lines are skipped (paramiko does not verify host certificates), with a
note when one applies to the host. Lines that cannot be parsed are skipped, as OpenSSH does.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

HASH_MAGIC = "|1|"
MAX_FILE_BYTES = 16 * 1024 * 1024  # a known_hosts file larger than this is not read (a note says so)


@dataclass(frozen=True)
class Entry:
    """One key line of a known_hosts file."""

    path: str
    line: int
    marker: str  # "", "revoked" or "cert-authority"
    patterns: str
    key_type: str  # the type named inside the key blob (e.g. ssh-ed25519, ecdsa-sha2-nistp256)
    blob: bytes

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def matches(self, name: str) -> bool:
        return host_matches(self.patterns, name)


@dataclass(frozen=True)
class Verdict:
    """What the files say about a presented key. `status`: ok, new, changed or revoked."""

    status: str
    entry: Entry | None = None  # the accepting, changed-from or revoking line
    other_types: tuple[str, ...] = ()  # key types known for the host when status is "new"
    notes: tuple[str, ...] = ()


@dataclass
class KnownHosts:
    entries: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, paths: Iterable[str]) -> KnownHosts:
        book = cls()
        for path in paths:
            try:
                with open(path, "rb") as fh:
                    data = fh.read(MAX_FILE_BYTES + 1)
            except FileNotFoundError:
                continue
            except OSError as exc:
                book.notes.append(f"cannot read {path}: {exc.strerror or exc}")
                continue
            if len(data) > MAX_FILE_BYTES:
                book.notes.append(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB, not read")
                continue
            book.entries.extend(parse(data.decode("utf-8", "replace"), path))
        return book

    def check(self, name: str, key_type: str, blob: bytes) -> Verdict:
        """OpenSSH's check_key_in_hostkeys for a plain (non-certificate) host key."""
        name = name.lower()
        matching = [e for e in self.entries if e.matches(name)]
        notes = tuple(
            f"{e.where}: @cert-authority line skipped (host certificates are not supported; "
            "the host's plain key is checked instead)"
            for e in matching
            if e.marker == "cert-authority"
        )
        revoked = next((e for e in matching if e.marker == "revoked" and e.blob == blob), None)
        if revoked is not None:
            return Verdict("revoked", revoked, notes=notes)
        plain = [e for e in matching if e.marker == ""]
        accepted = next((e for e in plain if e.blob == blob), None)
        if accepted is not None:
            return Verdict("ok", accepted, notes=notes)
        changed = next((e for e in plain if e.key_type == key_type), None)
        if changed is not None:
            return Verdict("changed", changed, notes=notes)
        others = tuple(dict.fromkeys(e.key_type for e in plain))
        return Verdict("new", None, other_types=others, notes=notes)

    def holder(self, name: str, key_type: str) -> Entry | None:
        name = name.lower()
        return next((e for e in self.entries if not e.marker and e.key_type == key_type and e.matches(name)), None)


def parse(text: str, path: str) -> list[Entry]:
    entries = []
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        marker = ""
        if fields[0].startswith("@"):
            marker = {"@revoked": "revoked", "@cert-authority": "cert-authority"}.get(fields[0], "?")
            fields = fields[1:]
            if marker == "?":
                continue
        if len(fields) < 3:
            continue
        patterns, key_type, encoded = fields[0], fields[1], fields[2]
        try:
            blob = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            continue
        inner = blob_key_type(blob)
        if inner is None or inner != key_type:
            continue  # OpenSSH refuses a line whose type does not match its key
        entries.append(Entry(path, number, marker, patterns, inner, blob))
    return entries


def blob_key_type(blob: bytes) -> str | None:
    """The key type string an SSH public key blob starts with."""
    if len(blob) < 4:
        return None
    (length,) = struct.unpack(">I", blob[:4])
    if not 0 < length <= 64 or len(blob) < 4 + length:
        return None
    try:
        return blob[4 : 4 + length].decode("ascii")
    except UnicodeDecodeError:
        return None


def host_matches(patterns: str, name: str) -> bool:
    """OpenSSH's match_hostname: a hashed name, or a comma list where a negated match wins."""
    if patterns.startswith(HASH_MAGIC):
        return hashed_matches(patterns, name)
    positive = False
    for pattern in patterns.lower().split(","):
        negated = pattern.startswith("!")
        if negated:
            pattern = pattern[1:]
        if _wildcard(pattern).fullmatch(name):
            if negated:
                return False
            positive = True
    return positive


def hashed_matches(field_text: str, name: str) -> bool:
    parts = field_text[len(HASH_MAGIC) :].split("|")
    if len(parts) != 2:
        return False
    try:
        salt = base64.b64decode(parts[0], validate=True)
        want = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        return False
    got = hmac.new(salt, name.encode("utf-8"), hashlib.sha1).digest()
    return hmac.compare_digest(got, want)


@lru_cache(maxsize=256)
def _wildcard(pattern: str) -> re.Pattern[str]:
    """`*` any run, `?` one character, everything else literal (`[` too: `[host]:port` is a name)."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.DOTALL)
