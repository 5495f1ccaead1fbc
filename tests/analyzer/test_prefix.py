from analyzer.divergence import common_prefix_len
from analyzer.prefix import chain, root_hash
from analyzer.segments import openai_chat_segments


def _chain(messages, model="gpt-4o"):
    return chain(openai_chat_segments({"messages": messages}), root_hash("openai", model))


def test_shared_prefix_has_equal_hashes_then_diverges():
    a = _chain([{"role": "system", "content": "S"}, {"role": "user", "content": "one"}])
    b = _chain([{"role": "system", "content": "S"}, {"role": "user", "content": "two"}])
    assert a.hashes[0] == b.hashes[0]
    assert a.hashes[1] != b.hashes[1]
    assert common_prefix_len(a.hashes, b.hashes) == 1


def test_chain_is_cumulative_not_per_segment():
    # Same second segment after different first segments must not collide.
    a = _chain([{"role": "system", "content": "A"}, {"role": "user", "content": "same"}])
    b = _chain([{"role": "system", "content": "B"}, {"role": "user", "content": "same"}])
    assert a.hashes[1] != b.hashes[1]


def test_model_is_part_of_the_root():
    msgs = [{"role": "system", "content": "S"}]
    assert _chain(msgs, "gpt-4o").hashes[0] != _chain(msgs, "gpt-4o-mini").hashes[0]


def test_sizes_are_cumulative():
    c = _chain([{"role": "system", "content": "x" * 100}, {"role": "user", "content": "y" * 20}])
    assert c.ends[0] < c.ends[1]
    assert c.bytes_at(0) == 0
    assert c.bytes_at(2) == c.ends[1]
    assert c.tokens_at(2) == -(-c.ends[1] // 4)
    assert len(c.hex[0]) == 32
