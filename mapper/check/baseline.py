"""The baseline: accepted findings, each with an owner and an expiry date.

Known findings do not fail CI; new ones do, and so does a finding whose waiver has expired.
A waiver matches a finding by fingerprint (rule + subject, independent of line numbers)::

    version: 1
    waivers:
      - fingerprint: 3f2a9c0d1e4b5a67
        rule: SM201
        subject: stack/umd/pipeline.py->stack.kmd.blob.encode
        owner: driver-team
        expires: 2027-03-31        # valid through this day
        reason: the blob encoder moves into the contract in 1.3
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from mapper.check.errors import BaselineError
from mapper.check.finding import Finding
from mapper.check.report import Report
from mapper.ingest import yamlines

#: Looked for at the repository root when ``--baseline`` is not given.
DEFAULT_NAME = ".stackmap-baseline.yaml"


@dataclass(frozen=True, slots=True)
class Waiver:
    fingerprint: str
    rule: str
    subject: str
    owner: str
    expires: dt.date
    reason: str = ""

    def expired(self, today: dt.date) -> bool:
        return today > self.expires


def _date(value: object, where: str) -> dt.date:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise BaselineError(f"{where}: expires must be YYYY-MM-DD, got {value!r}") from None


def load(path: Path) -> tuple[Waiver, ...]:
    """Read a baseline file; a missing file is an empty baseline."""
    if not path.is_file():
        return ()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read the baseline: {exc}", path=str(path)) from None
    # capped in size and alias expansion, duplicate keys refused (mapper.ingest.yamlines)
    doc = yamlines.load(text, path=str(path), error=BaselineError) or {}
    if not isinstance(doc, dict) or not isinstance(doc.get("waivers", []), list):
        raise BaselineError("expected a mapping with a 'waivers' list", path=str(path))
    out: list[Waiver] = []
    for i, raw in enumerate(doc.get("waivers") or []):
        where = f"waiver {i + 1}"
        if not isinstance(raw, dict):
            raise BaselineError(f"{where}: expected a mapping", path=str(path))
        missing = [k for k in ("fingerprint", "owner", "expires") if not raw.get(k)]
        if missing:
            raise BaselineError(f"{where}: missing {', '.join(missing)}", path=str(path))
        out.append(
            Waiver(
                fingerprint=str(raw["fingerprint"]),
                rule=str(raw.get("rule", "")),
                subject=str(raw.get("subject", "")),
                owner=str(raw["owner"]),
                expires=_date(raw["expires"], where),
                reason=str(raw.get("reason", "")),
            )
        )
    return tuple(out)


def apply(report: Report, waivers: Sequence[Waiver], today: dt.date | None = None) -> Report:
    """Split the report's findings into active and waived; expired waivers keep theirs active."""
    today = today or dt.date.today()
    by_fp = {w.fingerprint: w for w in waivers}
    active: list[Finding] = []
    waived: list[Finding] = []
    expired: set[str] = set()
    for f in report.findings:
        w = by_fp.get(f.fingerprint)
        if w is None:
            active.append(f)
        elif w.expired(today):
            active.append(f)
            expired.add(f.fingerprint)
        else:
            waived.append(f)
    seen = {f.fingerprint for f in report.findings}
    unused = tuple(sorted(fp for fp in by_fp if fp not in seen))
    return replace(
        report,
        findings=tuple(active),
        waived=tuple(waived),
        expired=frozenset(expired),
        unused_waivers=unused,
    )


def updated(
    current: Iterable[Waiver], findings: Iterable[Finding], *, owner: str, expires: dt.date
) -> tuple[Waiver, ...]:
    """The baseline accepting ``findings``: existing waivers that still match keep their owner
    and expiry (an expired one stays expired: renew it by editing the file); new findings get
    ``owner`` and ``expires``; waivers matching nothing are dropped."""
    keep = {w.fingerprint: w for w in current}
    out: dict[str, Waiver] = {}
    for f in findings:
        out[f.fingerprint] = keep.get(f.fingerprint) or Waiver(
            f.fingerprint, f.rule, f.subject, owner, expires, f.message
        )
    return tuple(sorted(out.values(), key=lambda w: (w.rule, w.subject)))


def save(path: Path, waivers: Sequence[Waiver]) -> None:
    doc = {
        "version": 1,
        "waivers": [
            {
                "fingerprint": w.fingerprint,
                "rule": w.rule,
                "subject": w.subject,
                "owner": w.owner,
                "expires": w.expires.isoformat(),
                "reason": w.reason,
            }
            for w in waivers
        ],
    }
    header = "# Accepted `stackmap check` findings: each needs an owner and an expiry date.\n"
    path.write_text(header + yaml.safe_dump(doc, sort_keys=False, width=100), encoding="utf-8")
