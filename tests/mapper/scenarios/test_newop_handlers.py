"""New-op places found through the family the similar op belongs to rather than its name: the
handlers registries enter under its key, the family translator's dispatching methods, the
constants about the family, and the fast paths a new op need not have."""

from __future__ import annotations

import pytest

from mapper.impact import MapView
from mapper.scenarios.newop import walk_new_op
from mapper.scenarios.records import NewOpWalk, PointKind
from tests.mapper.toy_map import build_view, kernel_ids, op_types, rules_module, up_down_config

_OPS = (
    "CONV", "MAXPOOL", "AVGPOOL", "GLOBALAVGPOOL", "GEMM", "MATMUL", "ADD", "SUB", "MUL", "DIV",
    "RELU", "SOFTMAX", "TRANSPOSE", "CONCAT",
)  # fmt: skip
_ONNX = (
    "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "Gemm", "MatMul", "Add", "Sub", "Mul",
    "Div", "Relu", "Softmax", "Transpose", "Concat",
)  # fmt: skip
_EVERY = "\n".join(f"    OpType.{op}: KernelId.{op}," for op in _OPS)
_TEST = "def test_{}_{}() -> None:\n    assert True\n"
FILES = {
    "toy/__init__.py": "",
    "toy/up/__init__.py": "",
    "toy/up/ir.py": op_types(_OPS, _ONNX),
    "toy/up/rules.py": rules_module(
        more="""
        def _pool(node):
            return node


        register(OpType.MAXPOOL)(_pool)
        register(OpType.AVGPOOL)(_pool)


        @register(OpType.GLOBALAVGPOOL)
        def _gap(node):
            return node
        """
    ),
    "toy/up/importers.py": """
        IMPORTERS = {}


        def register(*names):
            def deco(fn):
                for name in names:
                    IMPORTERS[name] = fn
                return fn
            return deco


        @register("MaxPool", "AveragePool")
        def pool(node):
            return node


        @register("GlobalMaxPool")
        def global_max_pool(node):
            return node
    """,
    "toy/up/layout.py": """
        from toy.up.ir import OpType

        NCHW_OPS = frozenset({OpType.CONV, OpType.MAXPOOL, OpType.AVGPOOL, OpType.GLOBALAVGPOOL})
    """,
    "toy/up/fuse.py": """
        from toy.up.ir import OpType

        RELU_HOSTS = frozenset({OpType.MAXPOOL, OpType.GEMM, OpType.ADD, OpType.MATMUL})
    """,
    "toy/down/__init__.py": "",
    "toy/down/kernels.py": kernel_ids(_OPS),
    "toy/down/opcodes.py": "from toy.down.kernels import KernelId\nfrom toy.up.ir import OpType\n"
    f"\nEVERY_OP = {{\n{_EVERY}\n}}\n",
    "toy/down/translate.py": """
        from toy.down.kernels import KernelId
        from toy.up.ir import OpType

        _KERNEL = {
            OpType.CONV: KernelId.CONV,
            OpType.MAXPOOL: KernelId.MAXPOOL,
            OpType.AVGPOOL: KernelId.AVGPOOL,
            OpType.GLOBALAVGPOOL: KernelId.GLOBALAVGPOOL,
        }


        class PoolTranslator:
            def parse(self, op, attrs):
                if op is OpType.CONV:
                    return attrs["group"]
                if op is OpType.GLOBALAVGPOOL:
                    return None
                return attrs["kernel_shape"]

            def infer(self, kernel, shape):
                if kernel is KernelId.GLOBALAVGPOOL:
                    return shape[:2]
                return shape

            def name(self, op):
                return op.value
    """,
    "toy/down/pool_np.py": """
        from toy.down.kernels import KernelId


        def maxpool(x):
            return x


        TABLE = {KernelId.MAXPOOL: maxpool}
    """,
    "toy/down/pool_gpu.py": """
        from toy.down import pool_np
        from toy.down.kernels import KernelId


        def maxpool(x):
            if x is None:
                return pool_np.maxpool(x)
            return x


        TABLE = {KernelId.MAXPOOL: maxpool}
    """,
    "tests/up/test_conv.py": _TEST.format("conv", "matches_onnxruntime")
    + "\n\n"
    + _TEST.format("every_opset_of_conv", "imports")
    + "\n\n"
    + _TEST.format("conv", "without_a_group"),
    "tests/up/test_gemm.py": _TEST.format("gemm", "matches_onnxruntime")
    + "\n\n"
    + _TEST.format("every_opset_of_gemm", "imports")
    + "\n\n"
    + _TEST.format("gemm", "without_a_group"),
    "tests/up/test_relu.py": _TEST.format("relu", "matches_onnxruntime"),
    "tests/up/test_softmax.py": _TEST.format("softmax", "matches_onnxruntime"),
    "tests/up/test_ops.py": """
        CASES = [("MaxPool", 1), ("Conv", 2), ("Gemm", 3), ("Add", 4), ("Relu", 5)]


        def test_the_required_ops_import() -> None:
            required = {"Conv", "MaxPool", "Gemm", "Add", "Relu"}
            assert required
    """,
}
CONFIG = up_down_config("handlers", 'tests = ["tests/**"]\n')


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    return build_view(tmp_path_factory.mktemp("handlers"), FILES, CONFIG, dedent=True)


@pytest.fixture(scope="module")
def roi(view: MapView) -> NewOpWalk:
    return walk_new_op(view, "MaxRoiPool", like="maxpool")


def _predicted(walk: NewOpWalk, path: str, kind: PointKind | None = None) -> set[str]:
    return {p.predicted for p in walk.points if p.path == path and (kind is None or p.kind is kind)}


def test_a_handler_registered_under_the_similar_ops_key_gets_a_new_sibling(
    view: MapView, roi: NewOpWalk
) -> None:
    """register(OpType.MAXPOOL)(_pool) enters _pool for MaxPool: MaxRoiPool's rule is a new
    _max_roi_pool; @register(OpType.GLOBALAVGPOOL) over _gap gives GlobalLpPool's
    _global_lp_pool. pool, entered under "MaxPool", gives max_roi_pool; global_max_pool,
    spelt after MaxPool but entered under "GlobalMaxPool" only, is another op's handler."""
    written = PointKind.IMPLEMENTATION
    assert _predicted(roi, "toy/up/rules.py", written) == {"toy.up.rules._max_roi_pool"}
    assert _predicted(roi, "toy/up/importers.py", written) == {"toy.up.importers.max_roi_pool"}
    assert _predicted(roi, "toy/up/importers.py", PointKind.REGISTRATION) == {
        "toy.up.importers.max_roi_pool"
    }
    lp = walk_new_op(view, "GlobalLpPool", like="globalavgpool")
    assert _predicted(lp, "toy/up/rules.py", written) == {"toy.up.rules._global_lp_pool"}


def test_the_family_translators_dispatching_methods_gain_a_branch(roi: NewOpWalk) -> None:
    """parse branches on CONV and GLOBALAVGPOOL (MaxPool takes its default): it dispatches over
    the family _KERNEL maps and gains a branch. infer names one op of the family, name none:
    neither does. EVERY_OP maps all 14 ops: a table of every op, not a family."""
    assert _predicted(roi, "toy/down/translate.py") == {
        "toy.down.translate._KERNEL",
        "toy.down.translate.PoolTranslator.parse",
    }


def test_a_constant_about_the_family_gains_the_new_op(roi: NewOpWalk) -> None:
    """NCHW_OPS names MaxPool with Conv, AveragePool and GlobalAveragePool, all three of the
    family: it gains MaxRoiPool. RELU_HOSTS names MaxPool with Gemm, Add and MatMul, none of
    the family: behaviour peculiar to those ops."""
    assert _predicted(roi, "toy/up/layout.py") == {"toy.up.layout.NCHW_OPS"}
    assert _predicted(roi, "toy/up/fuse.py") == set()


def test_a_fast_path_falling_back_to_the_similar_ops_kernel_is_not_written(
    roi: NewOpWalk,
) -> None:
    """pool_gpu.maxpool calls pool_np.maxpool: a specialisation of the kernel, which a new op
    need not have. pool_np gets maxroipool and its TABLE row; pool_gpu nothing."""
    assert _predicted(roi, "toy/down/pool_np.py") == {
        "toy.down.pool_np.maxroipool",
        "toy.down.pool_np.TABLE",
    }
    assert _predicted(roi, "toy/down/pool_gpu.py") == set()


def test_templates_in_half_the_modules_count_unless_about_an_attribute_the_op_lacks(
    roi: NewOpWalk,
) -> None:
    """tests/up has four per-op modules. test_{}_matches_onnxruntime is in all four and
    test_every_opset_of_{}_imports in two (half): the new module gets both.
    test_{}_without_a_group is in two, but group is an attribute of Conv that MaxRoiPool has
    not: left out."""
    tests = {p.predicted.rpartition(".")[2] for p in roi.points if p.kind is PointKind.TEST}
    assert {t for t in tests if "roi" in t} == {
        "test_max_roi_pool_matches_onnxruntime",
        "test_every_opset_of_max_roi_pool_imports",
    }


def test_a_plain_list_of_names_in_a_function_is_entered_only_as_a_list_of_every_op(
    roi: NewOpWalk,
) -> None:
    """CASES, rows naming 5 of the 14 ops with MaxPool, gains a row; the set of 5 names that
    test_the_required_ops_import asserts is a set of its own (it would need 10)."""
    assert _predicted(roi, "tests/up/test_ops.py") == {"tests.up.test_ops.CASES"}
