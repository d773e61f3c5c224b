"""Code generation: lower a kernel (one op or a fused group) to instructions for a chip.

Eager execution and compiled programs share this one code generator."""

from chipsim.codegen.kernel import KernelSpec, Location, kernel_name
from chipsim.codegen.lower import lower
from chipsim.codegen.planning import KernelPlan, plan_kernel, scratch_bytes

__all__ = [
    "KernelSpec",
    "Location",
    "kernel_name",
    "KernelPlan",
    "lower",
    "plan_kernel",
    "scratch_bytes",
]
