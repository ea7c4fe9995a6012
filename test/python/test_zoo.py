"""The model zoo (zoo_models.py): real torchvision and transformers models
with random weights and small inputs through the default path a user
takes, traceir.from_torch -> free-dead-tensors -> compile("cpu") -> run,
each against eager at a relative error (norm of out - ref over norm of
ref) of at most 1e-4 in float32, with the measured peak equal to the
predicted one.

A model in PENDING waits for what is named there and is skipped, saying
so; bench/zoo.py runs every model and prints where each stands. The zoo is not part of the GPU bundle (its weights would
not fit the 64 MiB a GPU machine takes): it skips while one is recorded.
"""

import pytest
import torch

import bundle_record
import traceir
from zoo_models import MODELS

pytest.importorskip("torchvision")
pytest.importorskip("transformers")
if not traceir.HAS_COMPILER:
    pytest.skip("the zoo imports models: it needs the compiler", allow_module_level=True)
if bundle_record.REDIRECT:
    pytest.skip("the zoo's weights do not travel in a GPU bundle", allow_module_level=True)

PENDING = {
    # name: what it waits for (mistral and opt waited for the importer's
    # view of TraceIR's layouts: _torch_import._Layouts)
}


def rel_err(got, want):
    got, want = got.double(), want.double()
    assert want.norm() > 0, "eager's output is all zeros: nothing to compare"
    return float((got - want).norm() / want.norm())


@pytest.mark.parametrize("name,build", MODELS, ids=[n for n, _ in MODELS])
def test_zoo_model_matches_eager(name, build):
    if name in PENDING:
        pytest.skip(f"{name} waits for {PENDING[name]}")
    model, args = build()
    with torch.no_grad():
        want = model(*args)
    module = traceir.from_torch(model, args).run_passes("free-dead-tensors")
    compiled = traceir.compile(module, "cpu")
    got = compiled(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert rel_err(got, want) <= 1e-4
    dev = compiled.memory_report()["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"]


def test_pending_models_are_in_the_zoo():
    assert set(PENDING) <= {n for n, _ in MODELS}
