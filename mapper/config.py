"""The map's configuration: ``stackmap.toml`` or ``[tool.stackmap]`` in ``pyproject.toml``.

The config names the stack's layers top to bottom (each with path globs and a one-line
description used to classify unplaced docs), the roles that read the map, where the docs,
contracts and tests live, what to ignore, and where the map is stored.

Globs (:mod:`mapper.globs`) are matched against repository-relative POSIX paths: ``*`` and
``?`` stay inside one path segment, ``**`` spans segments (``a/**`` matches everything under
``a``). A layer path without a wildcard that names a folder means the whole folder
(``stack/umd`` is read as ``stack/umd/**``).

Validation is strict: an unknown key (with the closest known one suggested), a value of the
wrong type or an empty file is a :class:`~mapper.errors.ConfigError` naming the line
(:mod:`mapper.tomlconfig`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapper.errors import ConfigError
from mapper.globs import glob_regex
from mapper.tomlconfig import known_keys, line_of_key, positive_int, read_toml, strs, text_value

CONFIG_FILE = "stackmap.toml"
MAX_CONFIG_BYTES = 1 << 20
TOP_KEYS = ("stackmap", "layers", "roles", "agent")  # [agent] belongs to mapper.agent.llm
STACKMAP_KEYS = (
    "name", "contracts", "docs", "tests", "ignore", "store", "vector_store",
    "classify_threshold", "python_roots", "generated", "c", "layers", "roles", "layering",
    "module_lines",
)  # fmt: skip
LAYERING = ("strict", "relaxed")
LAYER_KEYS = ("id", "name", "paths", "description")
ROLE_KEYS = ("id", "name", "layers", "interests")
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
    # "strict": a layer uses only the one directly below (a skip needs a contract, SM203);
    # "relaxed": any layer below (layers ranked from the code's own dependencies)
    layering: str = "strict"
    module_lines: int | None = None  # the team's module length limit (mapper.scenarios.capacity)

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


def matches_any(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return any(glob_regex(p).match(path) for p in patterns)


def load_config(root: Path) -> StackmapConfig:
    """Read ``ROOT/stackmap.toml``, else ``[tool.stackmap]`` of ``ROOT/pyproject.toml``.

    Raises ConfigError (with the file path) when neither exists or the content is malformed.
    """
    root = root.resolve()
    toml_path = root / CONFIG_FILE
    if toml_path.is_file():
        data, text = read_toml(toml_path, MAX_CONFIG_BYTES)
        if not data:
            raise ConfigError(
                f"{CONFIG_FILE} is empty: it needs a [stackmap] table and [[layers]] entries "
                "(id, paths); run `stackmap init .` to propose one",
                path=CONFIG_FILE,
            )
        known_keys(data, TOP_KEYS, "top-level", text, CONFIG_FILE)
        table = data.get("stackmap", {})
        return _build(root, CONFIG_FILE, table, data.get("layers", []), data.get("roles", []), text)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        data, text = read_toml(pyproject, MAX_CONFIG_BYTES)
        tool = data.get("tool", {}).get("stackmap")
        if isinstance(tool, dict):
            layers = tool.get("layers", [])
            roles = tool.get("roles", [])
            return _build(root, "pyproject.toml", tool, layers, roles, text)
    raise ConfigError(
        f"no {CONFIG_FILE} or [tool.stackmap] in pyproject.toml under {root}; "
        "run `stackmap init PATH` to propose one",
        path=str(toml_path),
    )


def _folder_paths(root: Path, paths: tuple[str, ...]) -> tuple[str, ...]:
    """A layer path without a wildcard naming a folder means everything below it."""
    out = []
    for p in paths:
        bare = p.rstrip("/")
        if not any(c in p for c in "*?[") and bare and (root / bare).is_dir():
            p = f"{bare}/**"
        out.append(p)
    return tuple(out)


def _build(
    root: Path, file: str, table: Any, layers_raw: Any, roles_raw: Any, text: str = ""
) -> StackmapConfig:
    if not isinstance(table, dict) or not isinstance(layers_raw, list):
        raise ConfigError("expected a [stackmap] table and [[layers]] entries", path=file)
    known_keys(table, STACKMAP_KEYS, "[stackmap]", text, file)
    layers: list[LayerConfig] = []
    for i, entry in enumerate(layers_raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ConfigError(f"layers[{i}] needs an id", path=file)
        known_keys(entry, LAYER_KEYS, f"[[layers]] {entry['id']!r}", text, file)
        paths = strs(entry.get("paths"), f"layers[{i}].paths", file)
        layers.append(
            LayerConfig(
                id=entry["id"],
                name=text_value(entry.get("name"), "name", entry["id"], text, CONFIG_FILE),
                paths=_folder_paths(root, paths),
                description=text_value(
                    entry.get("description"), "description", "", text, CONFIG_FILE
                ),
            )
        )
    ids = [layer.id for layer in layers]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"duplicate layer ids in {ids}", path=file)
    roles: list[RoleConfig] = []
    for i, entry in enumerate(roles_raw if isinstance(roles_raw, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ConfigError(f"roles[{i}] needs an id", path=file)
        known_keys(entry, ROLE_KEYS, f"[[roles]] {entry['id']!r}", text, file)
        role_layers = strs(entry.get("layers"), f"roles[{i}].layers", file)
        unknown = [lid for lid in role_layers if lid not in ids]
        if unknown:
            raise ConfigError(f"role {entry['id']!r} names unknown layers {unknown}", path=file)
        roles.append(
            RoleConfig(
                id=entry["id"],
                name=str(entry.get("name", entry["id"])),
                layers=role_layers,
                interests=strs(entry.get("interests"), f"roles[{i}].interests", file),
            )
        )
    threshold = table.get("classify_threshold", 0.35)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ConfigError(
            "classify_threshold must be a number",
            path=file,
            line=line_of_key(text, "classify_threshold"),
        )
    ignore = strs(table.get("ignore"), "ignore", file)
    layering = table.get("layering", "strict")
    if layering not in LAYERING:
        raise ConfigError(
            f"layering must be one of {list(LAYERING)}, not {layering!r}",
            path=file,
            line=line_of_key(text, "layering"),
        )
    c_table = table.get("c", {})
    if not isinstance(c_table, dict):
        raise ConfigError("[stackmap.c] must be a table", path=file)
    return StackmapConfig(
        root=root,
        name=text_value(table.get("name"), "name", root.name, text, CONFIG_FILE),
        layers=tuple(layers),
        roles=tuple(roles),
        contracts=text_value(table.get("contracts"), "contracts", "contracts", text, CONFIG_FILE),
        docs=strs(table.get("docs", ["docs"]), "docs", file),
        tests=strs(table.get("tests", ["tests/**"]), "tests", file),
        ignore=tuple(dict.fromkeys(DEFAULT_IGNORE + ignore)),
        store=text_value(table.get("store"), "store", ".stackmap", text, CONFIG_FILE),
        vector_store=text_value(
            table.get("vector_store"), "vector_store", "embedded", text, CONFIG_FILE
        ),
        classify_threshold=float(threshold),
        python_roots=strs(table.get("python_roots"), "python_roots", file),
        generated=strs(table.get("generated"), "generated", file),
        c=_c_config(c_table, file),
        layering=str(layering),
        module_lines=positive_int(table.get("module_lines"), "module_lines", text, file),
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
        return strs(table.get(key), f"c.{key}", file)

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
