"""The published models: exact parameter counts, MACs near the published figures, and the
same numbers eagerly, compiled and in the reference interpreter (on shrunken versions)."""

import numpy as np
import pytest

import chipsim as cs
import chipsim.models as models
from chipsim.ir import interpret
from chipsim.passes.fold_batchnorm import fold_batchnorm

# parameters as published (torchvision / Hugging Face counts), MACs at batch 1 where published
PUBLISHED = {
    "resnet18": (11_689_512, 1.82e9),  # torchvision: 1.81 GFLOPS (multiply-adds)
    "mobilenet_v2": (3_504_872, 0.300e9),  # Sandler et al. 2018, table 4: 300 M MAdds
    "bert_base": (109_482_240, None),  # bert-base-uncased with pooler
    "gpt2_small": (124_439_808, None),  # gpt2 (124 M) with tied embeddings
}


@pytest.fixture(scope="module", params=list(PUBLISHED))
def full(request):
    return request.param, models.summary(models.build(request.param))


def test_parameters_are_exactly_the_published_counts(full):
    name, s = full
    assert s.params == PUBLISHED[name][0], name


def test_macs_are_within_3_percent_of_the_published_figure(full):
    name, s = full
    published = PUBLISHED[name][1]
    if published is None:  # transformers: a MAC per weight per token (Kaplan et al. 2020),
        tokens, layers, hidden = 128, 12, 768  # without the embedding lookups (no MACs) ...
        lookups = {"bert_base": (30522 + 512 + 2) * 768, "gpt2_small": 1024 * 768}[name]
        # ... GPT-2's tied embedding is also its output layer (its MACs count, once)
        published = (s.params - lookups) * tokens
        published += layers * 2 * tokens * tokens * hidden  # attention: scores and context
    assert abs(s.macs - published) / published < 0.03, (name, s.macs, published)


def test_summary_counts_patterns_and_prints():
    s = models.summary(models.resnet18(image=32, width=8, num_classes=10))
    assert s.patterns["contraction"] == 21  # 17 convs + 3 downsamples + the classifier
    assert s.patterns["reduction"] == 2  # the max pool and the global average
    assert "parameters" in str(s) and s.activation_bytes > 0


SHRUNK = {
    "resnet18": dict(batch=2, image=32, width=8, num_classes=10),
    "mobilenet_v2": dict(batch=1, image=32, width=0.25, num_classes=10),
    "bert_base": dict(
        batch=2, seq=16, layers=2, hidden=32, heads=4, intermediate=64, vocab=50, max_positions=32
    ),  # fmt: skip
    "gpt2_small": dict(batch=1, seq=16, layers=2, hidden=32, heads=4, vocab=60, max_positions=32),
}


@pytest.mark.parametrize("name", list(SHRUNK))
def test_eager_equals_compiled_equals_interpreter(name):
    knobs = SHRUNK[name]
    graph = models.build(name, seed=3, **knobs)
    x = models.example_input(name, seed=1, **knobs)
    ref = interpret(graph, x)
    with cs.device("edge-npu"):
        out = models.eager(name, seed=3, **knobs)(cs.tensor(x))
    eager_out = [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]
    program = cs.compile(graph, cs.chip("edge-npu"))
    compiled, report = program.run(x)
    assert len(eager_out) == len(ref) == len(compiled)
    for e, c, r in zip(eager_out, compiled, ref, strict=True):
        assert np.abs(r).max() > 1e-3  # the outputs carry signal, not all zeros
        np.testing.assert_allclose(e, r, rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(c, r, rtol=1e-3, atol=1e-4)
    assert report.cycles > 0


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_folding_batch_norm_keeps_the_models_outputs(name):
    graph = models.build(name, **SHRUNK[name])
    folded = fold_batchnorm(graph)
    assert not [n for n in folded.nodes if n.op == "batch_norm"]
    x = models.example_input(name, **SHRUNK[name])
    np.testing.assert_allclose(interpret(folded, x)[0], interpret(graph, x)[0],
                               rtol=1e-3, atol=1e-4)  # fmt: skip
    assert models.summary(folded).macs == models.summary(graph).macs


def test_weights_depend_on_the_seed_and_tied_embedding_is_one_constant():
    a = models.gpt2_small(seq=8, layers=1, hidden=16, heads=2, vocab=30, max_positions=16)
    b = models.gpt2_small(seed=1, seq=8, layers=1, hidden=16, heads=2, vocab=30, max_positions=16)
    x = models.example_input("gpt2_small", seq=8, vocab=30)
    assert not np.allclose(interpret(a, x)[0], interpret(b, x)[0])
    wte = [n for n in a.nodes if n.op == "constant" and n.output.hint == "wte"]
    assert len(wte) == 1 and len(a.users()[wte[0].output]) == 2  # the lookup and the logits


def test_activation_records_are_the_compilers_planning_instance():
    graph = models.resnet18(image=32, width=8, num_classes=10)
    unfused = models.activation_records(graph)
    fused = models.activation_records(graph, fusion="reference")
    program = cs.compile(graph, cs.chip("edge-npu"))
    assert len(fused) < len(unfused)  # fusion keeps intermediates inside kernels
    assert sorted(r.size for r in fused) == sorted(r.size for r in program.plan.records)
