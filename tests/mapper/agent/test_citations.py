"""Citation checks: a cited place must exist and hold what is cited."""

from __future__ import annotations

from pathlib import Path

from mapper.agent.citations import excerpt, for_node, validate
from mapper.agent.mapview import MapView
from mapper.agent.records import Citation, CitationKind

MINIREPO = Path(__file__).resolve().parents[1] / "fixtures" / "minirepo"


def _c(path: str, line: int, needle: str) -> Citation:
    return Citation(path, line, CitationKind.CODE, needle)


def test_a_true_citation_holds() -> None:
    assert validate(MINIREPO, _c("driver/mini_drv.h", 7, "MINI_IOCTL_ALLOC")) is None


def test_missing_file_wrong_line_and_wrong_text_are_caught() -> None:
    assert validate(MINIREPO, _c("driver/nope.h", 1, "x")) == (
        "driver/nope.h: no such file in the repository"
    )
    assert validate(MINIREPO, _c("driver/mini_drv.h", 999, "x")) == (
        "driver/mini_drv.h:999: line out of range (file has 21 lines)"
    )
    assert validate(MINIREPO, _c("driver/mini_drv.h", 1, "mini_free_pages")) == (
        "driver/mini_drv.h:1: does not contain 'mini_free_pages'"
    )


def test_a_path_outside_the_repository_is_not_read() -> None:
    assert validate(MINIREPO, _c("../minirepo/driver/mini_drv.h", 7, "MINI")) is None
    assert validate(MINIREPO, _c("../../../pyproject.toml", 1, "build")) == (
        "../../../pyproject.toml: no such file in the repository"
    )


def test_every_node_citation_of_the_fixture_map_holds(mini_view: MapView) -> None:
    cites = [c for n in mini_view.nodes() if (c := for_node(n)) is not None]
    placed = [
        n
        for n in mini_view.nodes()
        if n.path and n.kind in ("symbol", "interface", "doc", "scenario", "component", "test")
    ]
    inferred = [n for n in placed if n.kind == "component" and not n.path.endswith(".md")]
    assert len(cites) == len(placed) - len(inferred) == 71
    assert [(c.where, validate(MINIREPO, c)) for c in cites if validate(MINIREPO, c)] == []


def test_excerpt_numbers_its_lines() -> None:
    assert excerpt(MINIREPO, "driver/mini_drv.h", 7, 1) == (
        "6: #define MINI_PAGE_SIZE 4096\n"
        "7: #define MINI_IOCTL_ALLOC _IOWR('M', 1, struct mini_alloc)\n"
        "8: #define MINI_IOCTL_FREE _IOW('M', 2, uint64_t)"
    )
