"""Python import statements: what each binds locally, with relative imports made absolute."""

from __future__ import annotations

import tree_sitter as ts

from mapper.ingest.treesitter import text


def imports_of(node: ts.Node, module: str, path: str) -> list[tuple[str, str, str]]:
    """(local name, what the name is bound to, imported target) for one import statement.

    ``import a.b`` binds ``a`` to ``a`` and imports ``a.b``; every other form binds the local
    name to the imported target.
    """
    out: list[tuple[str, str, str]] = []
    if node.type == "import_statement":
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                target = text(child.child_by_field_name("name"))
                out.append((text(child.child_by_field_name("alias")), target, target))
            else:
                target = text(child)
                head = target.split(".")[0]
                out.append((head, head, target))
        return out
    base = _from_module(node.child_by_field_name("module_name"), module, path)
    names = node.children_by_field_name("name")
    if not names:  # from x import *
        return [("*", base, base)]
    for child in names:
        if child.type == "aliased_import":
            name = text(child.child_by_field_name("name"))
            local = text(child.child_by_field_name("alias"))
        else:
            name = local = text(child)
        target = f"{base}.{name}" if base else name
        out.append((local, target, target))
    return out


def _from_module(node: ts.Node | None, module: str, path: str) -> str:
    if node is None:
        return ""
    if node.type != "relative_import":
        return text(node)
    prefix = next((c for c in node.children if c.type == "import_prefix"), None)
    level = len(text(prefix)) if prefix is not None else 0
    rest = next((text(c) for c in node.children if c.type == "dotted_name"), "")
    package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
    if level > 1:
        package = package[: max(0, len(package) - (level - 1))]
    return ".".join([*package, rest] if rest else package)
