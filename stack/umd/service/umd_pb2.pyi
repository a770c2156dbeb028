from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DataType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DT_UNSPECIFIED: _ClassVar[DataType]
    DT_F32: _ClassVar[DataType]
    DT_F16: _ClassVar[DataType]
    DT_I8: _ClassVar[DataType]
    DT_U8: _ClassVar[DataType]
    DT_I32: _ClassVar[DataType]
    DT_I64: _ClassVar[DataType]
    DT_BOOL: _ClassVar[DataType]
    DT_F64: _ClassVar[DataType]

class OpType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OP_UNSPECIFIED: _ClassVar[OpType]
    OP_GEMM: _ClassVar[OpType]
    OP_MATMUL: _ClassVar[OpType]
    OP_CONV2D: _ClassVar[OpType]
    OP_BATCHNORM: _ClassVar[OpType]
    OP_ADD: _ClassVar[OpType]
    OP_MUL: _ClassVar[OpType]
    OP_RELU: _ClassVar[OpType]
    OP_SOFTMAX: _ClassVar[OpType]
    OP_LAYERNORM: _ClassVar[OpType]
    OP_MAXPOOL: _ClassVar[OpType]
    OP_AVGPOOL: _ClassVar[OpType]
    OP_GLOBALAVGPOOL: _ClassVar[OpType]
    OP_QUANTIZE: _ClassVar[OpType]
    OP_DEQUANTIZE: _ClassVar[OpType]
    OP_MATMUL_INTEGER: _ClassVar[OpType]
    OP_QLINEARMATMUL: _ClassVar[OpType]
    OP_TRANSPOSE: _ClassVar[OpType]
    OP_CONCAT: _ClassVar[OpType]
    OP_COPY: _ClassVar[OpType]
    OP_SUB: _ClassVar[OpType]
    OP_DIV: _ClassVar[OpType]
    OP_FILL: _ClassVar[OpType]
    OP_UNARY: _ClassVar[OpType]
    OP_BINARY: _ClassVar[OpType]
    OP_WHERE: _ClassVar[OpType]
    OP_CAST: _ClassVar[OpType]
    OP_REDUCE: _ClassVar[OpType]
    OP_ARG_REDUCE: _ClassVar[OpType]
    OP_CUMSUM: _ClassVar[OpType]
    OP_TOPK: _ClassVar[OpType]
    OP_GATHER: _ClassVar[OpType]
    OP_GATHER_ELEMENTS: _ClassVar[OpType]
    OP_SLICE: _ClassVar[OpType]
    OP_PAD: _ClassVar[OpType]
    OP_EXPAND: _ClassVar[OpType]
    OP_TILE: _ClassVar[OpType]
    OP_GATHER_ND: _ClassVar[OpType]
    OP_CONV_TRANSPOSE: _ClassVar[OpType]
    OP_SCATTER_ND: _ClassVar[OpType]
    OP_SCATTER_ELEMENTS: _ClassVar[OpType]
    OP_MAXUNPOOL: _ClassVar[OpType]
    OP_GLOBALLPPOOL: _ClassVar[OpType]
    OP_MAXROIPOOL: _ClassVar[OpType]
    OP_REVERSE_SEQUENCE: _ClassVar[OpType]
    OP_ROIALIGN: _ClassVar[OpType]
    OP_GRID_SAMPLE: _ClassVar[OpType]
    OP_TENSOR_SCATTER: _ClassVar[OpType]
    OP_COL2IM: _ClassVar[OpType]
    OP_AFFINE_GRID: _ClassVar[OpType]
    OP_DEFORM_CONV: _ClassVar[OpType]
    OP_CENTER_CROP_PAD: _ClassVar[OpType]
    OP_DYNAMIC_QUANTIZE_LINEAR: _ClassVar[OpType]
    OP_CONV_INTEGER: _ClassVar[OpType]
    OP_QLINEARCONV: _ClassVar[OpType]
    OP_BITCAST: _ClassVar[OpType]
    OP_DET: _ClassVar[OpType]
    OP_NEGATIVE_LOG_LIKELIHOOD_LOSS: _ClassVar[OpType]
    OP_SOFTMAX_CROSS_ENTROPY_LOSS: _ClassVar[OpType]
    OP_ROTARY_EMBEDDING: _ClassVar[OpType]
    OP_EINSUM: _ClassVar[OpType]
    OP_SWIGLU: _ClassVar[OpType]
    OP_CAUSAL_CONV_WITH_STATE: _ClassVar[OpType]
    OP_DFT: _ClassVar[OpType]
    OP_STFT: _ClassVar[OpType]
    OP_ATTENTION: _ClassVar[OpType]
    OP_RNN: _ClassVar[OpType]
    OP_GRU: _ClassVar[OpType]
    OP_LINEAR_ATTENTION: _ClassVar[OpType]
    OP_LSTM: _ClassVar[OpType]

class Layout(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LAYOUT_ANY: _ClassVar[Layout]
    LAYOUT_NCHW: _ClassVar[Layout]
    LAYOUT_NHWC: _ClassVar[Layout]
DT_UNSPECIFIED: DataType
DT_F32: DataType
DT_F16: DataType
DT_I8: DataType
DT_U8: DataType
DT_I32: DataType
DT_I64: DataType
DT_BOOL: DataType
DT_F64: DataType
OP_UNSPECIFIED: OpType
OP_GEMM: OpType
OP_MATMUL: OpType
OP_CONV2D: OpType
OP_BATCHNORM: OpType
OP_ADD: OpType
OP_MUL: OpType
OP_RELU: OpType
OP_SOFTMAX: OpType
OP_LAYERNORM: OpType
OP_MAXPOOL: OpType
OP_AVGPOOL: OpType
OP_GLOBALAVGPOOL: OpType
OP_QUANTIZE: OpType
OP_DEQUANTIZE: OpType
OP_MATMUL_INTEGER: OpType
OP_QLINEARMATMUL: OpType
OP_TRANSPOSE: OpType
OP_CONCAT: OpType
OP_COPY: OpType
OP_SUB: OpType
OP_DIV: OpType
OP_FILL: OpType
OP_UNARY: OpType
OP_BINARY: OpType
OP_WHERE: OpType
OP_CAST: OpType
OP_REDUCE: OpType
OP_ARG_REDUCE: OpType
OP_CUMSUM: OpType
OP_TOPK: OpType
OP_GATHER: OpType
OP_GATHER_ELEMENTS: OpType
OP_SLICE: OpType
OP_PAD: OpType
OP_EXPAND: OpType
OP_TILE: OpType
OP_GATHER_ND: OpType
OP_CONV_TRANSPOSE: OpType
OP_SCATTER_ND: OpType
OP_SCATTER_ELEMENTS: OpType
OP_MAXUNPOOL: OpType
OP_GLOBALLPPOOL: OpType
OP_MAXROIPOOL: OpType
OP_REVERSE_SEQUENCE: OpType
OP_ROIALIGN: OpType
OP_GRID_SAMPLE: OpType
OP_TENSOR_SCATTER: OpType
OP_COL2IM: OpType
OP_AFFINE_GRID: OpType
OP_DEFORM_CONV: OpType
OP_CENTER_CROP_PAD: OpType
OP_DYNAMIC_QUANTIZE_LINEAR: OpType
OP_CONV_INTEGER: OpType
OP_QLINEARCONV: OpType
OP_BITCAST: OpType
OP_DET: OpType
OP_NEGATIVE_LOG_LIKELIHOOD_LOSS: OpType
OP_SOFTMAX_CROSS_ENTROPY_LOSS: OpType
OP_ROTARY_EMBEDDING: OpType
OP_EINSUM: OpType
OP_SWIGLU: OpType
OP_CAUSAL_CONV_WITH_STATE: OpType
OP_DFT: OpType
OP_STFT: OpType
OP_ATTENTION: OpType
OP_RNN: OpType
OP_GRU: OpType
OP_LINEAR_ATTENTION: OpType
OP_LSTM: OpType
LAYOUT_ANY: Layout
LAYOUT_NCHW: Layout
LAYOUT_NHWC: Layout

class Status(_message.Message):
    __slots__ = ("code", "message", "field")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    field: str
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., field: _Optional[str] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("client_name", "keepalive_timeout_ms")
    CLIENT_NAME_FIELD_NUMBER: _ClassVar[int]
    KEEPALIVE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    client_name: str
    keepalive_timeout_ms: int
    def __init__(self, client_name: _Optional[str] = ..., keepalive_timeout_ms: _Optional[int] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("session_id", "keepalive_timeout_ms", "server_start_ms", "backend")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KEEPALIVE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    SERVER_START_MS_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    keepalive_timeout_ms: int
    server_start_ms: int
    backend: str
    def __init__(self, session_id: _Optional[int] = ..., keepalive_timeout_ms: _Optional[int] = ..., server_start_ms: _Optional[int] = ..., backend: _Optional[str] = ...) -> None: ...

class DestroySessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    def __init__(self, session_id: _Optional[int] = ...) -> None: ...

class KeepAliveRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    def __init__(self, session_id: _Optional[int] = ...) -> None: ...

class TensorDesc(_message.Message):
    __slots__ = ("tensor_id", "shape", "data_type", "byte_size", "device_addr", "layout")
    TENSOR_ID_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DATA_TYPE_FIELD_NUMBER: _ClassVar[int]
    BYTE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ADDR_FIELD_NUMBER: _ClassVar[int]
    LAYOUT_FIELD_NUMBER: _ClassVar[int]
    tensor_id: int
    shape: _containers.RepeatedScalarFieldContainer[int]
    data_type: DataType
    byte_size: int
    device_addr: int
    layout: Layout
    def __init__(self, tensor_id: _Optional[int] = ..., shape: _Optional[_Iterable[int]] = ..., data_type: _Optional[_Union[DataType, str]] = ..., byte_size: _Optional[int] = ..., device_addr: _Optional[int] = ..., layout: _Optional[_Union[Layout, str]] = ...) -> None: ...

class IntList(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, values: _Optional[_Iterable[int]] = ...) -> None: ...

class FloatList(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class AttrValue(_message.Message):
    __slots__ = ("i", "f", "s", "ints", "floats")
    I_FIELD_NUMBER: _ClassVar[int]
    F_FIELD_NUMBER: _ClassVar[int]
    S_FIELD_NUMBER: _ClassVar[int]
    INTS_FIELD_NUMBER: _ClassVar[int]
    FLOATS_FIELD_NUMBER: _ClassVar[int]
    i: int
    f: float
    s: str
    ints: IntList
    floats: FloatList
    def __init__(self, i: _Optional[int] = ..., f: _Optional[float] = ..., s: _Optional[str] = ..., ints: _Optional[_Union[IntList, _Mapping]] = ..., floats: _Optional[_Union[FloatList, _Mapping]] = ...) -> None: ...

class OpRequest(_message.Message):
    __slots__ = ("session_id", "request_id", "op_type", "inputs", "outputs", "attrs", "translate_only", "wait")
    class AttrsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AttrValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AttrValue, _Mapping]] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OP_TYPE_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    ATTRS_FIELD_NUMBER: _ClassVar[int]
    TRANSLATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    request_id: int
    op_type: OpType
    inputs: _containers.RepeatedCompositeFieldContainer[TensorDesc]
    outputs: _containers.RepeatedCompositeFieldContainer[TensorDesc]
    attrs: _containers.MessageMap[str, AttrValue]
    translate_only: bool
    wait: bool
    def __init__(self, session_id: _Optional[int] = ..., request_id: _Optional[int] = ..., op_type: _Optional[_Union[OpType, str]] = ..., inputs: _Optional[_Iterable[_Union[TensorDesc, _Mapping]]] = ..., outputs: _Optional[_Iterable[_Union[TensorDesc, _Mapping]]] = ..., attrs: _Optional[_Mapping[str, AttrValue]] = ..., translate_only: _Optional[bool] = ..., wait: _Optional[bool] = ...) -> None: ...

class LaunchConfig(_message.Message):
    __slots__ = ("grid", "block", "shared_mem")
    GRID_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    SHARED_MEM_FIELD_NUMBER: _ClassVar[int]
    grid: _containers.RepeatedScalarFieldContainer[int]
    block: _containers.RepeatedScalarFieldContainer[int]
    shared_mem: int
    def __init__(self, grid: _Optional[_Iterable[int]] = ..., block: _Optional[_Iterable[int]] = ..., shared_mem: _Optional[int] = ...) -> None: ...

class HardwareInstruction(_message.Message):
    __slots__ = ("kernel_id", "instruction_blob", "launch_config", "param_addrs")
    KERNEL_ID_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_BLOB_FIELD_NUMBER: _ClassVar[int]
    LAUNCH_CONFIG_FIELD_NUMBER: _ClassVar[int]
    PARAM_ADDRS_FIELD_NUMBER: _ClassVar[int]
    kernel_id: int
    instruction_blob: bytes
    launch_config: LaunchConfig
    param_addrs: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, kernel_id: _Optional[int] = ..., instruction_blob: _Optional[bytes] = ..., launch_config: _Optional[_Union[LaunchConfig, _Mapping]] = ..., param_addrs: _Optional[_Iterable[int]] = ...) -> None: ...

class OpResponse(_message.Message):
    __slots__ = ("status", "instructions", "translate_latency_us", "request_id", "cache_hit", "fence_value", "submitted", "primary")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    TRANSLATE_LATENCY_US_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CACHE_HIT_FIELD_NUMBER: _ClassVar[int]
    FENCE_VALUE_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_FIELD_NUMBER: _ClassVar[int]
    PRIMARY_FIELD_NUMBER: _ClassVar[int]
    status: Status
    instructions: _containers.RepeatedCompositeFieldContainer[HardwareInstruction]
    translate_latency_us: int
    request_id: int
    cache_hit: bool
    fence_value: int
    submitted: bool
    primary: int
    def __init__(self, status: _Optional[_Union[Status, _Mapping]] = ..., instructions: _Optional[_Iterable[_Union[HardwareInstruction, _Mapping]]] = ..., translate_latency_us: _Optional[int] = ..., request_id: _Optional[int] = ..., cache_hit: _Optional[bool] = ..., fence_value: _Optional[int] = ..., submitted: _Optional[bool] = ..., primary: _Optional[int] = ...) -> None: ...

class BatchOpRequest(_message.Message):
    __slots__ = ("session_id", "ops", "translate_only", "wait", "request_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    OPS_FIELD_NUMBER: _ClassVar[int]
    TRANSLATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    ops: _containers.RepeatedCompositeFieldContainer[OpRequest]
    translate_only: bool
    wait: bool
    request_id: int
    def __init__(self, session_id: _Optional[int] = ..., ops: _Optional[_Iterable[_Union[OpRequest, _Mapping]]] = ..., translate_only: _Optional[bool] = ..., wait: _Optional[bool] = ..., request_id: _Optional[int] = ...) -> None: ...

class BatchOpResponse(_message.Message):
    __slots__ = ("status", "responses", "fence_value", "translate_latency_us")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    FENCE_VALUE_FIELD_NUMBER: _ClassVar[int]
    TRANSLATE_LATENCY_US_FIELD_NUMBER: _ClassVar[int]
    status: Status
    responses: _containers.RepeatedCompositeFieldContainer[OpResponse]
    fence_value: int
    translate_latency_us: int
    def __init__(self, status: _Optional[_Union[Status, _Mapping]] = ..., responses: _Optional[_Iterable[_Union[OpResponse, _Mapping]]] = ..., fence_value: _Optional[int] = ..., translate_latency_us: _Optional[int] = ...) -> None: ...

class TensorChunk(_message.Message):
    __slots__ = ("session_id", "tensor_id", "device_addr", "offset", "payload", "checksum", "total_size")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TENSOR_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ADDR_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CHECKSUM_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    tensor_id: int
    device_addr: int
    offset: int
    payload: bytes
    checksum: int
    total_size: int
    def __init__(self, session_id: _Optional[int] = ..., tensor_id: _Optional[int] = ..., device_addr: _Optional[int] = ..., offset: _Optional[int] = ..., payload: _Optional[bytes] = ..., checksum: _Optional[int] = ..., total_size: _Optional[int] = ...) -> None: ...

class StreamAck(_message.Message):
    __slots__ = ("status", "bytes_received", "checksum", "chunks")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    BYTES_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    CHECKSUM_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    status: Status
    bytes_received: int
    checksum: int
    chunks: int
    def __init__(self, status: _Optional[_Union[Status, _Mapping]] = ..., bytes_received: _Optional[int] = ..., checksum: _Optional[int] = ..., chunks: _Optional[int] = ...) -> None: ...

class ReadTensorRequest(_message.Message):
    __slots__ = ("session_id", "device_addr", "nbytes", "chunk_size")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ADDR_FIELD_NUMBER: _ClassVar[int]
    NBYTES_FIELD_NUMBER: _ClassVar[int]
    CHUNK_SIZE_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    device_addr: int
    nbytes: int
    chunk_size: int
    def __init__(self, session_id: _Optional[int] = ..., device_addr: _Optional[int] = ..., nbytes: _Optional[int] = ..., chunk_size: _Optional[int] = ...) -> None: ...

class AllocRequest(_message.Message):
    __slots__ = ("session_id", "nbytes", "align")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NBYTES_FIELD_NUMBER: _ClassVar[int]
    ALIGN_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    nbytes: int
    align: int
    def __init__(self, session_id: _Optional[int] = ..., nbytes: _Optional[int] = ..., align: _Optional[int] = ...) -> None: ...

class AllocResponse(_message.Message):
    __slots__ = ("device_addr", "nbytes")
    DEVICE_ADDR_FIELD_NUMBER: _ClassVar[int]
    NBYTES_FIELD_NUMBER: _ClassVar[int]
    device_addr: int
    nbytes: int
    def __init__(self, device_addr: _Optional[int] = ..., nbytes: _Optional[int] = ...) -> None: ...

class FreeRequest(_message.Message):
    __slots__ = ("session_id", "device_addr")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ADDR_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    device_addr: int
    def __init__(self, session_id: _Optional[int] = ..., device_addr: _Optional[int] = ...) -> None: ...

class WaitFenceRequest(_message.Message):
    __slots__ = ("session_id", "fence_value", "timeout_ms", "stream")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FENCE_VALUE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    fence_value: int
    timeout_ms: int
    stream: int
    def __init__(self, session_id: _Optional[int] = ..., fence_value: _Optional[int] = ..., timeout_ms: _Optional[int] = ..., stream: _Optional[int] = ...) -> None: ...

class StreamRequest(_message.Message):
    __slots__ = ("session_id", "stream")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    stream: int
    def __init__(self, session_id: _Optional[int] = ..., stream: _Optional[int] = ...) -> None: ...

class StreamInfo(_message.Message):
    __slots__ = ("stream",)
    STREAM_FIELD_NUMBER: _ClassVar[int]
    stream: int
    def __init__(self, stream: _Optional[int] = ...) -> None: ...

class FenceRef(_message.Message):
    __slots__ = ("stream", "fence_value")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    FENCE_VALUE_FIELD_NUMBER: _ClassVar[int]
    stream: int
    fence_value: int
    def __init__(self, stream: _Optional[int] = ..., fence_value: _Optional[int] = ...) -> None: ...

class SubmitRequest(_message.Message):
    __slots__ = ("session_id", "request_id", "stream", "blobs", "waits", "cmdbuf")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    BLOBS_FIELD_NUMBER: _ClassVar[int]
    WAITS_FIELD_NUMBER: _ClassVar[int]
    CMDBUF_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    request_id: int
    stream: int
    blobs: _containers.RepeatedScalarFieldContainer[bytes]
    waits: _containers.RepeatedCompositeFieldContainer[FenceRef]
    cmdbuf: int
    def __init__(self, session_id: _Optional[int] = ..., request_id: _Optional[int] = ..., stream: _Optional[int] = ..., blobs: _Optional[_Iterable[bytes]] = ..., waits: _Optional[_Iterable[_Union[FenceRef, _Mapping]]] = ..., cmdbuf: _Optional[int] = ...) -> None: ...

class RecordRequest(_message.Message):
    __slots__ = ("session_id", "request_id", "blobs")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    BLOBS_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    request_id: int
    blobs: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, session_id: _Optional[int] = ..., request_id: _Optional[int] = ..., blobs: _Optional[_Iterable[bytes]] = ...) -> None: ...

class RecordResponse(_message.Message):
    __slots__ = ("cmdbuf",)
    CMDBUF_FIELD_NUMBER: _ClassVar[int]
    cmdbuf: int
    def __init__(self, cmdbuf: _Optional[int] = ...) -> None: ...

class ReleaseRequest(_message.Message):
    __slots__ = ("session_id", "cmdbuf")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CMDBUF_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    cmdbuf: int
    def __init__(self, session_id: _Optional[int] = ..., cmdbuf: _Optional[int] = ...) -> None: ...

class TensorWrite(_message.Message):
    __slots__ = ("device_addr", "payload", "checksum")
    DEVICE_ADDR_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CHECKSUM_FIELD_NUMBER: _ClassVar[int]
    device_addr: int
    payload: bytes
    checksum: int
    def __init__(self, device_addr: _Optional[int] = ..., payload: _Optional[bytes] = ..., checksum: _Optional[int] = ...) -> None: ...

class ReadSpan(_message.Message):
    __slots__ = ("device_addr", "nbytes")
    DEVICE_ADDR_FIELD_NUMBER: _ClassVar[int]
    NBYTES_FIELD_NUMBER: _ClassVar[int]
    device_addr: int
    nbytes: int
    def __init__(self, device_addr: _Optional[int] = ..., nbytes: _Optional[int] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ("session_id", "request_id", "writes", "submits", "waits", "timeout_ms", "reads")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    WRITES_FIELD_NUMBER: _ClassVar[int]
    SUBMITS_FIELD_NUMBER: _ClassVar[int]
    WAITS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    READS_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    request_id: int
    writes: _containers.RepeatedCompositeFieldContainer[TensorWrite]
    submits: _containers.RepeatedCompositeFieldContainer[SubmitRequest]
    waits: _containers.RepeatedCompositeFieldContainer[FenceRef]
    timeout_ms: int
    reads: _containers.RepeatedCompositeFieldContainer[ReadSpan]
    def __init__(self, session_id: _Optional[int] = ..., request_id: _Optional[int] = ..., writes: _Optional[_Iterable[_Union[TensorWrite, _Mapping]]] = ..., submits: _Optional[_Iterable[_Union[SubmitRequest, _Mapping]]] = ..., waits: _Optional[_Iterable[_Union[FenceRef, _Mapping]]] = ..., timeout_ms: _Optional[int] = ..., reads: _Optional[_Iterable[_Union[ReadSpan, _Mapping]]] = ...) -> None: ...

class ExecuteResponse(_message.Message):
    __slots__ = ("fence_values", "reads")
    FENCE_VALUES_FIELD_NUMBER: _ClassVar[int]
    READS_FIELD_NUMBER: _ClassVar[int]
    fence_values: _containers.RepeatedScalarFieldContainer[int]
    reads: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, fence_values: _Optional[_Iterable[int]] = ..., reads: _Optional[_Iterable[bytes]] = ...) -> None: ...

class SubmitResponse(_message.Message):
    __slots__ = ("stream", "fence_value")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    FENCE_VALUE_FIELD_NUMBER: _ClassVar[int]
    stream: int
    fence_value: int
    def __init__(self, stream: _Optional[int] = ..., fence_value: _Optional[int] = ...) -> None: ...

class OpenShmRequest(_message.Message):
    __slots__ = ("session_id", "nbytes")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NBYTES_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    nbytes: int
    def __init__(self, session_id: _Optional[int] = ..., nbytes: _Optional[int] = ...) -> None: ...

class ShmRegion(_message.Message):
    __slots__ = ("region_id", "name", "size")
    REGION_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    region_id: int
    name: str
    size: int
    def __init__(self, region_id: _Optional[int] = ..., name: _Optional[str] = ..., size: _Optional[int] = ...) -> None: ...

class ShmTransfer(_message.Message):
    __slots__ = ("session_id", "region_id", "device_addr", "nbytes", "checksum", "region_offset")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ADDR_FIELD_NUMBER: _ClassVar[int]
    NBYTES_FIELD_NUMBER: _ClassVar[int]
    CHECKSUM_FIELD_NUMBER: _ClassVar[int]
    REGION_OFFSET_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    region_id: int
    device_addr: int
    nbytes: int
    checksum: int
    region_offset: int
    def __init__(self, session_id: _Optional[int] = ..., region_id: _Optional[int] = ..., device_addr: _Optional[int] = ..., nbytes: _Optional[int] = ..., checksum: _Optional[int] = ..., region_offset: _Optional[int] = ...) -> None: ...

class CloseShmRequest(_message.Message):
    __slots__ = ("session_id", "region_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    region_id: int
    def __init__(self, session_id: _Optional[int] = ..., region_id: _Optional[int] = ...) -> None: ...

class EchoRequest(_message.Message):
    __slots__ = ("payload",)
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    def __init__(self, payload: _Optional[bytes] = ...) -> None: ...

class EchoResponse(_message.Message):
    __slots__ = ("payload",)
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    def __init__(self, payload: _Optional[bytes] = ...) -> None: ...
