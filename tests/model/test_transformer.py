import dataclasses

import pytest
import torch
from torch import nn

from coderlm.model import EncoderDecoder, ModelConfig
from coderlm.model.transformer import CausalSelfAttention, CrossAttention, EncoderSelfAttention
from tests.conftest import tiny_config


def test_cache_equals_no_cache(tiny, codec, inputs):
    """Decoding one token at a time with the KV cache gives the full forward's logits."""
    ids, mask = inputs
    targets = torch.from_numpy(codec.encode([[72.5, 0.001], [-3.0, 1e9], [0.0, float("nan")]]).ids)
    full = tiny(ids, mask, targets)  # (B, L, V)
    memory = tiny.encode(ids, mask)
    steps = tiny.teacher_forced_inputs(targets)[:, None]  # (B, 1, L)
    cache = tiny.decoder.new_cache(3, ids.device, torch.float32)
    stepwise = torch.cat([tiny.decoder(steps[..., t : t + 1], memory, cache) for t in range(steps.shape[-1])], -2)
    torch.testing.assert_close(stepwise[:, 0], full, atol=1e-5, rtol=0)


def test_cache_with_chunked_prefix_equals_no_cache(tiny, codec, inputs):
    """A multi-token chunk after a cached prefix uses the right causal mask."""
    ids, mask = inputs
    targets = torch.from_numpy(codec.encode([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).ids)
    full = tiny(ids, mask, targets)
    memory = tiny.encode(ids, mask)
    steps = tiny.teacher_forced_inputs(targets)[:, None]
    cache = tiny.decoder.new_cache(3, ids.device, torch.float32)
    first = tiny.decoder(steps[..., :5], memory, cache)
    rest = tiny.decoder(steps[..., 5:], memory, cache)
    torch.testing.assert_close(torch.cat([first, rest], -2)[:, 0], full, atol=1e-5, rtol=0)


def test_samples_share_memory_without_copies(tiny, inputs):
    """S samples per input (folded into cross-attention queries) equal S separate rows."""
    ids, mask = inputs
    memory = tiny.encode(ids, mask)
    tokens = torch.randint(0, tiny.cfg.output_vocab_size, (3, 5, 4))
    folded = tiny.decoder(tokens, memory)  # (B, S, t, V)
    for s in range(5):
        single = tiny.decoder(tokens[:, s : s + 1], memory)
        torch.testing.assert_close(folded[:, s : s + 1], single, atol=1e-5, rtol=0)


def test_padding_does_not_change_encoding(tiny, inputs):
    ids, mask = inputs
    states = tiny.encoder(ids, mask)
    alone = tiny.encoder(ids[1:2, :10], mask[1:2, :10])
    torch.testing.assert_close(states[1:2, :10], alone, atol=1e-5, rtol=0)
    padded = ids.clone()
    padded[1, 10:] = 7  # garbage under the mask must not matter
    torch.testing.assert_close(tiny.encoder(padded, mask)[1, :10], states[1, :10], atol=1e-5, rtol=0)


@pytest.mark.parametrize("positions", ["rope", "learned"])
def test_shapes_and_loss(positions, inputs):
    cfg = tiny_config(positions=positions, encoder_dim=48, decoder_dim=32, encoder_layers=1, decoder_layers=3)
    model = EncoderDecoder(cfg)
    ids, mask = inputs
    targets = torch.randint(0, cfg.output_vocab_size, (3, cfg.output_length))
    assert model(ids, mask, targets).shape == (3, cfg.output_length, cfg.output_vocab_size)
    loss = model.loss(ids, mask, targets)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(p.grad is not None for p in model.parameters())


def test_loss_weights_mask_missing_objectives(tiny, inputs):
    ids, mask = inputs
    targets = torch.randint(0, tiny.cfg.output_vocab_size, (3, tiny.cfg.output_length))
    weights = torch.zeros(3, tiny.cfg.output_length)
    weights[:, :6] = 1  # only the first objective counts
    other = targets.clone()
    other[:, 6:] = 0  # so changing the second objective's tokens changes nothing
    logits_a = tiny(ids, mask, targets)
    # teacher forcing feeds earlier tokens only, so the first objective's logits are unchanged too
    torch.testing.assert_close(tiny(ids, mask, other)[:, :6], logits_a[:, :6])
    torch.testing.assert_close(tiny.loss(ids, mask, targets, weights), tiny.loss(ids, mask, other, weights))


@pytest.mark.parametrize("positions", ["rope", "learned"])
def test_positions_matter(positions):
    """Without positions a transformer is order-blind; each scheme must make order visible."""
    torch.manual_seed(0)
    encoder = EncoderDecoder(tiny_config(positions=positions)).encoder
    ids = torch.arange(1, 9)[None, :]
    mask = torch.ones_like(ids, dtype=torch.bool)
    forward = encoder(ids, mask)[0]
    backward = encoder(ids.flip(1), mask)[0].flip(0)  # same tokens, states re-aligned per token
    assert not torch.allclose(forward, backward, atol=1e-4)


def test_too_long_input_raises(tiny):
    ids = torch.ones(1, 25, dtype=torch.long)
    with pytest.raises(ValueError, match="max_input_len=24"):
        tiny.encoder(ids, ids.bool())


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"encoder_heads": 5}, "encoder_heads=5 must divide encoder_dim=32"),
        ({"decoder_layers": 0}, "decoder_layers must be a positive integer"),
        ({"positions": "alibi"}, "positions must be 'rope' or 'learned'"),
        ({"dropout": 1.5}, "dropout must be in"),
        ({"pad_id": 200}, "pad_id=200"),
    ],
)
def test_config_errors_name_the_option(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny_config(**overrides)


def test_config_from_dict_rejects_unknown_and_round_trips():
    cfg = tiny_config()
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match=r"unknown model option\(s\) \['d_model'\]"):
        ModelConfig.from_dict({**cfg.to_dict(), "d_model": 3})
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.encoder_dim = 64


def test_dropout_acts_on_attention_outputs_not_probabilities():
    """Dropout on the (B, nh, T, T) probabilities costs SDPA its fused CPU kernel (8x slower);
    the config promises dropout on attention outputs and MLPs, and training is stochastic."""
    layers = (EncoderSelfAttention(16, 2, 0.5), CausalSelfAttention(16, 2, 0.5), CrossAttention(16, 16, 2, 0.5))
    for attention in layers:
        assert isinstance(attention.dropout, nn.Dropout) and attention.dropout.p == 0.5
    cfg = ModelConfig(
        input_vocab_size=50,
        output_vocab_size=20,
        output_length=3,
        encoder_dim=16,
        decoder_dim=16,
        encoder_heads=2,
        decoder_heads=2,
        dropout=0.5,
    )
    model = EncoderDecoder(cfg)
    ids, mask = torch.randint(2, 50, (2, 7)), torch.ones(2, 7, dtype=torch.bool)
    targets = torch.randint(0, 20, (2, 3))
    model.train()
    assert not torch.equal(model.loss(ids, mask, targets), model.loss(ids, mask, targets))
    model.eval()
    assert torch.equal(model.loss(ids, mask, targets), model.loss(ids, mask, targets))


def test_pooled_memory_reads_the_mean_of_the_unpadded_states(codec, inputs):
    """With ``pooled_memory`` a padded row decodes as it does alone, and the cache still equals no cache."""
    torch.manual_seed(0)
    cfg = tiny_config(output_vocab_size=codec.vocab_size, output_length=codec.total_length, pooled_memory=True)
    model = EncoderDecoder(cfg).eval()
    ids, mask = inputs
    targets = torch.from_numpy(codec.encode([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).ids)
    full = model(ids, mask, targets)
    alone = model(ids[1:2, :10], mask[1:2, :10], targets[1:2])
    torch.testing.assert_close(full[1:2], alone, atol=1e-5, rtol=0)
    memory = model.encode(ids, mask)
    assert memory.mask.shape[-1] == ids.shape[1] + 1  # the pooled slot
    steps = model.teacher_forced_inputs(targets)[:, None]
    cache = model.decoder.new_cache(3, ids.device, torch.float32)
    stepwise = torch.cat([model.decoder(steps[..., t : t + 1], memory, cache) for t in range(steps.shape[-1])], -2)
    torch.testing.assert_close(stepwise[:, 0], full, atol=1e-5, rtol=0)
    plain = EncoderDecoder(dataclasses.replace(cfg, pooled_memory=False)).eval()
    plain.load_state_dict(model.state_dict())  # the same weights: the option adds none
    assert not torch.allclose(plain(ids, mask, targets), full)


def test_independent_objectives_see_only_the_input_and_their_own_tokens(codec, inputs):
    """With ``independent_objectives`` the second objective's logits do not depend on the first's tokens,
    each objective starts from the start token, and the KV cache (one token or a chunk at a time) still
    equals the full forward."""
    torch.manual_seed(0)
    cfg = tiny_config(
        output_vocab_size=codec.vocab_size,
        output_length=codec.total_length,
        independent_objectives=True,
        number_length=codec.length,
    )
    model = EncoderDecoder(cfg).eval()
    ids, mask = inputs
    targets = torch.from_numpy(codec.encode([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).ids)
    other_first = torch.from_numpy(codec.encode([[-7e5, 2.0], [0.25, 4.0], [9.0, 6.0]]).ids)
    L = codec.length
    full, changed = model(ids, mask, targets), model(ids, mask, other_first)
    torch.testing.assert_close(changed[:, L:], full[:, L:], atol=1e-5, rtol=0)
    assert not torch.allclose(changed[:, :L], full[:, :L])
    steps = model.teacher_forced_inputs(targets)
    assert (steps[:, [0, L]] == model.decoder.bos_id).all()
    assert torch.equal(steps[:, 1:L], targets[:, : L - 1]) and torch.equal(steps[:, L + 1 :], targets[:, L:-1])
    memory = model.encode(ids, mask)
    cache = model.decoder.new_cache(3, ids.device, torch.float32)
    one = torch.cat([model.decoder(steps[:, None, t : t + 1], memory, cache) for t in range(steps.shape[-1])], -2)
    torch.testing.assert_close(one[:, 0], full, atol=1e-5, rtol=0)
    cache = model.decoder.new_cache(3, ids.device, torch.float32)
    chunks = [model.decoder(steps[:, None, a:b], memory, cache) for a, b in ((0, L - 2), (L - 2, steps.shape[-1]))]
    torch.testing.assert_close(torch.cat(chunks, -2)[:, 0], full, atol=1e-5, rtol=0)
    chained = EncoderDecoder(dataclasses.replace(cfg, independent_objectives=False)).eval()
    chained.load_state_dict(model.state_dict())  # the same weights: the option adds none
    assert not torch.allclose(chained(ids, mask, other_first)[:, L:], full[:, L:])


def test_independent_objectives_need_the_number_length():
    with pytest.raises(ValueError, match=r"independent_objectives.*number_length=0"):
        tiny_config(independent_objectives=True)
    with pytest.raises(ValueError, match=r"\(number_length=5\) to divide output_length=12"):
        tiny_config(independent_objectives=True, number_length=5)
