/*
 * refstack_kmd.h - the C ABI of the reference stack's KMD shim (stack/kmd).
 *
 * Ioctl numbers use the Linux _IOC encoding: dir << 30 | size << 16 | 'R' << 8 | nr, where
 * size is the byte size of the argument struct below. Every value here must equal the Python
 * enums stack.kmd.ioctl.Ioctl, stack.kmd.dtypes.DType, stack.kmd.kernels.ids.KernelId and
 * stack.kmd.faults.FaultKind (tests/stack/kmd/test_header.py checks).
 *
 * Instruction blobs (stack/kmd/blob.py) are little-endian: a refstack_blob_header, then
 * param_count refstack_tensor_param, n_ints int64 immediates, n_floats double immediates,
 * and a crc32 (uint32) of every byte before it.
 */
#ifndef REFSTACK_KMD_H
#define REFSTACK_KMD_H

#include <stdint.h>

#define REFSTACK_IOC_TYPE 'R'
#define REFSTACK_BLOB_MAGIC 0x5A5A5A5Au
#define REFSTACK_BLOB_VERSION 1
#define REFSTACK_BLOB_MAX_DIMS 8

/* ioctl numbers */
#define REFSTACK_IOCTL_CREATE_CONTEXT   0x80085201u /* _IOR('R', 1, 8) */
#define REFSTACK_IOCTL_DESTROY_CONTEXT  0x40085202u /* _IOW('R', 2, 8) */
#define REFSTACK_IOCTL_ALLOC            0xC0205203u /* _IOWR('R', 3, 32) */
#define REFSTACK_IOCTL_FREE             0x40105204u /* _IOW('R', 4, 16) */
#define REFSTACK_IOCTL_WRITE            0x40285205u /* _IOW('R', 5, 40) */
#define REFSTACK_IOCTL_READ             0xC0285206u /* _IOWR('R', 6, 40) */
#define REFSTACK_IOCTL_MAP              0xC0185207u /* _IOWR('R', 7, 24) */
#define REFSTACK_IOCTL_CREATE_QUEUE     0xC0085208u /* _IOWR('R', 8, 8) */
#define REFSTACK_IOCTL_DESTROY_QUEUE    0x40085209u /* _IOW('R', 9, 8) */
#define REFSTACK_IOCTL_CREATE_FENCE     0xC010520Au /* _IOWR('R', 10, 16) */
#define REFSTACK_IOCTL_DESTROY_FENCE    0x4008520Bu /* _IOW('R', 11, 8) */
#define REFSTACK_IOCTL_SUBMIT           0x4030520Cu /* _IOW('R', 12, 48) */
#define REFSTACK_IOCTL_FENCE_VALUE      0xC010520Du /* _IOWR('R', 13, 16) */
#define REFSTACK_IOCTL_WAIT_FENCE       0x4018520Eu /* _IOW('R', 14, 24) */
#define REFSTACK_IOCTL_ON_FENCE         0x4020520Fu /* _IOW('R', 15, 32) */
#define REFSTACK_IOCTL_INJECT_FAULT     0x40105210u /* _IOW('R', 16, 16) */
#define REFSTACK_IOCTL_RESET_QUEUE      0x40085211u /* _IOW('R', 17, 8) */
#define REFSTACK_IOCTL_STATS            0x80485212u /* _IOR('R', 18, 72) */
#define REFSTACK_IOCTL_SIGNAL_FENCE     0x40105213u /* _IOW('R', 19, 16) */
#define REFSTACK_IOCTL_RESET_CONTEXT    0x40085214u /* _IOW('R', 20, 8) */

/* element types (contracts/umd.proto DataType has the same values) */
#define REFSTACK_DTYPE_F32   1
#define REFSTACK_DTYPE_F16   2
#define REFSTACK_DTYPE_I8    3
#define REFSTACK_DTYPE_U8    4
#define REFSTACK_DTYPE_I32   5
#define REFSTACK_DTYPE_I64   6
#define REFSTACK_DTYPE_BOOL  7
#define REFSTACK_DTYPE_F64   8

/* kernel ids (blob header kernel_id) */
#define REFSTACK_KERNEL_GEMM           1
#define REFSTACK_KERNEL_MATMUL         2
#define REFSTACK_KERNEL_CONV2D         3
#define REFSTACK_KERNEL_BATCHNORM      4
#define REFSTACK_KERNEL_ADD            5
#define REFSTACK_KERNEL_MUL            6
#define REFSTACK_KERNEL_RELU           7
#define REFSTACK_KERNEL_SOFTMAX        8
#define REFSTACK_KERNEL_LAYERNORM      9
#define REFSTACK_KERNEL_MAXPOOL        10
#define REFSTACK_KERNEL_AVGPOOL        11
#define REFSTACK_KERNEL_GLOBALAVGPOOL  12
#define REFSTACK_KERNEL_QUANTIZE       13
#define REFSTACK_KERNEL_DEQUANTIZE     14
#define REFSTACK_KERNEL_GEMM_I8        15
#define REFSTACK_KERNEL_QLINEARMATMUL  16
#define REFSTACK_KERNEL_TRANSPOSE      17
#define REFSTACK_KERNEL_CONCAT         18
#define REFSTACK_KERNEL_COPY           19
#define REFSTACK_KERNEL_SUB            20
#define REFSTACK_KERNEL_DIV            21
#define REFSTACK_KERNEL_FILL           22
#define REFSTACK_KERNEL_UNARY           23
#define REFSTACK_KERNEL_BINARY          24
#define REFSTACK_KERNEL_WHERE           25
#define REFSTACK_KERNEL_CAST            26
#define REFSTACK_KERNEL_REDUCE          27
#define REFSTACK_KERNEL_ARG_REDUCE      28
#define REFSTACK_KERNEL_CUMSUM          29
#define REFSTACK_KERNEL_TOPK            30
#define REFSTACK_KERNEL_GATHER          31
#define REFSTACK_KERNEL_GATHER_ELEMENTS 32
#define REFSTACK_KERNEL_SLICE           33
#define REFSTACK_KERNEL_PAD             34
#define REFSTACK_KERNEL_EXPAND          35
#define REFSTACK_KERNEL_TILE            36

/* fault kinds (refstack_inject_fault_args.kind takes ECC, HANG, BAD_ADDRESS) */
#define REFSTACK_FAULT_ECC          1
#define REFSTACK_FAULT_HANG         2
#define REFSTACK_FAULT_BAD_ADDRESS  3
#define REFSTACK_FAULT_KERNEL       4
#define REFSTACK_FAULT_DEPENDENCY   5
#define REFSTACK_FAULT_RESET        6

#pragma pack(push, 1)
struct refstack_blob_header {
    uint32_t magic;            /* REFSTACK_BLOB_MAGIC */
    uint16_t version;          /* REFSTACK_BLOB_VERSION */
    uint16_t flags;
    uint32_t kernel_id;        /* REFSTACK_KERNEL_* */
    uint32_t instruction_size; /* total blob bytes, crc32 trailer included */
    uint32_t param_count;
    uint32_t grid[3];          /* launch_config */
    uint32_t block[3];
    uint32_t shared_mem;
    uint32_t n_ints;
    uint32_t n_floats;
};                             /* 56 bytes */

struct refstack_tensor_param {
    uint64_t addr;             /* device virtual address */
    uint64_t nbytes;
    uint8_t dtype;             /* REFSTACK_DTYPE_* */
    uint8_t ndim;
    uint16_t reserved;         /* 0 */
    int64_t dims[REFSTACK_BLOB_MAX_DIMS];
};                             /* 84 bytes */
#pragma pack(pop)

/* ioctl argument structs (naturally aligned) */
struct refstack_context_args { uint32_t ctx; uint32_t pad; };
struct refstack_alloc_args { uint32_t ctx; uint32_t flags; uint64_t nbytes; uint64_t align; uint64_t va; };
struct refstack_free_args { uint32_t ctx; uint32_t pad; uint64_t va; };
struct refstack_rw_args { uint32_t ctx; uint32_t pad; uint64_t va; uint64_t offset; uint64_t nbytes; uint64_t host_ptr; };
struct refstack_map_args { uint32_t ctx; uint32_t pad; uint64_t va; uint64_t host_ptr; };
struct refstack_queue_args { uint32_t ctx; uint32_t queue; };
struct refstack_create_fence_args { uint32_t ctx; uint32_t fence; uint64_t initial; };
struct refstack_fence_args { uint32_t ctx; uint32_t fence; };
struct refstack_submit_args {
    uint32_t ctx; uint32_t queue;
    uint64_t blobs_ptr; uint32_t n_blobs; uint32_t signal_fence; uint64_t signal_value;
    uint64_t waits_ptr; uint32_t n_waits; uint32_t pad;
};
struct refstack_fence_value_args { uint32_t ctx; uint32_t fence; uint64_t value; };
struct refstack_wait_fence_args { uint32_t ctx; uint32_t fence; uint64_t value; int64_t timeout_ns; };
struct refstack_on_fence_args { uint32_t ctx; uint32_t fence; uint64_t value; uint64_t callback; uint64_t user_data; };
struct refstack_inject_fault_args { uint32_t ctx; uint32_t queue; uint32_t kind; uint32_t after; };
struct refstack_stats_args {
    uint64_t contexts, queues, fences, allocations, allocated_bytes, peak_bytes;
    uint64_t submitted, completed, faults;
};

#endif /* REFSTACK_KMD_H */
