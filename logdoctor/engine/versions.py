"""PEP 440 versions and specifier sets, the part advisories need (no dependency on `packaging`).

    Version("0.21.1rc1.dev185+gb29cbf065") < Version("0.21.1")       -> True
    SpecifierSet(">=0.20.0,<0.21.0").contains(Version("0.20.1"))     -> True

Versions: `[N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]`, with the spellings PEP 440 normalises (`0.5.0-rc1`,
`v0.10.1`, `2.21.5+cuda12.4`). Ordering follows PEP 440: `1.0.dev1 < 1.0a1 < 1.0rc1 < 1.0 < 1.0.post1`, and a
local label sorts after the same public version. Specifiers: `==`, `!=`, `<`, `<=`, `>`, `>=`, `~=` and the
`==1.2.*` / `!=1.2.*` prefix forms, comma-joined (all must hold). One difference from pip, on purpose: a
pre-release or nightly build is matched like any other version. A performance advisory that names
`>=0.21.1rc1.dev185` is about exactly those nightlies, and `<0.21.0` covers `0.21.0rc1` (a release candidate
ships the bug the final release fixed only when the fix came after it; advisories name the fix's first version).
"""

from __future__ import annotations

import re
from functools import total_ordering

_VERSION_RE = re.compile(
    r"""^\s*v?
    (?:(?P<epoch>\d+)!)?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre_l>a|b|c|rc|alpha|beta|pre|preview)[-_.]?(?P<pre_n>\d+)?)?
    (?:(?:-(?P<post_n1>\d+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?))?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""",
    re.X | re.I,
)
_PRE_NAMES = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc", "preview": "rc"}
_PRE_ORDER = {"a": 0, "b": 1, "rc": 2}
_MAX_PARTS = 8  # a version of more parts is no engine's; refusing it bounds the work on text from a log


class InvalidVersion(ValueError):
    pass


@total_ordering
class Version:
    """A parsed PEP 440 version, ordered as PEP 440 orders them."""

    __slots__ = ("_key", "dev", "epoch", "local", "post", "pre", "release", "text")

    def __init__(self, text: str) -> None:
        m = _VERSION_RE.match(text) if len(text) <= 128 else None
        if m is None:
            raise InvalidVersion(f"not a PEP 440 version: {text[:64]!r}")
        self.text = text.strip()
        self.epoch = int(m.group("epoch") or 0)
        release = tuple(int(p) for p in m.group("release").split("."))
        if len(release) > _MAX_PARTS:
            raise InvalidVersion(f"not a PEP 440 version: {text[:64]!r} (more than {_MAX_PARTS} parts)")
        self.release = release
        pre_l = m.group("pre_l")
        self.pre: tuple[str, int] | None = (_PRE_NAMES[pre_l.lower()], int(m.group("pre_n") or 0)) if pre_l else None
        post = m.group("post_n1") or m.group("post_n2")
        self.post: int | None = int(post or 0) if post is not None or m.group("post_l") else None
        self.dev: int | None = int(m.group("dev_n") or 0) if m.group("dev_l") else None
        self.local: str | None = m.group("local").lower() if m.group("local") else None
        self._key = self._sort_key()

    def _sort_key(self) -> tuple[object, ...]:
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:
            release.pop()  # 1.0 == 1.0.0
        # PEP 440: a dev release of a final sorts before its pre-releases; no pre-release sorts after them all.
        if self.pre is None and self.post is None and self.dev is not None:
            pre: tuple[int, int] = (-1, 0)
        elif self.pre is None:
            pre = (3, 0)
        else:
            pre = (_PRE_ORDER[self.pre[0]], self.pre[1])
        post = -1 if self.post is None else self.post
        dev = float("inf") if self.dev is None else self.dev
        local = (
            ()
            if self.local is None
            else tuple((1, int(p), "") if p.isdigit() else (0, 0, p) for p in re.split(r"[-_.]", self.local))
        )
        return (self.epoch, tuple(release), pre, post, dev, local)

    @property
    def public(self) -> Version:
        """The version without its local label (`2.21.5+cuda12.4` -> `2.21.5`)."""
        return Version(self.text.split("+", 1)[0])

    @property
    def base(self) -> tuple[int, ...]:
        return self.release

    @property
    def is_prerelease(self) -> bool:
        return self.pre is not None or self.dev is not None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __lt__(self, other: Version) -> bool:
        return self._key < other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Version({self.text!r})"


def parse_version(text: str) -> Version | None:
    """The version, or None when the text is not one (a range such as `>=0.10.1`, `0.7-0.10`, `unknown`)."""
    try:
        return Version(text)
    except InvalidVersion:
        return None


_SPEC_RE = re.compile(r"^\s*(?P<op>~=|==|!=|<=|>=|<|>)\s*(?P<version>[^\s,;]+)\s*$")


class InvalidSpecifier(ValueError):
    pass


class Specifier:
    """One clause: `>=0.20.0`, `==0.5.*`, `~=2.21.0`."""

    __slots__ = ("op", "prefix", "text", "version")

    def __init__(self, text: str) -> None:
        m = _SPEC_RE.match(text)
        if m is None:
            raise InvalidSpecifier(f"not a version specifier: {text.strip()[:64]!r} (write e.g. >=0.20.0)")
        self.text = text.strip()
        self.op = m.group("op")
        raw = m.group("version")
        self.prefix = raw.endswith(".*")
        if self.prefix and self.op not in ("==", "!="):
            raise InvalidSpecifier(f"{self.text!r}: a .* prefix only goes with == or !=")
        try:
            self.version = Version(raw.removesuffix(".*"))
        except InvalidVersion as exc:
            raise InvalidSpecifier(f"{self.text!r}: {exc}") from None
        if self.op == "~=" and len(self.version.release) < 2:
            raise InvalidSpecifier(f"{self.text!r}: ~= needs at least two release parts (~=2.21)")

    def contains(self, version: Version) -> bool:
        v, op, s = version, self.op, self.version
        if self.prefix:
            n = len(s.release)
            same = s.epoch == v.epoch and (v.release + (0,) * n)[:n] == s.release
            return same if op == "==" else not same
        if op == "~=":
            head = s.release[:-1]
            n = len(head)
            return v >= s and (v.release + (0,) * n)[:n] == head
        if op in ("==", "!="):
            # `==2.21.5` matches `2.21.5+cuda12.4`: a local label names a build of that version.
            target = v if s.local is not None else v.public
            return (target == s) if op == "==" else (target != s)
        if op == "<":
            return v.public < s
        if op == "<=":
            return v.public <= s
        if op == ">":
            return v.public > s
        return v >= s  # >=


class SpecifierSet:
    """Comma-joined clauses, all of which must hold: `>=0.20.0,<0.21.0`."""

    __slots__ = ("specs", "text")

    def __init__(self, text: str) -> None:
        parts = [p for p in text.split(",") if p.strip()]
        if not parts:
            raise InvalidSpecifier("empty version range (write e.g. >=0.20.0,<0.21.0)")
        self.text = ",".join(p.strip() for p in parts)
        self.specs = [Specifier(p) for p in parts]

    def contains(self, version: Version) -> bool:
        return all(spec.contains(version) for spec in self.specs)

    def __str__(self) -> str:
        return self.text
