"""Docs without front matter: plain text, reStructuredText and PDF placed by their content;
encrypted, corrupted and scanned PDFs skipped with the reason."""

from __future__ import annotations

import io
import shutil
import socket
from collections.abc import Iterator

import pytest
from pypdf import PdfWriter

from mapper.graph import MapGraph
from mapper.ingest import IngestReport, ingest, load_map
from mapper.ingest.docs_plain import parse_pdf, parse_plain_text, parse_rst_text
from tests.mapper.conftest import MINIREPO

MANUAL = [
    "Device memory pages and the ioctl entry point",
    "The kernel driver maps device memory pages for each ioctl request.",
    "mini_alloc_pages() reserves the pages; interrupts signal command completion.",
]


def pdf_with_text(lines: list[str]) -> bytes:
    """A one-page PDF whose content stream shows ``lines`` (written by hand: PDF 1.4 syntax)."""
    shown = " 0 -16 Td ".join(f"({line})Tj" for line in lines)
    stream = f"BT /F1 12 Tf 72 720 Td {shown} ET".encode()
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]"
        b"/Resources<</Font<</F1 4 0 R>>>>/Contents 5 0 R>>",
        b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
        b"<</Length %d>>stream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _written(writer: PdfWriter) -> bytes:
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def bad_pdfs() -> dict[str, bytes]:
    encrypted = PdfWriter(clone_from=io.BytesIO(pdf_with_text(MANUAL)))
    encrypted.encrypt(user_password="secret", algorithm="RC4-128")
    scanned = PdfWriter()
    scanned.add_blank_page(width=612, height=792)
    return {
        "encrypted.pdf": _written(encrypted),
        "scanned.pdf": _written(scanned),
        "corrupted.pdf": pdf_with_text(MANUAL)[:120],
    }


def test_pdf_pages_become_sections_with_code_mentions() -> None:
    page = parse_pdf(pdf_with_text(MANUAL), "notes/manual.pdf")
    assert [(s.anchor, s.heading, s.location.line) for s in page.sections] == [
        ("page-1", MANUAL[0], 1)
    ]
    assert [name for name, _ in page.mentions] == ["mini_alloc_pages"]
    assert page.front_matter == {} and page.title == MANUAL[0]


def test_rst_and_text_sections_and_mentions() -> None:
    rst = parse_rst_text(
        "Queues\n======\n\nSubmit with ``submit_batch``.\n\nFences\n------\n"
        "See :func:`wait_fence`.\n",
        "notes/q.rst",
    )
    assert [(s.heading, s.location.line) for s in rst.sections] == [("Queues", 1), ("Fences", 6)]
    assert [(n, w.line) for n, w in rst.mentions] == [("submit_batch", 4), ("wait_fence", 8)]
    text = parse_plain_text("# Memory\nmini_alloc_pages and FenceTable.\n", "notes/m.txt")
    assert [s.heading for s in text.sections] == ["Memory"]
    assert [n for n, _ in text.mentions] == ["mini_alloc_pages", "FenceTable"]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[IngestReport, MapGraph]]:
    root = tmp_path_factory.mktemp("docs") / "minirepo"
    shutil.copytree(MINIREPO, root, ignore=shutil.ignore_patterns(".stackmap"))
    (root / "notes" / "manual.pdf").write_bytes(pdf_with_text(MANUAL))
    (root / "notes" / "fences.txt").write_text(
        "Streams and fences\n==================\n\nThe runtime waits on the fence of the last "
        "kernel launch before it frees device memory buffers.\n"
    )
    for name, data in bad_pdfs().items():
        (root / "notes" / name).write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setattr(socket.socket, "connect", _refuse)
        report = ingest(root, embed=True, progress=False)
    yield report, load_map(root)


def _refuse(self: socket.socket, address: object) -> None:
    raise OSError(f"network access during ingest: {address}")


def test_pdf_and_text_placed_on_layers_by_content(
    embedded: tuple[IngestReport, MapGraph],
) -> None:
    _, g = embedded
    placed = {
        (s, t): a["provenance"]
        for s, t, a in g.edges()
        if a["kind"] == "describes" and t.startswith("layer:") and s.startswith("doc:notes/")
    }
    assert placed[("doc:notes/manual.pdf", "layer:driver")] == "embedding"
    assert placed[("doc:notes/fences.txt", "layer:runtime")] == "embedding"
    mentions = {t for s, t, a in g.edges() if s.startswith("doc:notes/manual.pdf")}
    assert "symbol:c:driver/mini_drv.c:mini_alloc_pages" in mentions


def test_bad_pdfs_skipped_with_the_reason(embedded: tuple[IngestReport, MapGraph]) -> None:
    report, g = embedded
    skips = {s.path: s.reason for s in report.skips}
    assert skips == {
        "notes/corrupted.pdf": skips["notes/corrupted.pdf"],
        "notes/encrypted.pdf": "encrypted PDF: no text can be read",
        "notes/scanned.pdf": "no extractable text in 1 page(s): scanned images?",
    }
    assert skips["notes/corrupted.pdf"].startswith("corrupted PDF: ")
    assert not any(n.startswith(("doc:notes/encrypted", "doc:notes/scanned")) for n, _ in g.nodes())
