"""Score candidate answers by a local model's log-likelihood, all candidates of one prompt in one batch.

A small model chooses far better than it writes: code enumerates the answers that are possible, and the
model scores each as the assistant's reply to the prompt. The prompt is evaluated once (and its prefix
kept between calls, as a chat slot keeps it); the candidates are laid out as a token trie, each trie
node evaluated once for every candidate passing through it (one llama.cpp batch whose tokens belong to
several sequences that share the prompt's KV cells), so 200 candidates that share `{"goal": "(on ` cost
what their differing tokens cost. Each candidate ends with the end-of-turn token, so an answer that is
only the beginning of what the model would write scores low.

    scorer = CandidateScorer(llama_cpp.Llama(model_path=...))
    scorer.score(messages, ['{"kind": "task"}', '{"kind": "update"}'])   # -> Scored(logprobs=[[...], [...]])
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from servicerobot.language.base import Scored

__all__ = ["CandidateScorer", "InProcessScorer", "TokenTrie"]

_MAX_SEQ = 64  # sequences per batch (llama.cpp allows up to 256); candidates beyond it go in the next group


@dataclass
class _Node:
    token: int
    depth: int
    seqs: list[int] = field(default_factory=list)  # candidate indices through this node
    children: dict[int, _Node] = field(default_factory=dict)


class TokenTrie:
    """The candidates' token lists as a trie (shared prefixes stored once), nodes in depth-first order."""

    def __init__(self, candidates: Sequence[Sequence[int]]):
        self.root = _Node(-1, -1)
        self.paths: list[list[_Node]] = []
        for index, tokens in enumerate(candidates):
            node, path = self.root, []
            for token in tokens:
                child = node.children.get(token)
                if child is None:
                    child = node.children[token] = _Node(int(token), node.depth + 1)
                child.seqs.append(index)
                path.append(child)
                node = child
            self.paths.append(path)

    def nodes(self) -> list[_Node]:
        """Every node, parents before children."""
        out, stack = [], list(reversed(self.root.children.values()))
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children.values()))
        return out


def _log_softmax_at(logits: np.ndarray, tokens: Sequence[int]) -> list[float]:
    top = float(logits.max())
    lse = top + float(np.log(np.exp(logits - top).sum()))
    return [float(logits[t]) - lse for t in tokens]


class CandidateScorer:
    """Scores candidate replies to a chat with a `llama_cpp.Llama`'s weights, in a context of its own.

    Args:
        llama: the loaded model (its weights, tokenizer and chat template are used; its context is not).
        n_ctx: tokens the scoring context holds (prompt + one group's trie).
        n_batch: tokens per llama.cpp decode call.
        threads: CPU threads for evaluation.
    """

    def __init__(self, llama, *, n_ctx: int = 8192, n_batch: int = 512, threads: int = 1):
        import llama_cpp
        from llama_cpp import _internals
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llama = llama
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = int(n_ctx)
        params.n_batch = params.n_ubatch = int(n_batch)
        params.n_seq_max = _MAX_SEQ + 1
        params.kv_unified = True  # every sequence sees the prompt's cells
        params.n_threads = params.n_threads_batch = int(threads)
        params.no_perf = True
        self._ctx = _internals.LlamaContext(model=llama._model, params=params, verbose=False)
        self.n_ctx, self.n_batch = int(n_ctx), int(n_batch)
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, _MAX_SEQ + 1)
        self._kept: list[int] = []  # the prompt tokens in sequence 0's cells
        self._last_logits: np.ndarray | None = None
        template = llama.metadata.get("tokenizer.chat_template")
        model = llama._model
        eos, bos = model.token_eos(), model.token_bos()
        self._formatter = Jinja2ChatFormatter(
            template=template, eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "") if template else None
        self.end_of_turn = self._end_of_turn()

    def _end_of_turn(self) -> int:
        """The token that ends an assistant turn (`<|im_end|>` for ChatML models, else end of text)."""
        import llama_cpp

        eot = llama_cpp.llama_vocab_eot(self.llama._model.vocab)
        return int(eot) if eot != -1 else int(self.llama._model.token_eos())

    def set_threads(self, threads: int) -> None:
        import llama_cpp

        llama_cpp.llama_set_n_threads(self._ctx.ctx, int(threads), int(threads))

    def prompt_text(self, messages: Sequence[dict]) -> str:
        """The chat rendered by the model's template up to the start of the assistant's reply."""
        if self._formatter is None:  # no template in the GGUF: plain ChatML
            body = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
            return body + "<|im_start|>assistant\n"
        return self._formatter(messages=[dict(m) for m in messages]).prompt

    def tokenize(self, text: str) -> list[int]:
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    # ------------------------------------------------------------------ evaluation
    def _decode(self, entries: list[tuple[int, int, Sequence[int], bool]]) -> None:
        """One llama_decode of (token, position, sequence ids, wants logits) entries."""
        import llama_cpp

        batch = self._batch
        batch.n_tokens = len(entries)
        for i, (token, pos, seqs, logits) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = len(seqs)
            for j, s in enumerate(seqs):
                batch.seq_id[i][j] = s
            batch.logits[i] = logits
        code = llama_cpp.llama_decode(self._ctx.ctx, batch)
        if code != 0:
            raise RuntimeError(f"llama_decode failed with code {code} (context of {self.n_ctx} tokens full?)")

    def _logits(self, i: int) -> np.ndarray:
        import llama_cpp

        n_vocab = self.llama.n_vocab()
        ptr = llama_cpp.llama_get_logits_ith(self._ctx.ctx, i)
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,)).copy()

    def _eval_prompt(self, tokens: list[int]) -> int:
        """Sequence 0 holds `tokens` afterwards; the last token's logits are kept. Tokens evaluated."""
        import llama_cpp

        if not tokens:
            raise ValueError("empty prompt")
        memory = self._ctx.memory
        llama_cpp.llama_memory_seq_keep(memory, 0)  # drop the last call's candidate sequences
        keep = 0
        for a, b in zip(self._kept, tokens):
            if a != b:
                break
            keep += 1
        if keep == len(tokens):
            keep -= 1  # evaluate the last token again for its logits
        llama_cpp.llama_memory_seq_rm(memory, 0, keep, -1)
        self._kept = list(tokens[:keep])
        rest = tokens[keep:]
        for start in range(0, len(rest), self.n_batch):
            chunk = rest[start:start + self.n_batch]
            last = start + len(chunk) == len(rest)
            self._decode([(t, keep + start + i, (0,), last and i == len(chunk) - 1) for i, t in enumerate(chunk)])
            self._kept.extend(chunk)
            if last:
                self._last_logits = self._logits(len(chunk) - 1)
        return len(rest)

    def score_tokens(self, prompt: list[int], candidates: Sequence[Sequence[int]]) -> Scored:
        """Log-probabilities of each candidate's tokens after `prompt`."""
        import llama_cpp

        if len(prompt) + 1 >= self.n_ctx:
            raise ValueError(f"the prompt has {len(prompt)} tokens; the scoring context holds {self.n_ctx}")
        evaluated = self._eval_prompt(prompt)
        start = len(prompt)
        out: list[list[float]] = [[] for _ in candidates]
        nodes_total = 0
        memory = self._ctx.memory
        for g0 in range(0, len(candidates), _MAX_SEQ):
            group = list(candidates[g0:g0 + _MAX_SEQ])
            trie = TokenTrie(group)
            nodes = trie.nodes()
            if start + max((len(c) for c in group), default=0) >= self.n_ctx or \
                    start + len(nodes) > self.n_ctx:
                raise ValueError(f"{len(nodes)} candidate tokens after a {start}-token prompt do not fit the "
                                 f"scoring context of {self.n_ctx} tokens")
            for s in range(1, len(group) + 1):
                llama_cpp.llama_memory_seq_cp(memory, 0, s, -1, -1)
            logits_of: dict[int, np.ndarray] = {}
            for c0 in range(0, len(nodes), self.n_batch):
                chunk = nodes[c0:c0 + self.n_batch]
                self._decode([(n.token, start + n.depth, [i + 1 for i in n.seqs], bool(n.children))
                              for n in chunk])
                for i, n in enumerate(chunk):
                    if n.children:
                        logits_of[id(n)] = self._logits(i)
            nodes_total += len(nodes)
            first = _log_softmax_at(self._last_logits, [n.token for n in trie.root.children.values()])
            first_of = {n.token: lp for n, lp in zip(trie.root.children.values(), first)}
            child_lp: dict[int, float] = {}
            for n in nodes:
                if n.children:
                    kids = list(n.children.values())
                    for kid, lp in zip(kids, _log_softmax_at(logits_of[id(n)], [k.token for k in kids])):
                        child_lp[id(kid)] = lp
            for i, path in enumerate(trie.paths):
                out[g0 + i] = [first_of[path[0].token]] + [child_lp[id(n)] for n in path[1:]] if path else []
            llama_cpp.llama_memory_seq_keep(memory, 0)
        return Scored(out, evaluated, nodes_total)

    def search_tokens(self, prompt: list[int], candidates: Sequence[Sequence[int]], beam: int,
                      keep: Sequence[int] = (), budget: float | None = None) -> Scored:
        """Like `score_tokens`, but only the `beam` likeliest partial answers go on at each branching of the
        candidates' trie (a beam search constrained to the candidates); a candidate pruned on the way gets an
        empty list. Chains of tokens without a branching are evaluated in one step, so a call costs about
        `beam` x the candidates' length in tokens and one decode per branching depth. The candidates whose
        indices are in `keep` are never pruned (scored to their end in the same call). Past `budget` seconds
        the search keeps only its likeliest path and finishes it (`Scored.cut`): the best answer so far, not
        every kept one."""
        import time

        import llama_cpp

        t0 = time.perf_counter()
        cut = False
        if beam < 1:
            raise ValueError(f"beam must be >= 1, got {beam}")
        keep = sorted({int(i) for i in keep})
        if keep and (keep[0] < 0 or keep[-1] >= len(candidates)):
            raise ValueError(f"keep holds answer indices from 0 to {len(candidates) - 1}, got {keep[0]}..{keep[-1]}")
        if beam + len(keep) > _MAX_SEQ:
            raise ValueError(f"beam + kept answers must be at most {_MAX_SEQ}, got {beam} + {len(keep)}")
        if len(prompt) + 1 >= self.n_ctx:
            raise ValueError(f"the prompt has {len(prompt)} tokens; the scoring context holds {self.n_ctx}")
        evaluated = self._eval_prompt(prompt)
        start = len(prompt)
        trie = TokenTrie(candidates)
        kept = {id(n) for i in keep for n in trie.paths[i]}  # nodes on a kept answer's path
        memory = self._ctx.memory
        node_lp: dict[int, float] = {}  # id(node) -> log-probability of its token after its parent
        finished: list[tuple[float, _Node]] = []
        kids = list(trie.root.children.values())
        frontier = [(lp, kid, 0) for kid, lp in zip(kids, _log_softmax_at(self._last_logits, [k.token for k in kids]))]
        for lp, kid, _ in frontier:
            node_lp[id(kid)] = lp
        nodes_total = 0
        free = list(range(beam + len(keep), 0, -1))  # sequence ids for the paths (0 is the prompt)
        while frontier:
            live = []
            for cum, node, parent_seq in frontier:
                if not node.children:
                    finished.append((cum, node))
                else:
                    live.append((cum, node, parent_seq))
            live.sort(key=lambda e: -e[0])
            finished.sort(key=lambda e: -e[0])
            if finished and live and finished[0][0] >= live[0][0] and len(finished) >= min(4, len(candidates)) \
                    and not any(id(e[1]) in kept for e in live):
                break  # no live path can beat the best finished ones: log-probabilities only fall
            if budget is not None and not cut and time.perf_counter() - t0 > budget:
                cut, beam, kept = True, 1, set()
            if cut and finished:
                break
            live = live[:beam] + [e for e in live[beam:] if id(e[1]) in kept]
            if not live:
                break
            # give each path a sequence holding its prefix: the first child of a parent keeps the parent's
            by_parent: dict[int, int] = {}
            used = {seq for _, _, seq in live if seq}
            spare = [s for s in free if s not in used]
            plan = []
            for cum, node, parent_seq in live:
                if parent_seq not in by_parent:
                    by_parent[parent_seq] = 0
                    seq = parent_seq if parent_seq else spare.pop()
                else:
                    seq = spare.pop()
                plan.append((cum, node, parent_seq, seq))
            for _, _, parent_seq, seq in plan:
                if seq != parent_seq:
                    llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
                    llama_cpp.llama_memory_seq_cp(memory, parent_seq, seq, -1, -1)
            # each path: its node and the chain of only-children after it, up to a branching or a leaf
            entries, ends = [], []
            for cum, node, _, seq in plan:
                chain = [node]
                while len(chain[-1].children) == 1 and next(iter(chain[-1].children.values())).children:
                    chain.append(next(iter(chain[-1].children.values())))
                first = len(entries)
                entries.extend((n.token, start + n.depth, (seq,), True) for n in chain)
                ends.append((cum, chain, seq, first))
            if start + max(n.depth for _, chain, _, _ in ends for n in chain) + 1 >= self.n_ctx:
                raise ValueError(f"the candidates do not fit the scoring context of {self.n_ctx} tokens")
            logits = []
            for c0 in range(0, len(entries), self.n_batch):
                self._decode(entries[c0:c0 + self.n_batch])
                logits.extend(self._logits(i) for i in range(len(entries[c0:c0 + self.n_batch])))
            nodes_total += len(entries)
            frontier = []
            for cum, chain, seq, first in ends:
                for k, n in enumerate(chain):
                    children = list(n.children.values())
                    lps = _log_softmax_at(logits[first + k], [c.token for c in children])
                    for child, lp in zip(children, lps):
                        node_lp[id(child)] = lp
                    if k + 1 < len(chain):
                        cum += node_lp[id(chain[k + 1])]
                    else:
                        frontier.extend((cum + node_lp[id(c)], c, seq) for c in children)
        llama_cpp.llama_memory_seq_keep(memory, 0)
        out: list[list[float]] = []
        for path in trie.paths:
            out.append([node_lp[id(n)] for n in path] if path and all(id(n) in node_lp for n in path) else [])
        return Scored(out, evaluated, nodes_total, cut=cut)

    def score(self, messages: Sequence[dict], answers: Sequence[str], beam: int | None = None,
              keep: Sequence[int] = (), budget: float | None = None) -> Scored:
        """Log-probabilities of each answer (then the end of the turn) as the assistant's reply to `messages`;
        with `beam`, by the constrained beam search of `search_tokens` (pruned answers get empty lists, except
        those in `keep`)."""
        prompt = self.tokenize(self.prompt_text(messages))
        candidates = [self.tokenize(a) + [self.end_of_turn] for a in answers]
        if beam is not None:
            return self.search_tokens(prompt, candidates, beam, keep, budget)
        return self.score_tokens(prompt, candidates)

    def close(self) -> None:
        import llama_cpp

        if self._batch is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None
        self._ctx.close()


class InProcessScorer:
    """A `ScoringModel` in this process (no server): one `CandidateScorer` per slot over one `Llama`.

    Args:
        model_path: the GGUF file.
        threads: CPU threads.
    """

    def __init__(self, model_path: str, *, threads: int = 1, n_ctx: int = 4096):
        from llama_cpp import Llama

        self.llama = Llama(model_path=str(model_path), n_ctx=256, n_threads=threads, verbose=False)
        self.threads, self.n_ctx = int(threads), int(n_ctx)
        self.name = f"local:{self.llama.metadata.get('general.name', model_path)}"
        self._scorers: dict[str | None, CandidateScorer] = {}

    def score(self, messages, answers, *, slot: str | None = None, beam: int | None = None,
              keep: Sequence[int] = (), budget: float | None = None) -> Scored:
        import time

        scorer = self._scorers.get(slot)
        if scorer is None:
            scorer = self._scorers[slot] = CandidateScorer(self.llama, n_ctx=self.n_ctx, threads=self.threads)
        t0 = time.perf_counter()
        scored = scorer.score(messages, answers, beam=beam, keep=keep, budget=budget)
        scored.seconds = time.perf_counter() - t0
        return scored
