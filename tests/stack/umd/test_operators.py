"""The operator descriptors cover every UMD kernel template and agree with it; the UMD
re-exports the KMD's operator-module API for the layers above."""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
from stack.umd import operators
from stack.umd.templates import (
    default_templates,
    launch_elementwise,
    launch_rows,
    launch_tiled,
)

LAUNCH_NAMES = {launch_elementwise: "elementwise", launch_tiled: "tiled", launch_rows: "rows"}


def test_every_template_has_a_builtin_descriptor_with_its_dtypes_and_launch() -> None:
    templates = default_templates()
    builtin = operators.registry().module("builtin")
    by_kernel = {d.kernel: d for d in builtin.descriptors}
    covered = [k for k in KernelId if k in templates]
    assert len(covered) == len(KernelId) == len(by_kernel)
    for kid in covered:
        t = templates.get(kid)
        d = by_kernel[kid.name]
        first = (d.inputs or d.outputs)[0]
        assert first.dtypes == frozenset(x.name.lower() for x in t.dtypes), kid.name
        assert d.launch_template == LAUNCH_NAMES[t.launch], kid.name


def test_the_umd_reexports_the_operator_module_api() -> None:
    from stack.kmd import opmod

    assert operators.__all__ == opmod.__all__
    assert operators.registry is opmod.registry
    caps = operators.numpy_capabilities()
    sel = operators.registry().select("CONV2D", caps)
    assert (sel.descriptor.qualified_name, sel.backend, sel.fallback) == (
        "builtin/conv2d@1.0.0",
        "numpy",
        False,
    )
