"""The built-in macro vocabulary of :mod:`mapper.ingest.cmacros`: annotation, attribute,
type-argument and declarator macros of the Linux kernel and of common C/C++/CUDA libraries
(ggml, llama.cpp, CUDA, Windows export macros). A repository adds its own in ``[c]`` of
``stackmap.toml``."""

from __future__ import annotations

from collections.abc import Mapping


def _words(names: str) -> tuple[str, ...]:
    return tuple(names.split())


KERNEL_STRIP = _words(
    "__user __iomem __rcu __percpu __force __bitwise __kernel __safe __nocast __must_check "
    "__init __exit __initdata __exitdata __initconst __devinit __devexit __read_mostly "
    "__ro_after_init __always_inline __maybe_unused __always_unused __cold __hot __weak "
    "__pure __noreturn __packed __used __visible __latent_entropy __randomize_layout "
    "__noclone __flatten __attribute_const__ __cacheline_aligned __cacheline_aligned_in_smp "
    "__must_hold_rcu noinline noinline_for_stack asmlinkage __sched __iomem_ptr __user_ptr "
    "__deprecated __malloc __noinline __nocfi __naked __ref __refdata __meminit __cpuinit "
    "__private __counted_by __nonstring __free_pages_ok __lockfunc __fastcall __stdcall "
    "__cdecl __declspec_dllexport __restrict __restrict__ __inline __inline__ __extension__"
)
LIBRARY_STRIP = _words(
    "GGML_API GGML_CALL GGML_BACKEND_API LLAMA_API GGML_RESTRICT GGML_UNUSED_VAR "
    "CUDA_CALLABLE __host__ __device__ __forceinline__ __noinline__ __managed__ __constant__ "
    "__shared__ GGML_NORETURN RESTRICT GGML_CUDA_RESTRICT EXTERN_C WINAPI APIENTRY CALLBACK "
    "DLLEXPORT DLLIMPORT"
)
KERNEL_STRIP_CALLS = _words(
    "__aligned __printf __scanf __acquires __releases __must_hold __section __cond_lock "
    "__alloc_size __assume_aligned __malloc_like __diagnose_as __attribute_format "
    "__declspec __free __cleanup __counted_by_ptr __compiletime_error __no_sanitize __GGML_ATTR "
    "GGML_ATTRIBUTE_FORMAT GGML_BACKEND_DL_IMPL __launch_bounds__ __align__ alignas _Alignas "
    "__attribute__ __attribute _Pragma __builtin_align__"
)
KERNEL_TYPE_ARGS: Mapping[str, int] = {
    "container_of": 1,
    "container_of_const": 1,
    "list_entry": 1,
    "list_first_entry": 1,
    "list_last_entry": 1,
    "list_first_entry_or_null": 1,
    "list_next_entry": -1,
    "hlist_entry": 1,
    "rb_entry": 1,
    "min_t": 0,
    "max_t": 0,
    "clamp_t": 0,
    "clamp_val": -1,
    "sizeof_field": 0,
    "typeof_member": 0,
    "kmalloc_obj": 0,
    "va_arg": 1,
    "offsetof": 0,
    "__same_type": -1,
    "READ_ONCE": -1,
}
KERNEL_DECLARATORS = _words(
    "LIST_HEAD HLIST_HEAD LLIST_HEAD DEVICE_ATTR DEVICE_ATTR_RO DEVICE_ATTR_RW DEVICE_ATTR_WO "
    "INTERVAL_TREE_DEFINE MODULE_DEVICE_TABLE"
)
