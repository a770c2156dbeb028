from __future__ import annotations

import pytest

from stack.kmd.blob import InstructionBlob, LaunchConfig, TensorParam, decode, encode
from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.program import Program, template_from


def _blob(a: int, b: int) -> InstructionBlob:
    return InstructionBlob(
        KernelId.ADD,
        (
            TensorParam(a, 16, DType.F32, (4,)),
            TensorParam(a, 16, DType.F32, (4,)),
            TensorParam(b, 16, DType.F32, (4,)),
        ),
        LaunchConfig((1, 1, 1), (256, 1, 1)),
        (1,),
    )


def test_patching_equals_encoding_with_the_addresses() -> None:
    tmpl = template_from(_blob(0, 0), (0, 0, 1))
    patched = tmpl.patch((0x10000, 0x20000))
    assert patched == encode(_blob(0x10000, 0x20000))
    assert decode(patched).params[2].addr == 0x20000


def test_program_patches_every_blob_and_names_its_main_kernel() -> None:
    t = template_from(_blob(0, 0), (1, 1, 0))
    prog = Program((t, t), (), 1)
    out = prog.patch((7, 9))
    assert len(out) == 2 and prog.kernel_id is KernelId.ADD
    assert [p.addr for p in decode(out[1]).params] == [9, 9, 7]


def test_operand_count_must_match_params() -> None:
    with pytest.raises(ValueError):
        template_from(_blob(0, 0), (0, 1))
