"""The map's configuration: ``stackmap.toml`` or ``[tool.stackmap]`` in ``pyproject.toml``.

The config names the stack's layers top to bottom (each with path globs and a one-line
description used to classify unplaced docs), the roles that read the map, where the docs,
contracts and tests live, what to ignore, and where the map is stored.

Globs are matched against repository-relative POSIX paths: ``*`` and ``?`` stay inside one
path segment, ``**`` spans segments (``a/**`` matches everything under ``a``).
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapper.errors import ConfigError

CONFIG_FILE = "stackmap.toml"
DEFAULT_IGNORE = (".git/**", ".venv/**", "**/__pycache__/**", "**/node_modules/**")


@dataclass(frozen=True, slots=True)
class LayerConfig:
    id: str
    name: str
    paths: tuple[str, ...]
    description: str


@dataclass(frozen=True, slots=True)
class RoleConfig:
    id: str
    name: str
    layers: tuple[str, ...]
    interests: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CConfig:
    """``[c]``: what C/C++/CUDA parsing needs beyond the built-in macro set
    (:mod:`mapper.ingest.cmacros`): macros to strip (annotations), to strip with their
    arguments, whose argument at an index is a type, iteration macros, declarator macros,
    text substitutions, include paths (repo-relative) and a compilation database."""

    strip: tuple[str, ...] = ()
    strip_calls: tuple[str, ...] = ()
    type_args: tuple[tuple[str, int], ...] = ()
    loops: tuple[str, ...] = ()
    declarators: tuple[str, ...] = ()
    define: tuple[tuple[str, str], ...] = ()
    include_paths: tuple[str, ...] = ()
    compile_commands: str | None = None  # a compile_commands.json, repo-relative


@dataclass(frozen=True, slots=True)
class StackmapConfig:
    root: Path
    name: str
    layers: tuple[LayerConfig, ...]
    roles: tuple[RoleConfig, ...]
    contracts: str
    docs: tuple[str, ...]
    tests: tuple[str, ...]
    ignore: tuple[str, ...]
    store: str
    vector_store: str
    classify_threshold: float
    python_roots: tuple[str, ...] = ()  # folders a Python package path starts below ("src")
    generated: tuple[str, ...] = ()  # globs of generated code: indexed, never a hole
    c: CConfig = CConfig()

    def layer_of(self, path: str) -> str | None:
        """The first layer (top to bottom) one of whose globs matches the repo-relative path."""
        for layer in self.layers:
            if matches_any(path, layer.paths):
                return layer.id
        return None

    def layer_index(self, layer_id: str) -> int:
        """Position of the layer, 0 = top; ConfigError for an unknown id."""
        for i, layer in enumerate(self.layers):
            if layer.id == layer_id:
                return i
        known = ", ".join(layer.id for layer in self.layers)
        raise ConfigError(f"unknown layer {layer_id!r}; known: {known}", layer=layer_id)

    def layer(self, layer_id: str) -> LayerConfig:
        return self.layers[self.layer_index(layer_id)]

    def is_ignored(self, path: str) -> bool:
        return matches_any(path, self.ignore) or matches_any(path, (f"{self.store}/**",))

    def is_generated(self, path: str) -> bool:
        return matches_any(path, self.generated)

    def is_test(self, path: str) -> bool:
        return matches_any(path, self.tests)

    def is_doc(self, path: str) -> bool:
        """A Markdown file under one of the doc folders (or matching one of the doc globs)."""
        if not path.endswith((".md", ".markdown")):
            return False
        return any(
            path.startswith(d.rstrip("/") + "/") or glob_regex(d).match(path) for d in self.docs
        )

    def is_document(self, path: str) -> bool:
        """A doc page in any format the map reads (Markdown, reStructuredText, plain text,
        PDF) under one of the doc folders or globs."""
        if path.endswith((".rst", ".txt", ".pdf")):
            return self.is_doc(path[: path.rfind(".")] + ".md")
        return self.is_doc(path)

    @property
    def store_path(self) -> Path:
        return self.root / self.store


@functools.lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob (``*``, ``?``, ``**``) into an anchored regular expression."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches_any(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return any(glob_regex(p).match(path) for p in patterns)


def load_config(root: Path) -> StackmapConfig:
    """Read ``ROOT/stackmap.toml``, else ``[tool.stackmap]`` of ``ROOT/pyproject.toml``.

    Raises ConfigError (with the file path) when neither exists or the content is malformed.
    """
    root = root.resolve()
    toml_path = root / CONFIG_FILE
    if toml_path.is_file():
        data = _read_toml(toml_path)
        table = data.get("stackmap", {})
        return _build(root, CONFIG_FILE, table, data.get("layers", []), data.get("roles", []))
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        tool = _read_toml(pyproject).get("tool", {}).get("stackmap")
        if isinstance(tool, dict):
            layers = tool.get("layers", [])
            roles = tool.get("roles", [])
            return _build(root, "pyproject.toml", tool, layers, roles)
    raise ConfigError(
        f"no {CONFIG_FILE} or [tool.stackmap] in pyproject.toml under {root}; "
        "run `stackmap init PATH` to propose one",
        path=str(toml_path),
    )


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config: {exc}", path=str(path)) from exc


def _strs(value: Any, where: str, file: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings", path=file)
    return tuple(value)


def _build(root: Path, file: str, table: Any, layers_raw: Any, roles_raw: Any) -> StackmapConfig:
    if not isinstance(table, dict) or not isinstance(layers_raw, list):
        raise ConfigError("expected a [stackmap] table and [[layers]] entries", path=file)
    layers: list[LayerConfig] = []
    for i, entry in enumerate(layers_raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ConfigError(f"layers[{i}] needs an id", path=file)
        layers.append(
            LayerConfig(
                id=entry["id"],
                name=str(entry.get("name", entry["id"])),
                paths=_strs(entry.get("paths"), f"layers[{i}].paths", file),
                description=str(entry.get("description", "")),
            )
        )
    ids = [layer.id for layer in layers]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"duplicate layer ids in {ids}", path=file)
    roles: list[RoleConfig] = []
    for i, entry in enumerate(roles_raw if isinstance(roles_raw, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ConfigError(f"roles[{i}] needs an id", path=file)
        role_layers = _strs(entry.get("layers"), f"roles[{i}].layers", file)
        unknown = [lid for lid in role_layers if lid not in ids]
        if unknown:
            raise ConfigError(f"role {entry['id']!r} names unknown layers {unknown}", path=file)
        roles.append(
            RoleConfig(
                id=entry["id"],
                name=str(entry.get("name", entry["id"])),
                layers=role_layers,
                interests=_strs(entry.get("interests"), f"roles[{i}].interests", file),
            )
        )
    try:
        threshold = float(table.get("classify_threshold", 0.35))
    except (TypeError, ValueError) as exc:
        raise ConfigError("classify_threshold must be a number", path=file) from exc
    ignore = _strs(table.get("ignore"), "ignore", file)
    c_table = table.get("c", {})
    if not isinstance(c_table, dict):
        raise ConfigError("[stackmap.c] must be a table", path=file)
    return StackmapConfig(
        root=root,
        name=str(table.get("name", root.name)),
        layers=tuple(layers),
        roles=tuple(roles),
        contracts=str(table.get("contracts", "contracts")),
        docs=_strs(table.get("docs", ["docs"]), "docs", file),
        tests=_strs(table.get("tests", ["tests/**"]), "tests", file),
        ignore=tuple(dict.fromkeys(DEFAULT_IGNORE + ignore)),
        store=str(table.get("store", ".stackmap")),
        vector_store=str(table.get("vector_store", "embedded")),
        classify_threshold=threshold,
        python_roots=_strs(table.get("python_roots"), "python_roots", file),
        generated=_strs(table.get("generated"), "generated", file),
        c=_c_config(c_table, file),
    )


def _c_config(table: dict[str, Any], file: str) -> CConfig:
    known = set(CConfig.__slots__)
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"unknown [stackmap.c] keys {unknown}; known: {sorted(known)}", path=file)
    type_args = table.get("type_args", {})
    define = table.get("define", {})
    if not isinstance(type_args, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in type_args.values()
    ):
        raise ConfigError("[stackmap.c] type_args maps macro names to argument indexes", path=file)
    if not isinstance(define, dict) or not all(isinstance(v, str) for v in define.values()):
        raise ConfigError("[stackmap.c] define maps macro names to replacement text", path=file)
    if any("\n" in v for v in define.values()):
        raise ConfigError("[stackmap.c] define replacements must fit on one line", path=file)

    def words(key: str) -> tuple[str, ...]:
        return _strs(table.get(key), f"c.{key}", file)

    return CConfig(
        strip=words("strip"),
        strip_calls=words("strip_calls"),
        type_args=tuple(sorted(type_args.items())),
        loops=words("loops"),
        declarators=words("declarators"),
        define=tuple(sorted(define.items())),
        include_paths=words("include_paths"),
        compile_commands=str(table["compile_commands"]) if "compile_commands" in table else None,
    )
