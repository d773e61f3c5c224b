"""The graph IR: dtypes, tensor types, values, nodes, graphs, the op registry and the tools
that read and check graphs (verifier, printer, JSON form, reference interpreter)."""

from chipsim.ir.attrs import Attrs, ConstData
from chipsim.ir.dtypes import DTYPES, DType, bf16, boolean, dtype, f16, f32, i8, i32, i64
from chipsim.ir.graph import Graph, GraphBuilder, Node, Value
from chipsim.ir.interpreter import interpret
from chipsim.ir.ops import OPS, OpDef, Pattern, get_op
from chipsim.ir.serialize import graph_from_json, graph_to_json
from chipsim.ir.types import TensorType
from chipsim.ir.verify import verify

__all__ = [
    "DTYPES",
    "DType",
    "bf16",
    "boolean",
    "dtype",
    "f16",
    "f32",
    "i8",
    "i32",
    "i64",
    "Attrs",
    "ConstData",
    "Graph",
    "GraphBuilder",
    "Node",
    "Value",
    "graph_from_json",
    "graph_to_json",
    "interpret",
    "OPS",
    "OpDef",
    "Pattern",
    "get_op",
    "TensorType",
    "verify",
]
