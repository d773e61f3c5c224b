"""Run by ``fusion_vs_tvm.py`` with TVM's Python (a separate venv, never a course dependency).

Reads a chipsim graph as JSON on stdin, builds the same graph in TVM Relax, runs Relax's
rule-based fusion (``LegalizeOps -> AnnotateTIROpPattern -> FuseOps``) and prints the groups
of chipsim node indices TVM made, as JSON on stdout.
"""

import json
import re
import sys

import numpy as np
import tvm
from tvm import relax

UNARY = {"relu": relax.op.nn.relu, "exp": relax.op.exp, "neg": relax.op.negative,
         "tanh": relax.op.tanh, "sigmoid": relax.op.sigmoid}  # fmt: skip
BINARY = {"add": relax.op.add, "mul": relax.op.multiply, "sub": relax.op.subtract,
          "maximum": relax.op.maximum, "matmul": relax.op.matmul}  # fmt: skip
REDUCE = {"sum": relax.op.sum, "max": relax.op.max, "mean": relax.op.mean}


def build(desc):
    params = [relax.Var(f"in{k}", relax.TensorType(list(s), "float32"))
              for k, s in enumerate(desc["inputs"])]  # fmt: skip
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            vals = {f"in{k}": p for k, p in enumerate(params)}
            for i, node in enumerate(desc["nodes"]):
                args = [vals[a] for a in node["inputs"]]
                op, attrs = node["op"], node["attrs"]
                if op == "constant":
                    vals[str(i)] = relax.const(np.zeros(node["shape"], "float32"))
                    continue
                if op in UNARY:
                    expr = UNARY[op](*args)
                elif op in BINARY:
                    expr = BINARY[op](*args)
                elif op in REDUCE:
                    expr = REDUCE[op](args[0], axis=attrs.get("axes"),
                                      keepdims=attrs.get("keepdims", False))  # fmt: skip
                else:
                    raise SystemExit(f"op {op!r} has no Relax counterpart here")
                vals[str(i)] = bb.emit(expr, name_hint=f"n{i}")
            out = bb.emit_output(vals[str(desc["outputs"][0])])
        bb.emit_func_output(out)
    return bb.get()


def groups(desc):
    mod = build(desc)
    seq = tvm.transform.Sequential([relax.transform.LegalizeOps(),
                                    relax.transform.AnnotateTIROpPattern(),
                                    relax.transform.FuseOps()])  # fmt: skip
    text = seq(mod).script()
    ops = [i for i, n in enumerate(desc["nodes"]) if n["op"] != "constant"]
    found, fused = set(), []
    for body in re.split(r"\n    @", text):
        if "def fused_" not in body:
            continue
        calls = re.findall(r"(\w+) = R\.call_tir", body)
        named = [int(c[1:]) for c in calls if re.fullmatch(r"n\d+", c)]
        fused.append((named, len(calls) - len(named)))
        found.update(named)
    for c in re.findall(r"\b(n\d+) = R\.call_tir", text.split("def main")[-1]):
        found.add(int(c[1:]))
    missing = [i for i in ops if i not in found]  # a fused group's output, renamed by TVM
    out = []
    for named, unnamed in fused:
        group = list(named)
        for _ in range(unnamed):
            i = next(
                i
                for i in missing
                if any(a.isdigit() and int(a) in group for a in desc["nodes"][i]["inputs"])
            )
            missing.remove(i)
            group.append(i)
        out.append(sorted(group))
    grouped = {i for g in out for i in g}
    out += [[i] for i in ops if i not in grouped]
    return sorted(out)


if __name__ == "__main__":
    print(json.dumps(groups(json.load(sys.stdin))))
