"""Foreign stacks from extracts of real driver code (fixtures/foreign/, see its README):
ioctls from a Python user-space driver to a C kernel driver, an ops table of function
pointers, C++ virtual overrides, and a header behind export macros."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mapper.graph import MapGraph
from mapper.ingest import IngestReport, ingest, load_map
from tests.mapper.conftest import FIXTURES

FOREIGN = FIXTURES / "foreign"
KFD_H = "symbol:c:kernel/include/uapi/linux/kfd_ioctl.h:"
CHARDEV = "symbol:c:kernel/drivers/gpu/drm/amd/amdkfd/kfd_chardev.c:"
CHARDEV_PATH = "kernel/drivers/gpu/drm/amd/amdkfd/kfd_chardev.c"
OPS = "symbol:tinygrad.runtime.ops_amd.KFDIface."
AUTOGEN = "symbol:tinygrad.runtime.autogen.kfd."
IMPL_H = "symbol:c:ggml/src/ggml-backend-impl.h:ggml_backend_i::"
CORE = "symbol:c:ggml/src/ggml-backend.cpp:"
BLAS = "symbol:c:ggml/src/ggml-blas/ggml-blas.cpp:"


def _built(name: str, tmp_path: Path) -> tuple[IngestReport, MapGraph]:
    root = tmp_path / name
    shutil.copytree(FOREIGN / name, root)
    return ingest(root, embed=False, progress=False), load_map(root)


def _bindings(g: MapGraph) -> set[tuple[str, str, str, str, int]]:
    return {(a["binding"], s, t, a["path"], a["line"]) for s, t, a in g.edges() if a.get("binding")}


@pytest.fixture
def kfd(tmp_path: Path) -> tuple[IngestReport, MapGraph]:
    return _built("kfd", tmp_path)


@pytest.fixture
def ggml(tmp_path: Path) -> tuple[IngestReport, MapGraph]:
    return _built("ggml", tmp_path)


def test_kfd_ioctls_link_user_space_uses_to_kernel_dispatch(
    kfd: tuple[IngestReport, MapGraph],
) -> None:
    report, g = kfd
    assert report.skips == () and report.files == {"code": 4}
    assert all(not a["warnings"] for _, a in g.nodes() if a["kind"] == "file")
    ops = "user/tinygrad/runtime/ops_amd.py"
    autogen = "user/tinygrad/runtime/autogen/kfd.py"
    header = "kernel/include/uapi/linux/kfd_ioctl.h"
    assert _bindings(g) == {
        (
            "ioctl_arg",
            KFD_H + "AMDKFD_IOC_GET_VERSION",
            KFD_H + "kfd_ioctl_get_version_args",
            header,
            66,
        ),
        (
            "ioctl_arg",
            KFD_H + "AMDKFD_IOC_CREATE_QUEUE",
            KFD_H + "kfd_ioctl_create_queue_args",
            header,
            69,
        ),
        (
            "ioctl_arg",
            KFD_H + "AMDKFD_IOC_DESTROY_QUEUE",
            KFD_H + "kfd_ioctl_destroy_queue_args",
            header,
            72,
        ),
        (
            "ioctl_arg",
            AUTOGEN + "AMDKFD_IOC_GET_VERSION",
            AUTOGEN + "struct_kfd_ioctl_get_version_args",
            autogen,
            42,
        ),
        (
            "ioctl_arg",
            AUTOGEN + "AMDKFD_IOC_CREATE_QUEUE",
            AUTOGEN + "struct_kfd_ioctl_create_queue_args",
            autogen,
            43,
        ),
        (
            "ioctl_dispatch",
            CHARDEV + "kfd_ioctl_get_version",
            KFD_H + "AMDKFD_IOC_GET_VERSION",
            CHARDEV_PATH,
            123,
        ),
        (
            "ioctl_dispatch",
            CHARDEV + "kfd_ioctl_create_queue",
            KFD_H + "AMDKFD_IOC_CREATE_QUEUE",
            CHARDEV_PATH,
            126,
        ),
        (
            "ioctl_dispatch",
            CHARDEV + "kfd_ioctl_destroy_queue",
            KFD_H + "AMDKFD_IOC_DESTROY_QUEUE",
            CHARDEV_PATH,
            129,
        ),
        ("ioctl_use", OPS + "__init__", KFD_H + "AMDKFD_IOC_GET_VERSION", ops, 14),
        ("ioctl_use", OPS + "create_queue", KFD_H + "AMDKFD_IOC_CREATE_QUEUE", ops, 18),
        ("ioctl_route", OPS + "__init__", CHARDEV + "kfd_ioctl_get_version", ops, 14),
        ("ioctl_route", OPS + "create_queue", CHARDEV + "kfd_ioctl_create_queue", ops, 18),
        (
            "ioctl_mirror",
            AUTOGEN + "AMDKFD_IOC_GET_VERSION",
            KFD_H + "AMDKFD_IOC_GET_VERSION",
            autogen,
            42,
        ),
        (
            "ioctl_mirror",
            AUTOGEN + "AMDKFD_IOC_CREATE_QUEUE",
            KFD_H + "AMDKFD_IOC_CREATE_QUEUE",
            autogen,
            43,
        ),
        (
            "ioctl_mirror",
            AUTOGEN + "AMDKFD_IOC_DESTROY_QUEUE",
            KFD_H + "AMDKFD_IOC_DESTROY_QUEUE",
            autogen,
            44,
        ),
    }
    ioctls = {n: a["arg_struct"] for n, a in g.nodes() if a.get("symbol_kind") == "ioctl"}
    assert {n: s for n, s in ioctls.items() if n.startswith(KFD_H)} == {
        KFD_H + "AMDKFD_IOC_GET_VERSION": "kfd_ioctl_get_version_args",
        KFD_H + "AMDKFD_IOC_CREATE_QUEUE": "kfd_ioctl_create_queue_args",
        KFD_H + "AMDKFD_IOC_DESTROY_QUEUE": "kfd_ioctl_destroy_queue_args",
    }


def test_kfd_kernel_driver_is_no_hole_once_its_ioctls_are_used(
    kfd: tuple[IngestReport, MapGraph],
) -> None:
    report, _ = kfd
    assert sorted((h.node, h.missing) for h in report.holes) == [
        ("component:kernel.include", ("downstream",)),
        ("component:user.tinygrad", ("upstream",)),
    ]


def test_ggml_ops_table_slots_calls_through_them_and_overrides(
    ggml: tuple[IngestReport, MapGraph],
) -> None:
    report, g = ggml
    assert report.skips == () and report.files == {"code": 7}
    assert all(not a["warnings"] for _, a in g.nodes() if a["kind"] == "file")
    core, blas = "ggml/src/ggml-backend.cpp", "ggml/src/ggml-blas/ggml-blas.cpp"
    amx = "ggml/src/ggml-cpu/amx/amx.cpp"
    traits = "symbol:c:ggml/src/ggml-cpu/traits.h:ggml::cpu::tensor_traits::"
    derived = "symbol:c:ggml/src/ggml-cpu/amx/amx.cpp:ggml::cpu::amx::tensor_traits::"
    assert _bindings(g) == {
        ("inherit", derived.removesuffix("::"), traits.removesuffix("::"), amx, 6),
        ("slot_call", CORE + "ggml_backend_name", IMPL_H + "get_name", core, 8),
        ("slot_call", CORE + "ggml_backend_free", IMPL_H + "free", core, 16),
        (
            "slot_call",
            CORE + "ggml_backend_graph_compute_async",
            IMPL_H + "graph_compute",
            core,
            22,
        ),
        ("slot_route", CORE + "ggml_backend_name", BLAS + "ggml_backend_blas_get_name", core, 8),
        ("slot_route", CORE + "ggml_backend_free", BLAS + "ggml_backend_blas_free", core, 16),
        (
            "slot_route",
            CORE + "ggml_backend_graph_compute_async",
            BLAS + "ggml_backend_blas_graph_compute",
            core,
            22,
        ),
        ("slot_bind", BLAS + "ggml_backend_blas_get_name", IMPL_H + "get_name", blas, 23),
        ("slot_bind", BLAS + "ggml_backend_blas_free", IMPL_H + "free", blas, 24),
        ("slot_bind", BLAS + "ggml_backend_blas_graph_compute", IMPL_H + "graph_compute", blas, 35),
        ("override", derived + "work_size", traits + "work_size", amx, 7),
        ("override", derived + "compute_forward", traits + "compute_forward", amx, 12),
    }
    slots = sorted(n for n, a in g.nodes() if a.get("symbol_kind") == "field")
    assert len(slots) == 16 and slots[0] == IMPL_H + "cpy_tensor_async"


def test_header_behind_export_macros_declares_and_never_calls(
    ggml: tuple[IngestReport, MapGraph],
) -> None:
    report, g = ggml
    header = "ggml/include/ggml-backend.h"
    declared = sorted(
        (a["name"], a["symbol_kind"])
        for n, a in g.nodes()
        if a["kind"] == "symbol" and a["path"] == header
    )
    assert declared == [
        ("GGML_BACKEND_API", "macro"),
        ("ggml_backend_free", "function"),
        ("ggml_backend_graph_compute_async", "function"),
        ("ggml_backend_name", "function"),
    ]
    calls = {(s, t) for s, t, a in g.edges() if a["kind"] == "calls" and a["path"] == header}
    assert calls == set()
    loader = "symbol:c:src/llama-model-loader.cpp:llama_release_upload_backend"
    assert [t for s, t, a in g.edges() if s == loader and a["kind"] == "calls"] == [
        CORE + "ggml_backend_free"
    ]
    assert sorted((h.node, h.missing) for h in report.holes) == [
        ("component:backends.ggml-cpu", ("upstream",)),
        ("component:llama.llama-model-loader", ("upstream",)),
    ]


def test_table_entry_whose_handler_lives_elsewhere_is_dispatched_by_the_table_file(
    tmp_path: Path,
) -> None:
    files = {  # lines of Linux 6.1 include/uapi/drm/drm.h, drm_ioctl.c; ggml-virtgpu (0.3.36)
        "kernel/drm.h": "#define DRM_IOCTL_GEM_CLOSE\t\tDRM_IOW (0x09, struct drm_gem_close)\n",
        "kernel/drm_ioctl.c": "static const struct drm_ioctl_desc drm_ioctls[] = {\n"
        "\tDRM_IOCTL_DEF(DRM_IOCTL_GEM_CLOSE, drm_gem_close_ioctl, DRM_RENDER_ALLOW),\n};\n",
        "user/virtgpu-shm.cpp": "void virtgpu_ioctl_gem_close(virtgpu * gpu, uint32_t h) {\n"
        "    const int ret = virtgpu_ioctl(gpu, DRM_IOCTL_GEM_CLOSE, &args);\n}\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    config = (FOREIGN / "kfd" / "stackmap.toml").read_text()
    (tmp_path / "stackmap.toml").write_text(config)
    ingest(tmp_path, embed=False, progress=False)
    ioctl = "symbol:c:kernel/drm.h:DRM_IOCTL_GEM_CLOSE"
    assert _bindings(load_map(tmp_path)) == {
        ("ioctl_dispatch", "file:kernel/drm_ioctl.c", ioctl, "kernel/drm_ioctl.c", 2),
        (
            "ioctl_use",
            "symbol:c:user/virtgpu-shm.cpp:virtgpu_ioctl_gem_close",
            ioctl,
            "user/virtgpu-shm.cpp",
            2,
        ),
    }


def test_switch_on_the_command_dispatches_each_case(tmp_path: Path) -> None:
    report, g = _built("udmabuf", tmp_path)
    assert all(not a["warnings"] for _, a in g.nodes() if a["kind"] == "file")
    driver = "kernel/drivers/dma-buf/udmabuf.c"
    uapi = "symbol:c:kernel/include/uapi/linux/udmabuf.h:"
    entry = f"symbol:c:{driver}:udmabuf_ioctl"
    header = "kernel/include/uapi/linux/udmabuf.h"
    assert _bindings(g) == {
        ("ioctl_arg", uapi + "UDMABUF_CREATE", uapi + "udmabuf_create", header, 30),
        ("ioctl_arg", uapi + "UDMABUF_CREATE_LIST", uapi + "udmabuf_create_list", header, 31),
        ("ioctl_dispatch", entry, uapi + "UDMABUF_CREATE", driver, 24),
        ("ioctl_dispatch", entry, uapi + "UDMABUF_CREATE_LIST", driver, 27),
    }
    includes = {(s, t) for s, t, a in g.edges() if a["kind"] == "imports" and s == f"file:{driver}"}
    assert includes == {(f"file:{driver}", "file:kernel/include/uapi/linux/udmabuf.h")}
    ioctls = {a["name"]: a["arg_struct"] for _, a in g.nodes() if a.get("symbol_kind") == "ioctl"}
    assert ioctls == {
        "UDMABUF_CREATE": "udmabuf_create",
        "UDMABUF_CREATE_LIST": "udmabuf_create_list",
    }
    assert report.skips == ()


def test_generated_code_is_indexed_but_never_a_hole(tmp_path: Path) -> None:
    files = {
        "user/app/main.py": "from autogen import kfd\n\ndef version(fd):\n"
        "    return kfd.AMDKFD_IOC_GET_VERSION(fd)\n",
        "user/autogen/kfd.py": "AMDKFD_IOC_GET_VERSION = AMDKFD_IOR(0x01, struct_args)\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    config = (
        '[stackmap]\ndocs = []\ntests = []\npython_roots = ["user"]\n{}\n'
        '[[layers]]\nid = "user"\npaths = ["user/**"]\n'
    )
    (tmp_path / "stackmap.toml").write_text(config.format(""))
    before = ingest(tmp_path, embed=False, progress=False)
    assert [(h.node, h.missing) for h in before.holes] == [
        ("component:user.app", ("upstream",)),
        ("component:user.autogen", ("downstream",)),
    ]
    (tmp_path / "stackmap.toml").write_text(config.format('generated = ["**/autogen/**"]'))
    after = ingest(tmp_path, embed=False, progress=False)
    assert [(h.node, h.missing) for h in after.holes] == [("component:user.app", ("upstream",))]
    g = load_map(tmp_path)
    assert g.node("file:user/autogen/kfd.py")["generated"] is True
    assert g.node("symbol:autogen.kfd.AMDKFD_IOC_GET_VERSION")["symbol_kind"] == "ioctl"


def test_a_cpp_method_call_is_no_call_through_a_slot_of_its_name(tmp_path: Path) -> None:
    """ggml's ``ggml_backend_i`` has a ``graph_compute`` slot; ggml-rpc's server has a
    ``graph_compute`` method and waits on a ``std::future`` (``get``, a slot of another table).
    C++ calls on a plain object are methods, and so is one through a pointer that a method of
    the repository is named as (``srv->graph_compute``); one through a pointer naming no
    method (``cbs->get``) or reached through the ops table a struct holds
    (``backend->iface.graph_compute``) is a slot call, as any member call in C is."""
    files = {
        "ggml/impl.h": "struct ggml_backend_i {\n"
        "    void (*graph_compute)(struct ggml_backend * backend, struct ggml_cgraph * g);\n"
        "    void * (*get)(struct ggml_backend_reg * reg);\n};\n",
        "ggml/backend.cpp": "void compute(ggml_backend_t backend, ggml_cgraph * g) {\n"
        "    backend->iface.graph_compute(backend, g);\n}\n",
        "ggml/rpc.cpp": "void serve(rpc_server & server, std::future<int> & task) {\n"
        "    server.graph_compute(input, response);\n    task.get();\n}\n"
        "class rpc_server {\n  public:\n    bool graph_compute(int input, int response) {\n"
        "        return true;\n    }\n};\n"
        "void relay(rpc_server * srv, ggml_backend_i * cbs) {\n"
        "    srv->graph_compute(1, 2);\n    cbs->get(0);\n}\n",
        "ggml/plain.c": "void run(struct ggml_backend_i * iface, struct ggml_backend * b) {\n"
        "    iface->graph_compute(b, 0);\n}\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    config = '[stackmap]\ndocs = []\ntests = []\n\n[[layers]]\nid = "ggml"\npaths = ["ggml/**"]\n'
    (tmp_path / "stackmap.toml").write_text(config)
    ingest(tmp_path, embed=False, progress=False)
    slot = "symbol:c:ggml/impl.h:ggml_backend_i::graph_compute"
    assert {b for b in _bindings(load_map(tmp_path)) if b[0] == "slot_call"} == {
        ("slot_call", "symbol:c:ggml/backend.cpp:compute", slot, "ggml/backend.cpp", 2),
        ("slot_call", "symbol:c:ggml/plain.c:run", slot, "ggml/plain.c", 2),
        (
            "slot_call",
            "symbol:c:ggml/rpc.cpp:relay",
            "symbol:c:ggml/impl.h:ggml_backend_i::get",
            "ggml/rpc.cpp",
            13,
        ),
    }
