"""Operator modules (issue: contract-driven operators): descriptors validated against a published
schema, modules discovered as plug-ins, device capabilities, versions and selection.

The UMD re-exports this API as :mod:`stack.umd.operators` for the layers above it.
"""

from stack.kmd.opmod.capabilities import (
    DeviceCapabilities,
    capabilities_of,
    cuda_capabilities_from_attributes,
    cupy_capabilities,
    numpy_capabilities,
)
from stack.kmd.opmod.descriptor import (
    Descriptor,
    Feature,
    NanInf,
    PrecisionPolicy,
    TensorSpec,
    TunableParam,
    descriptor_schema,
    load_descriptor,
    validate_descriptor,
)
from stack.kmd.opmod.errors import (
    DescriptorError,
    ModuleLoadError,
    OperatorModuleError,
    UnknownOperatorError,
    UnsupportedOperatorError,
    VersionMismatchError,
)
from stack.kmd.opmod.module import (
    GROUP,
    MODULE_API,
    ModuleRegistry,
    OperatorModule,
    SkippedModule,
    discover,
    make_module,
    registry,
)
from stack.kmd.opmod.selection import Selection
from stack.kmd.opmod.version import SemVer, VersionCheck, check_version

__all__ = [
    "GROUP",
    "MODULE_API",
    "Descriptor",
    "DescriptorError",
    "DeviceCapabilities",
    "Feature",
    "ModuleLoadError",
    "ModuleRegistry",
    "NanInf",
    "OperatorModule",
    "OperatorModuleError",
    "PrecisionPolicy",
    "Selection",
    "SemVer",
    "SkippedModule",
    "TensorSpec",
    "TunableParam",
    "UnknownOperatorError",
    "UnsupportedOperatorError",
    "VersionCheck",
    "VersionMismatchError",
    "capabilities_of",
    "check_version",
    "cuda_capabilities_from_attributes",
    "cupy_capabilities",
    "descriptor_schema",
    "discover",
    "load_descriptor",
    "make_module",
    "numpy_capabilities",
    "registry",
    "validate_descriptor",
]
