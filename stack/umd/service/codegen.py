"""Regenerates ``umd_pb2.py``, ``umd_pb2_grpc.py`` and ``umd_pb2.pyi`` from ``contracts/umd.proto``.

The generated modules are committed (so installing needs no code generation); a test checks that
regenerating gives identical files. ``python -m stack.umd.service.codegen`` rewrites them.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

#: The repository root (this file is stack/umd/service/codegen.py).
ROOT = Path(__file__).resolve().parents[3]
PROTO = ROOT / "contracts" / "umd.proto"
PACKAGE_DIR = "stack/umd/service"
GENERATED = ("umd_pb2.py", "umd_pb2_grpc.py", "umd_pb2.pyi")


def generate(out_root: Path) -> list[Path]:
    """Run protoc on the contract into ``out_root/stack/umd/service``; returns the files written.

    The proto is mapped to the virtual path ``stack/umd/service/umd.proto`` so that the
    generated gRPC module imports its messages by their package path.
    """
    from grpc_tools import protoc  # imported here: only code generation needs it

    with tempfile.TemporaryDirectory() as tmp:
        virtual = Path(tmp) / PACKAGE_DIR
        virtual.mkdir(parents=True)
        shutil.copyfile(PROTO, virtual / "umd.proto")
        args = [
            "protoc",
            f"-I{tmp}",
            f"--python_out={out_root}",
            f"--pyi_out={out_root}",
            f"--grpc_python_out={out_root}",
            f"{PACKAGE_DIR}/umd.proto",
        ]
        if protoc.main(args) != 0:
            raise RuntimeError(f"protoc failed on {PROTO}")
    return [out_root / PACKAGE_DIR / name for name in GENERATED]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for path in generate(Path(tmp)):
            shutil.copyfile(path, ROOT / PACKAGE_DIR / path.name)
            sys.stderr.write(f"wrote {PACKAGE_DIR}/{path.name}\n")


if __name__ == "__main__":
    main()
