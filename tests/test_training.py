"""tinyarena.training: update specs, the training graph, the memory plan of one training step,
`auto`, and `tinyarena plan --train`."""

import json
import math

import pytest

import tinyarena
from real_models import real_model
from tinyarena import builder, training
from tinyarena.builder import ModelBuilder
from tinyarena.cli import main

REAL = ("vww_96_int8", "person_detect")


def small_cnn(activation="RELU"):
    """ops: 0 CONV_2D, 1 DEPTHWISE_CONV_2D, 2 CONV_2D, 3 AVERAGE_POOL_2D, 4 RESHAPE, 5 FULLY_CONNECTED, 6 SOFTMAX."""
    mb = ModelBuilder("small_cnn", 0)
    x = mb.input([1, 8, 8, 3])
    x = mb.conv2d(x, 4, kernel=3, activation=activation)
    x = mb.depthwise_conv2d(x, kernel=3, activation="RELU6")
    x = mb.conv2d(x, 8, kernel=1)
    x = mb.average_pool2d(x, pool=x.shape[1:3])
    x = mb.reshape(x, [1, -1])
    mb.output(mb.softmax(mb.fully_connected(x, 3)))
    return mb.build()


def residual_cnn():
    """ops: 0 CONV_2D, 1 CONV_2D, 2 ADD (RELU), 3 RELU6, 4 MEAN, 5 FULLY_CONNECTED, 6 SOFTMAX."""
    mb = ModelBuilder("residual_cnn", 0)
    x = mb.input([1, 6, 6, 2])
    a = mb.conv2d(x, 4, kernel=1, activation="RELU")
    b = mb.conv2d(a, 4, kernel=3)
    x = mb.relu6(mb.add(a, b, activation="RELU"))
    x = mb.mean(x, axes=(1, 2))
    mb.output(mb.softmax(mb.fully_connected(x, 2)))
    return mb.build()


def max_pool_cnn():
    """ops: 0 CONV_2D, 1 MAX_POOL_2D, 2 CONV_2D, 3 AVERAGE_POOL_2D, 4 RESHAPE, 5 FULLY_CONNECTED (logits)."""
    mb = ModelBuilder("max_pool_cnn", 0)
    x = mb.input([1, 8, 8, 3])
    x = mb.max_pool2d(mb.conv2d(x, 4, kernel=3, activation="RELU"))
    x = mb.conv2d(x, 6, kernel=1, activation="RELU")
    x = mb.reshape(mb.average_pool2d(x, pool=x.shape[1:3]), [1, -1])
    mb.output(mb.fully_connected(x, 3))
    return mb.build()


# Spec parsing ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, canonical", [
    ("bias", "bias"), (" auto ", "auto"), ("last:3", "last:3"), ("layers:5", "layers:5"),
    ("layers:7,2@0.5", "layers:2,7@0.5"), ("layers:1@1", "layers:1@1"), ("layers:0@.125", "layers:0@0.125"),
])
def test_specs_parse_to_their_canonical_form(text, canonical):
    assert training.parse_spec(text) == canonical


@pytest.mark.parametrize("text, bad_part", [
    ("", "unknown kind ''"), ("bias2", "unknown kind 'bias2'"), ("last", "'last' needs ':'"),
    ("last:0", "'0' is not a whole number above 0"), ("last:x", "'x'"), ("last:-1", "'-1'"),
    ("layers:", "no layer listed"), ("layers:1,a", "'a' is not an op index"), ("layers:1,,2", "'' is not an op"),
    ("layers:3,3", "layer 3 is listed twice"), ("layers:1@0", "FRACTION '0'"), ("layers:1@1.5", "FRACTION '1.5'"),
    ("layers:1@", "FRACTION ''"), ("layers:1@nan", "FRACTION 'nan'"), ("layers:1@1e-1", "FRACTION '1e-1'"),
    ("layers:99999999999", "'99999999999'"),
])
def test_bad_specs_name_the_bad_part(text, bad_part):
    with pytest.raises(ValueError, match="bad update spec") as error:
        training.parse_spec(text)
    assert bad_part in str(error.value)


def test_layers_that_are_not_weight_layers_are_named():
    model = small_cnn()
    with pytest.raises(ValueError, match=r"op 3 \(AVERAGE_POOL_2D\) is not a weight layer"):
        training.training_graph(model, "layers:2,3")
    with pytest.raises(ValueError, match="op 40 does not exist"):
        training.training_graph(model, "layers:40")
    with pytest.raises(ValueError, match="only 4 weight layers"):
        training.training_graph(model, "last:5")


def test_spec_resolution_counts_channels_and_biases():
    updates = {u.op: u for u in training.training_graph(small_cnn(), "layers:0,2@0.3").updates}
    assert sorted(updates) == [0, 1, 2, 5]  # every bias, weights of 0 and 2
    assert (updates[0].weight_channels, updates[2].weight_channels) == (math.ceil(0.3 * 4), math.ceil(0.3 * 8))
    assert updates[1].weight_channels == updates[5].weight_channels == 0
    assert updates[0].channel_weights == 3 * 3 * 3 and updates[1].channel_weights == 9
    assert all(u.bias for u in updates.values())
    last = training.training_graph(small_cnn(), "last:2")
    assert [(u.op, u.weight_channels, u.bias) for u in last.updates] == [(2, 8, True), (5, 3, True)]
    assert last.updated_parameters == 8 * 4 + 8 + 3 * 8 + 3


# The training graph ------------------------------------------------------------------------

def steps_of(graph):
    return [(s.kind, s.op, s.what) for s in graph.backward]


def test_last_layer_update_sends_no_gradient_below_it():
    graph = training.training_graph(small_cnn(), "last:1")
    assert graph.backward_ops == [5]
    assert steps_of(graph) == [("loss", 6, "SOFTMAX + cross-entropy grad"),
                               ("backward", 5, "FULLY_CONNECTED grad weights"),
                               ("backward", 5, "FULLY_CONNECTED grad bias")]
    model = tinyarena.load_model(small_cnn())
    # the loss reads the softmax output, the weight gradient the FC's input
    assert graph.saved == sorted([model.ops[6].outputs[0], model.ops[5].inputs[0]])


def test_bias_update_runs_back_to_the_first_layer_without_an_input_gradient_there():
    graph = training.training_graph(small_cnn(), "bias")
    assert graph.backward_ops == [5, 4, 3, 2, 1, 0]
    whats = steps_of(graph)
    assert ("backward", 0, "CONV_2D grad input") not in whats  # the model input needs no gradient
    for op, kind in ((5, "FULLY_CONNECTED"), (2, "CONV_2D"), (1, "DEPTHWISE_CONV_2D")):
        assert ("backward", op, f"{kind} grad input") in whats
    assert ("backward", 1, "DEPTHWISE_CONV_2D fused RELU6 grad") in whats
    assert ("backward", 0, "CONV_2D fused RELU grad") in whats
    assert not any("grad weights" in w for _, _, w in whats)
    assert len(graph.sgd_updates) == 4 and all(s.kind == "update" for s in graph.sgd_updates)
    maths = {(s.op, s.what): s.math for s in graph.backward}
    assert maths[(6, "SOFTMAX + cross-entropy grad")] == "loss"
    assert maths[(2, "CONV_2D grad input")] == "input_grad"
    assert maths[(1, "DEPTHWISE_CONV_2D fused RELU6 grad")] == "activation_grad"
    assert maths[(5, "FULLY_CONNECTED grad bias")] == "bias_grad"
    assert {s.math for s in graph.sgd_updates} == {"sgd_update"}


def test_gradient_formats_give_the_byte_counts():
    model = tinyarena.load_model(small_cnn())
    graph = training.training_graph(model, "layers:2@0.5")
    values = {v.name: v for v in graph.values}
    assert values["trainable weights op 2"].bytes == 4 * 4  # 4 of 8 channels, 1x1x4 int8 weights
    assert values["trainable bias op 2"].bytes == 8 * 4  # int32
    assert values["grad weights op 2"].bytes == 4 * 4 * 4 and values["grad weights op 2"].parameter_gradient
    grad_input = next(s for s in graph.backward if s.what == "CONV_2D grad input" and s.op == 2)
    x = model.tensors[model.ops[2].inputs[0]]
    assert graph.values[grad_input.writes[0]].bytes == math.prod(x.shape)  # int8 activation gradient
    assert grad_input.scratch_bytes == 4 * x.shape[2] * x.shape[3]  # one int32 row
    assert grad_input.single_pass_scratch_bytes == 4 * math.prod(x.shape)


def test_residual_gradients_are_summed_and_add_passes_its_gradient_on():
    graph = training.training_graph(residual_cnn(), "bias")
    whats = steps_of(graph)
    assert ("backward", 2, "ADD fused RELU grad") in whats
    assert ("backward", 3, "RELU6 grad") in whats and ("backward", 4, "MEAN grad input") in whats
    sums = [s for s in graph.backward if s.what == "GRAD_SUM"]
    assert len(sums) == 1 and len(sums[0].reads) == 2  # conv 0's output feeds conv 1 and the ADD
    add_mask = next(s for s in graph.backward if s.what == "ADD fused RELU grad")
    assert add_mask.writes[0] in sums[0].reads  # the ADD's gradient reaches its input unchanged


def test_unsupported_ops_on_the_backward_path_are_named_and_pruned_ones_are_not():
    model = max_pool_cnn()
    with pytest.raises(tinyarena.UnsupportedError, match=r"op 1 \(MAX_POOL_2D\) is on the backward path"):
        training.training_graph(model, "bias")
    graph = training.training_graph(model, "last:2")  # conv 2 and the FC: nothing reaches the max pool
    assert graph.backward_ops == [5, 4, 3, 2]
    assert steps_of(graph)[0] == ("loss", 5, "cross-entropy grad (softmax inside)")


def test_exported_mobilenet_v2_pads_pass_their_gradient_on():
    model = builder.mobilenet_v2(alpha=0.35, resolution=48, num_classes=2, explicit_pad=True)
    graph = training.training_graph(model, "bias")
    pads = [s for s in graph.backward if s.what == "PAD grad input"]
    assert len(pads) == 4 and all(s.scratch_bytes == 0 for s in pads)  # one per stride-2 depthwise
    check_plan(training.plan_training(model, "bias"))


def test_float_io_models_train_on_their_int8_scores():
    model = tinyarena.load_model(builder.mobilenet_v1(alpha=0.25, resolution=32, float_io=True))
    assert (model.ops[0].type, model.ops[-1].type) == ("QUANTIZE", "DEQUANTIZE")
    graph = training.training_graph(model, "bias")
    assert graph.backward[0].what == "SOFTMAX + cross-entropy grad"
    assert graph.loss_tensor == model.ops[-1].inputs[0]  # the int8 scores before the DEQUANTIZE
    assert 0 not in graph.backward_ops and len(model.ops) - 1 not in graph.backward_ops


def test_a_model_with_two_outputs_is_refused():
    mb = ModelBuilder("two_outputs", 0)
    x = mb.input([1, 4, 4, 2])
    mb.output(mb.conv2d(x, 2, kernel=1), mb.conv2d(x, 3, kernel=1))
    with pytest.raises(tinyarena.UnsupportedError, match="one output"):
        training.training_graph(mb.build(), "bias")


def test_the_inference_graph_is_not_changed():
    model = tinyarena.load_model(small_cnn())
    before = [(op.type, tuple(op.inputs), tuple(op.outputs)) for op in model.ops], len(model.tensors)
    graph = training.training_graph(model, "bias")
    after = [(op.type, tuple(op.inputs), tuple(op.outputs)) for op in model.ops], len(model.tensors)
    assert before == after
    assert len(graph.forward.ops) == len(model.ops)


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("spec, weight_layers", [("bias", 0), ("last:2", 2), ("last:4", 4)])
def test_real_models_derive_their_training_graphs(name, spec, weight_layers):
    graph = training.training_graph(real_model(name), spec)
    assert sum(u.weight_channels > 0 for u in graph.updates) == weight_layers
    assert graph.backward[0].kind == "loss"
    assert len(graph.sgd_updates) == sum((u.weight_channels > 0) + u.bias for u in graph.updates)
    if weight_layers:
        lowest = min(u.op for u in graph.updates)
        assert min(graph.backward_ops) == lowest  # nothing below the earliest updated layer


def test_mobilenet_v2_derives_with_its_residual_adds():
    model = tinyarena.load_model(builder.mobilenet_v2(alpha=0.35, resolution=48, num_classes=2))
    graph = training.training_graph(model, "bias")
    assert sum(s.what == "GRAD_SUM" for s in graph.backward) == 10  # one per residual ADD
    assert graph.backward_ops[-1] == 0
    relu6_outputs = {op.outputs[0] for op in model.ops if op.options.activation == "RELU6"}
    assert {graph.values[v].tensor for v in graph.masks} == relu6_outputs  # no weight gradient: all masks
    for spec in ("bias", "last:2"):
        compared = training.compare_update_order(model, spec)
        check_plan(compared.reordered)
        check_plan(compared.at_end)
        assert compared.saving_bytes >= 0


# The memory plan -----------------------------------------------------------------------------

def check_plan(plan):
    assert plan.validate() == []
    last_step = len(plan.steps) - 1
    trainable = [b for b in plan.buffers if b.cls == "trainable"]
    assert all(b.first == 0 and b.last == last_step for b in trainable)
    assert plan.trainable_bytes == sum(b.size for b in trainable) > 0
    for cls in training.CLASSES:
        assert plan.class_bytes[cls] == sum(b.size for b in plan.buffers if b.cls == cls)
    assert plan.gradient_bytes == max(s.live["gradient"] for s in plan.steps) > 0
    assert plan.lower_bound_bytes == max(s.total for s in plan.steps) <= plan.peak_bytes
    for s in plan.steps:
        live = [b for b in plan.buffers if b.first <= s.step <= b.last]
        assert s.total == sum(b.size for b in live)
        assert s.arena_top == max((b.offset + b.size for b in live), default=0) <= plan.peak_bytes


@pytest.mark.parametrize("spec", ["bias", "last:1", "last:3", "layers:2@0.5", "layers:0,2"])
def test_small_plans_are_valid(spec):
    check_plan(training.plan_training(small_cnn(), spec))


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("spec", ["bias", "last:2", "last:4"])
def test_real_plans_are_valid_and_reordering_is_never_worse(name, spec):
    compared = training.compare_update_order(real_model(name), spec)
    check_plan(compared.reordered)
    check_plan(compared.at_end)
    assert compared.saving_bytes >= 0
    assert compared.reordered.gradient_bytes <= compared.at_end.gradient_bytes
    model = tinyarena.load_model(real_model(name))
    graph = training.training_graph(model, spec)
    assert [s.scratch_bytes for s in graph.channel_updates] == [
        channel_int32_bytes(model, s.op) for s in graph.channel_updates]
    assert len(graph.channel_updates) == sum(u.weight_channels > 0 for u in graph.updates)
    for v in graph.masks:
        mask = graph.values[v]
        assert mask.bytes == math.ceil(math.prod(model.tensors[mask.tensor].shape) / 8)
        assert mask.tensor not in graph.saved


def channel_int32_bytes(model, op):
    """One output channel's int32 weight gradient, from the weight tensor's shape (OHWI; depthwise 1HWC)."""
    weights = model.tensors[model.ops[op].inputs[1]].shape
    per_channel = math.prod(weights[1:3]) if model.ops[op].type == "DEPTHWISE_CONV_2D" else math.prod(weights[1:])
    return 4 * per_channel


def test_reordering_applies_weight_gradients_per_channel_and_frees_bias_gradients_at_once():
    model = tinyarena.load_model(small_cnn())
    compared = training.compare_update_order(model, "last:3")  # weights and biases of ops 1, 2, 5
    reordered, at_end = compared.reordered, compared.at_end
    biases = [b for b in reordered.buffers if b.name.startswith("grad bias")]
    assert len(biases) == 3 and all(b.last - b.first + 1 == 2 for b in biases)
    assert not [b for b in reordered.buffers if b.name.startswith("grad weights")]  # no whole weight gradient
    fused = [s for s in reordered.steps if s.what.endswith("grad weights + SGD update per channel")]
    assert sorted(s.op for s in fused) == [1, 2, 5] and all(s.kind == "update" for s in fused)
    for step in fused:
        scratch = [b for b in reordered.buffers if b.cls == "scratch" and b.first == b.last == step.step]
        expected = channel_int32_bytes(model, step.op)
        assert [b.size for b in scratch] == [-(-expected // 16) * 16], step.what  # one channel, 16-byte aligned
    graph = training.training_graph(model, "last:3")
    assert [(s.op, s.scratch_bytes) for s in graph.channel_updates] == [
        (op, channel_int32_bytes(model, op)) for op in (5, 2, 1)]
    assert [graph.backward[i].what.endswith("grad weights") for i in graph.channel_update_replaces] == [True] * 3
    grads = [b for b in at_end.buffers if b.name.startswith(("grad weights", "grad bias"))]
    assert len(grads) == 6
    assert all(b.last >= len(at_end.steps) - len(grads) for b in grads)  # read by the updates at the end
    assert all(at_end.steps[s].kind == "update" for s in range(len(at_end.steps) - len(grads), len(at_end.steps)))
    whole = {b.name: b.size for b in at_end.buffers}
    for op in (1, 2, 5):
        u = next(u for u in graph.updates if u.op == op)
        assert whole[f"grad weights op {op}"] == -(-4 * u.weight_channels * u.channel_weights // 16) * 16
    assert compared.saving_bytes > 0
    assert reordered.gradient_bytes < at_end.gradient_bytes


def mask_buffers(plan):
    return {b.name: b for b in plan.buffers if b.name.startswith("mask ")}


def test_outputs_saved_only_for_a_relu_derivative_are_bit_masks():
    model = tinyarena.load_model(small_cnn())
    graph = training.training_graph(model, "bias")
    conv, depthwise = model.ops[0].outputs[0], model.ops[1].outputs[0]  # fused RELU, fused RELU6
    masks = {graph.values[v].tensor: graph.values[v] for v in graph.masks}
    assert sorted(masks) == sorted([conv, depthwise])
    for tensor, value in masks.items():
        assert value.bytes == math.ceil(math.prod(model.tensors[tensor].shape) / 8) and value.cls == "activation"
        assert value.forward_op == model.tensors[tensor].producer
    assert not {conv, depthwise} & set(graph.saved)  # their int8 outputs are not saved
    plan = training.plan_training(model, "bias")
    check_plan(plan)
    for tensor, value in masks.items():
        buffer = mask_buffers(plan)[value.name]
        assert buffer.size == -(-value.bytes // 16) * 16
        assert buffer.first == value.forward_op  # written by the forward op (file order: step = op index)
        assert plan.steps[buffer.last].what.endswith("RELU grad") or plan.steps[buffer.last].what.endswith("RELU6 grad")
        holder = [b for b in plan.core.liveness.buffers if tensor in b.tensors]
        assert len(holder) == 1 and holder[0].last < plan.forward_steps  # the int8 dies in the forward pass


def test_a_tensor_a_weight_gradient_reads_stays_int8_and_needs_no_mask():
    model = tinyarena.load_model(small_cnn())
    graph = training.training_graph(model, "layers:0,2")  # weights of ops 0 and 2, every bias
    conv, depthwise = model.ops[0].outputs[0], model.ops[1].outputs[0]
    assert [graph.values[v].tensor for v in graph.masks] == [conv]  # only op 1's input gradient reads it
    assert depthwise in graph.saved  # op 2's weight gradient reads it; the RELU6 derivative reads the int8 too
    relu6 = next(s for s in graph.backward if s.what == "DEPTHWISE_CONV_2D fused RELU6 grad")
    assert relu6.saved == [depthwise] and len(relu6.reads) == 1
    relu = next(s for s in graph.backward if s.what == "CONV_2D fused RELU grad")
    assert relu.saved == [] and graph.values[relu.reads[1]].name.startswith("mask ")
    check_plan(training.plan_training(model, "layers:0,2"))


def test_a_standalone_relu_output_is_a_mask_too():
    model = tinyarena.load_model(residual_cnn())
    graph = training.training_graph(model, "bias")
    masked = sorted(graph.values[v].tensor for v in graph.masks)
    assert model.ops[3].outputs[0] in masked and model.ops[2].outputs[0] in masked  # RELU6, the ADD's fused RELU
    relu6 = next(s for s in graph.backward if s.what == "RELU6 grad")
    assert graph.values[relu6.reads[1]].tensor == model.ops[3].outputs[0]
    check_plan(training.plan_training(model, "bias"))


def test_saved_activations_live_until_their_backward_reader():
    plan = training.plan_training(small_cnn(), "last:1")
    model = tinyarena.load_model(small_cnn())
    fc_input = model.ops[5].inputs[0]
    reader = next(s.step for s in plan.steps if s.what == "FULLY_CONNECTED grad weights + SGD update per channel")
    holder = [b for b in plan.core.liveness.buffers if fc_input in b.tensors]
    assert len(holder) == 1 and holder[0].last == reader


def test_backward_elementwise_steps_write_over_their_input_gradient():
    model = small_cnn()
    inplace, apart = (training.plan_training(model, "bias", inplace=flag) for flag in (True, False))
    check_plan(apart)
    graph = tinyarena.load_model(model)
    masked = f"grad {graph.tensors[graph.ops[1].outputs[0]].name} masked"  # the fused RELU6's masked gradient
    assert masked in {b.name for b in apart.buffers}
    assert masked not in {b.name for b in inplace.buffers}  # it shares its input gradient's buffer
    assert sum(b.cls == "gradient" for b in inplace.buffers) < sum(b.cls == "gradient" for b in apart.buffers)
    assert inplace.lower_bound_bytes <= apart.lower_bound_bytes


def test_no_forward_op_writes_over_a_saved_activation():
    model = tinyarena.load_model(real_model("vww_96_int8"))
    inference = tinyarena.plan(model, transforms="none")
    assert inference.liveness.inplace_ops  # the inference plan writes depthwise convs in place
    for spec in ("last:2", "layers:5,9"):
        plan = training.plan_training(model, spec)
        saved = set(training.training_graph(model, spec).saved)
        for op in plan.core.liveness.inplace_ops:
            assert not saved & set(model.ops[op].inputs), (spec, op)
    layers = training.plan_training(model, "layers:5,9")
    # ops 5 and 9 read the inputs their weight gradients need: in place in inference, not here
    assert {5, 9} <= set(inference.liveness.inplace_ops)
    assert not {5, 9} & set(layers.core.liveness.inplace_ops)


def test_single_pass_requantization_needs_more_scratch():
    two = training.plan_training(real_model("vww_96_int8"), "bias")
    one = training.plan_training(real_model("vww_96_int8"), "bias", single_pass_requant=True)
    check_plan(one)
    assert one.class_bytes["scratch"] > two.class_bytes["scratch"]
    assert one.peak_bytes > two.peak_bytes


def test_plans_are_deterministic():
    model = real_model("person_detect")
    assert training.plan_training(model, "last:4").to_json() == training.plan_training(model, "last:4").to_json()
    auto = [training.plan_training(model, "auto", sram="300K").to_json() for _ in range(2)]
    assert auto[0] == auto[1] and json.loads(auto[0])["candidates"]


def test_json_carries_the_class_figures(tmp_path):
    plan = training.plan_training(small_cnn(), "last:2", sram="1M")
    data = json.loads(plan.to_json(tmp_path / "t.json"))
    assert json.loads((tmp_path / "t.json").read_text()) == data
    assert (data["trainable_bytes"], data["gradient_bytes"]) == (plan.trainable_bytes, plan.gradient_bytes)
    assert data["fits"] is True and data["sram_limit"] == 1 << 20 and data["spec"] == "last:2"
    assert len(data["buffers"]) == len(plan.buffers) and len(data["steps"]) == len(plan.steps)


def test_plot_draws_trainable_buffers_in_their_own_colour(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.colors import to_hex

    from tinyarena.plotting import _COLORS

    plan = training.plan_training(small_cnn(), "last:2")
    ax = plan.plot(tmp_path / "train.png")
    colours = [to_hex(c) for c in ax.collections[0].get_facecolors()]
    for buffer, colour in zip(plan.buffers, colours):
        assert colour == _COLORS[buffer.cls]
    assert _COLORS["trainable"] not in (_COLORS["activation"], _COLORS["scratch"], _COLORS["gradient"])
    assert "trainable" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert (tmp_path / "train.png").stat().st_size > 0


# auto ----------------------------------------------------------------------------------------

def test_auto_takes_the_most_parameters_that_fit():
    model = real_model("vww_96_int8")
    plan = training.plan_training(model, "auto", sram="256K")
    assert plan.fits and plan.peak_bytes <= 256 * 1024
    tried = plan.candidates
    assert tried[0].spec == "bias" and tried[0].fits
    fitting = [c for c in tried if c.fits]
    assert plan.updated_parameters == max(c.parameters for c in fitting)
    assert plan.spec in [c.spec for c in fitting]
    assert any(not c.fits for c in tried)  # it stopped at a spec over the limit
    again = training.plan_training(model, plan.spec, sram="256K")
    assert again.peak_bytes == plan.peak_bytes


def test_auto_under_a_limit_nothing_fits_returns_bias_over_the_limit():
    plan = training.plan_training(small_cnn(), "auto", sram=64)
    assert plan.spec == "bias" and not plan.fits and plan.peak_bytes > 64


def test_auto_needs_a_limit():
    with pytest.raises(ValueError, match="needs a limit"):
        training.plan_training(small_cnn(), "auto")


def test_a_flash_limit_is_kept():
    plan = training.plan_training(small_cnn(), "bias", flash=16)
    assert plan.flash_bytes > 16 and not plan.fits


def test_a_hundred_layer_network_plans():  # its time: benchmarks/training_bench.py
    plan = training.plan_training(builder.chain(100), "bias")
    check_plan(plan)
    assert len(plan.steps) > 300


def test_sweep_plans_specs_and_auto_per_limit(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    model = real_model("vww_96_int8")
    records = training.sweep(model, specs=("bias", "last:2"), sram_limits=("256K", "400K"))
    assert [(r.spec, r.sram_limit) for r in records] == [("bias", None), ("last:2", None), ("auto", 256 << 10),
                                                          ("auto", 400 << 10)]
    for r in records:
        assert (r.peak_bytes, r.updated_parameters, r.chosen) == (r.plan.peak_bytes, r.plan.updated_parameters,
                                                                    r.plan.spec)
    assert records[2].fits and records[2].peak_bytes <= 256 << 10
    assert records[3].updated_parameters >= records[2].updated_parameters  # a higher limit updates no less
    ax = training.plot_sweep(records, path=tmp_path / "sweep.png")
    assert len(ax.lines[0].get_xdata()) == 2 and len(ax.lines[1].get_xdata()) == 2
    assert (tmp_path / "sweep.png").stat().st_size > 0


# The command line --------------------------------------------------------------------------

def run_cli(capsys, *argv):
    status = main(list(map(str, argv)))
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_prints_the_class_columns(tmp_path, capsys):
    model = tmp_path / "small.tflite"
    model.write_bytes(small_cnn())
    status, out, err = run_cli(capsys, "plan", model, "--train", "last:2", "--json", tmp_path / "p.json",
                               "--chart", tmp_path / "p.png")
    assert status == 0, err
    header = out.splitlines()[0].split()
    assert header[:4] == ["step", "kind", "op", "what"]
    assert [h for h in header if h in training.CLASSES] == list(training.CLASSES)
    assert "training spec last:2" in out and "trainable" in out
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["trainable_bytes"] > 0 and data["gradient_bytes"] > 0
    assert (tmp_path / "p.png").exists()


def test_cli_summary_line_of_a_training_plan(tmp_path, capsys):
    model = tmp_path / "small.tflite"
    model.write_bytes(small_cnn())
    status, _, err = run_cli(capsys, "plan", model, "--train", "bias", "--summary", tmp_path / "s.csv")
    assert status == 0, err
    header, row = (tmp_path / "s.csv").read_text().splitlines()
    values = dict(zip(header.split(","), row.split(",")))
    assert values["options"] == "--train bias"
    assert int(values["peak_bytes"]) == training.plan_training(small_cnn(), "bias").peak_bytes


def test_cli_sram_limit_exits_2_with_needed_and_allowed(tmp_path, capsys):
    model = tmp_path / "small.tflite"
    model.write_bytes(small_cnn())
    status, _, err = run_cli(capsys, "plan", model, "--train", "bias", "--sram", "1K")
    plan = training.plan_training(small_cnn(), "bias")
    assert status == 2
    assert f"needs {plan.peak_bytes:,} bytes of SRAM but the limit is 1,024 bytes" in err


@pytest.mark.parametrize("argv, message", [
    (["--train", "last:x"], "'x' is not a whole number"),
    (["--train", "layers:3"], "op 3 (AVERAGE_POOL_2D) is not a weight layer"),
    (["--train", "bias", "--tiling", "rows"], "drop --tiling"),
    (["--train", "bias", "--io", "int8"], "drop --io"),
    (["--no-reorder-updates"], "goes with --train"),
    (["--train", "auto"], "needs a limit"),
])
def test_cli_bad_training_arguments_exit_2(tmp_path, capsys, argv, message):
    model = tmp_path / "small.tflite"
    model.write_bytes(small_cnn())
    status, _, err = run_cli(capsys, "plan", model, *argv)
    assert status == 2 and message in err and "Traceback" not in err


def test_cli_unsupported_op_exits_1_naming_it(tmp_path, capsys):
    model = tmp_path / "pool.tflite"
    model.write_bytes(max_pool_cnn())
    status, _, err = run_cli(capsys, "plan", model, "--train", "bias")
    assert status == 1 and "op 1 (MAX_POOL_2D)" in err
