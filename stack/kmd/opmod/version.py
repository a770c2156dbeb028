"""Semantic versions and the one compatibility rule shared by modules, descriptors,
Executables and contract files: another major version is refused, another minor one is
accepted with a warning, another patch silently.
"""

from __future__ import annotations

import enum
import logging
import re
from dataclasses import dataclass

from stack.kmd.opmod.errors import DescriptorError, VersionMismatchError

log = logging.getLogger("stack.kmd.opmod")
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


@dataclass(frozen=True, slots=True, order=True)
class SemVer:
    """``major.minor.patch``."""

    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str, *, path: str = "<data>", pointer: str = "/version") -> SemVer:
        """Parse ``"1.2.3"``; DescriptorError (at ``path``/``pointer``) otherwise."""
        m = _SEMVER.match(text) if isinstance(text, str) else None
        if m is None:
            raise DescriptorError(
                f"{text!r} is not a version major.minor.patch", path=path, pointer=pointer
            )
        return cls(int(m[1]), int(m[2]), int(m[3]))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


class VersionCheck(enum.Enum):
    """What :func:`check_version` found."""

    EXACT = "exact"
    PATCH = "patch"
    MINOR = "minor"


class _Counter:
    """Minor-version warnings issued in this process (tools and tests read ``count``)."""

    count = 0


warnings_issued = _Counter()


def check_version(kind: str, name: str, found: SemVer, supported: SemVer) -> VersionCheck:
    """Apply the rule to ``found`` (what a file or module declares) against ``supported``
    (what this code reads). Major differs: VersionMismatchError. Minor differs: a WARNING on
    logger ``stack.kmd.opmod`` and MINOR. Patch differs: PATCH, silently."""
    if found.major != supported.major:
        raise VersionMismatchError(
            f"{kind} {name} has version {found}, this stack supports {supported.major}.x: refused",
            kind=kind,
            name=name,
            found=str(found),
            supported=str(supported),
        )
    if found.minor != supported.minor:
        warnings_issued.count += 1
        log.warning(
            "%s %s has version %s, this stack supports %s: loaded (minor versions differ)",
            kind, name, found, supported,
        )  # fmt: skip
        return VersionCheck.MINOR
    return VersionCheck.EXACT if found.patch == supported.patch else VersionCheck.PATCH
