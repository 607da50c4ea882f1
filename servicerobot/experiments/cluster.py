"""What a grid's episodes need from a Ray cluster, and which language model server each worker uses.

Each world declares what one episode needs from a node, once, beside its factory: `node_needs(options)` in
`servicerobot/envs/<world>/world.py` returns a `NodeNeeds` (a GPU, and Ray custom resources naming what is
staged on the node: `unity` for AI2-THOR's Unity build, `habitat` for habitat-sim); a world without one runs
on any CPU. `needs_of(env)` reads that declaration for an env config; the runner's Ray back end turns it into
actor options (`actor_options`), refuses up front a grid that no live node can host (`check_hosts`), and
hands the GPU Ray assigned, by its physical id, to the world option the declaration names.

Model servers (`ModelServers`, from `$SERVICEROBOT_LLM_SERVERS` or `run_grid(llm_servers=...)`): a worker
uses the OpenAI-compatible server of its own node, else any other that answers; one URL for all serves a
single remote endpoint through the same path. See docs/cluster.md.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import string
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from servicerobot.envs.world import NodeNeeds
from servicerobot.errors import ServiceRobotError
from servicerobot.experiments.config import EnvConfig
from servicerobot.language.local_server import LOCAL_LLM_URL_VAR
from servicerobot.limits import excerpt

__all__ = ["EPISODES_PER_GPU_VAR", "LABEL_SHARE", "LLM_SERVERS_VAR", "LLM_SERVER_RESOURCE", "MODEL_URL_VARS",
           "NODE_WAIT_VAR", "ClusterError", "ModelServers", "actor_options", "check_hosts", "describe_needs",
           "gpu_options", "gpu_share", "hosts", "needs_of", "node_wait", "nodes_summary", "slots"]

LLM_SERVERS_VAR = "SERVICEROBOT_LLM_SERVERS"  # where the model servers are (ModelServers.parse)
EPISODES_PER_GPU_VAR = "SERVICEROBOT_EPISODES_PER_GPU"  # GPU episodes sharing one GPU at a time (default 1)
NODE_WAIT_VAR = "SERVICEROBOT_RAY_NODE_WAIT"  # seconds to wait for a node that can run what is left (600)
LLM_SERVER_RESOURCE = "llm_server"  # a node that serves a model: ray start --resources '{"llm_server": 1}'
# A custom resource is asked for as a label (a node declaring 1 hosts up to 1,000 episodes at a time): it says
# what is staged on a node, while CPUs and GPUs bound how many episodes run there.
LABEL_SHARE = 0.001
# The environment variable through which each interpreter (`agent.interpreter`) finds its server.
MODEL_URL_VARS = {"default": "OPENAI_BASE_URL", "llm": "OPENAI_BASE_URL", "local-llm": LOCAL_LLM_URL_VAR}


class ClusterError(ServiceRobotError):
    """A grid asks for what the Ray cluster does not have (a GPU node, a staged build, a model server)."""


# ---------------------------------------------------------------------------------------------- what a world needs
def needs_of(env: EnvConfig) -> NodeNeeds:
    """The node needs of an env config: its world module's `node_needs(options)` on the checked options with
    their defaults, or none (any CPU) for a world without a declaration or an env that is not a world."""
    import gymnasium as gym

    import servicerobot  # noqa: F401  (registers the ids)
    from servicerobot.envs.options import WORLDS, OptionError, check_options

    env_id = env.env_id
    if ":" in env_id:  # "module:Id": gymnasium imports the module, which registers the id
        module, env_id = env_id.split(":", 1)
        importlib.import_module(module)
    try:
        spec_kwargs = gym.spec(env_id).kwargs or {}
    except gym.error.Error:
        return NodeNeeds()  # not a Gymnasium id (Context Matters instances): plain CPU work
    world = {**spec_kwargs, **env.kwargs}.get("world")
    if not isinstance(world, str) or world not in WORLDS:
        return NodeNeeds()
    try:
        options = check_options(world, {k: v for k, v in env.kwargs.items() if k != "world"})
    except OptionError:
        return NodeNeeds()  # the episode will fail with the option's own message
    declare = getattr(importlib.import_module(f"servicerobot.envs.{world}.world"), "node_needs", None)
    return declare(options) if declare is not None else NodeNeeds()


def gpu_share(episodes_per_gpu: int | None = None) -> float:
    """The fraction of a GPU one episode asks for: 1 / episodes per GPU (`$SERVICEROBOT_EPISODES_PER_GPU`)."""
    if episodes_per_gpu is None:
        text = os.environ.get(EPISODES_PER_GPU_VAR, "1")
        try:
            episodes_per_gpu = int(text)
        except ValueError:
            raise ClusterError(f"{EPISODES_PER_GPU_VAR} must be an integer >= 1, got {text!r}") from None
    if isinstance(episodes_per_gpu, bool) or not isinstance(episodes_per_gpu, int) or not 1 <= episodes_per_gpu <= 100:
        raise ClusterError(f"episodes per GPU must be an integer in [1, 100], got {episodes_per_gpu!r}")
    return round(1.0 / episodes_per_gpu, 4)


def node_wait(text: str | None = None) -> float:
    """Seconds to wait for a node that can run what is left (`$SERVICEROBOT_RAY_NODE_WAIT`, default 600): a
    finite number >= 0 in decimal notation.

    Raises:
        ClusterError: anything else ('abc', '0x10', '1,5', 'nan', '-1', blank), naming the variable.
    """
    text = os.environ.get(NODE_WAIT_VAR) if text is None else text
    if text is None or text == "":
        return 600.0
    plain = re.fullmatch(r"\s*\+?(\d+\.?\d*|\.\d+)\s*", text, re.ASCII)  # not 0x10, 1,5, 1e3, nan
    value = float(text) if plain else math.nan
    if not math.isfinite(value):  # also 10**400 digits: inf
        raise ClusterError(f"{NODE_WAIT_VAR} must be a number of seconds >= 0 (e.g. 600), got {excerpt(text)}; "
                           "set it so, or unset it for the default of 600")
    return value


def actor_options(needs: NodeNeeds, share: float) -> dict[str, Any]:
    """Ray actor options for a worker that runs episodes with these needs: one CPU, the GPU share, labels."""
    options: dict[str, Any] = {"num_cpus": 1, "num_gpus": share if needs.gpu else 0}
    if needs.resources:
        options["resources"] = {r: LABEL_SHARE for r in needs.resources}
    return options


def describe_needs(needs: NodeNeeds) -> str:
    """The needs in words: "a GPU and the custom resource `unity`"."""
    parts = ["a GPU"] if needs.gpu else ["a CPU"]
    if needs.resources:
        parts.append("the custom resource" + ("s " if len(needs.resources) > 1 else " ")
                     + ", ".join(f"`{r}`" for r in needs.resources))
    return " and ".join(parts)


def _resources(node: dict) -> dict[str, float]:
    return node.get("Resources") or {}


def hosts(needs: NodeNeeds, nodes: Iterable[dict], share: float) -> list[dict]:
    """The live nodes (`ray.nodes()` entries) that can run an episode with these needs."""
    out = []
    for node in nodes:
        res = _resources(node)
        if not node.get("Alive", True) or res.get("CPU", 0) < 1:
            continue
        if needs.gpu and res.get("GPU", 0) < share:
            continue
        if all(res.get(r, 0) >= LABEL_SHARE for r in needs.resources):
            out.append(node)
    return out


def slots(needs: NodeNeeds, nodes: Iterable[dict], share: float) -> int:
    """How many episodes with these needs the live nodes can run at once (CPUs, and GPUs over their share)."""
    total = 0
    for node in hosts(needs, nodes, share):
        res = _resources(node)
        n = int(res.get("CPU", 0))
        if needs.gpu:
            n = min(n, int(res.get("GPU", 0) / share + 1e-6))
        total += n
    return total


def nodes_summary(nodes: Iterable[dict]) -> str:
    """The live nodes and what they declare, for messages: "127.0.0.2: 1 CPU, llm_server; ..."."""
    parts = []
    for node in nodes:
        if not node.get("Alive", True):
            continue
        res = _resources(node)
        what = [f"{res.get('CPU', 0):g} CPU"] + ([f"{res['GPU']:g} GPU"] if res.get("GPU") else [])
        what += sorted(k for k in res if k not in ("CPU", "GPU", "memory", "object_store_memory")
                       and not k.startswith(("node:", "accelerator_type:")))
        parts.append(f"{node.get('NodeManagerAddress', '?')}: {', '.join(what)}")
    return "; ".join(parts) or "no live node"


def check_hosts(groups: dict[NodeNeeds, list[str]], nodes: list[dict], share: float, where: str) -> None:
    """Raise `ClusterError` up front when no live node can run the episodes of some env (`groups`: needs ->
    env names), saying what is missing and how to add it, instead of leaving them pending."""
    for needs, envs in groups.items():
        if hosts(needs, nodes, share):
            continue
        names = ", ".join(repr(e) for e in envs)
        gpus = " --num-gpus=N" if needs.gpu else ""
        labels = (" --resources '" + json.dumps({r: 1 for r in needs.resources}) + "'") if needs.resources else ""
        why = f" ({needs.why})" if needs.why else ""
        share_note = f" (at least {share:g} GPU free per episode)" if needs.gpu and share < 1 else ""
        raise ClusterError(f"env {names} needs a node with {describe_needs(needs)}{share_note}{why}, and no live node "
                           f"of {where} has one ({nodes_summary(nodes)}); add one with `ray start --address "
                           f"HEAD:PORT{gpus}{labels}` on a machine that has it staged (docs/cluster.md), or run "
                           "that env's world on CPU (AI2-THOR controller='symbolic', habitat simulator='symbolic')")


def gpu_options(needs: NodeNeeds, gpu_ids: list[str]) -> dict[str, Any]:
    """The world option that takes the GPU Ray assigned (its physical id: Vulkan and EGL ignore
    `CUDA_VISIBLE_DEVICES`), for a worker holding `gpu_ids`."""
    if not (needs.gpu and needs.gpu_option and gpu_ids):
        return {}
    try:
        return {needs.gpu_option: int(gpu_ids[0])}
    except ValueError:  # a GPU UUID in CUDA_VISIBLE_DEVICES: not an index the renderer takes
        raise ClusterError(f"Ray assigned the GPU {gpu_ids[0]!r}, not a device index; start the node's raylet "
                           "with CUDA_VISIBLE_DEVICES listing indices (0,1,...), not UUIDs") from None


# ---------------------------------------------------------------------------------------------- model servers
def _check_placeholders(item: str) -> None:
    """An item of `$SERVICEROBOT_LLM_SERVERS` may hold one placeholder, `{node_ip}`, and no other braces."""
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(item) if name is not None]
    except ValueError as exc:  # a lone brace
        raise ClusterError(f"{LLM_SERVERS_VAR}: {excerpt(item)}: {exc}; the only placeholder is {{node_ip}}, e.g. "
                           "http://{node_ip}:8080/v1") from None
    wrong = ["{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
             for name, spec, conv in fields if name != "node_ip" or spec or conv]
    if wrong:
        raise ClusterError(f"{LLM_SERVERS_VAR}: {excerpt(item)}: unknown placeholder {excerpt(wrong[0])}; "
                           "the only placeholder is {node_ip} (the node's IP), e.g. http://{node_ip}:8080/v1")


@dataclass(frozen=True)
class ModelServers:
    """Where the workers of a cluster find OpenAI-compatible model servers (llama.cpp, vLLM, ...).

    `by_node`: node IP -> URL. `template`: a URL with `{node_ip}`, for every node that declares the Ray
    resource `llm_server` (`ray start --resources '{"llm_server": 1}'`). `shared`: URLs any worker may use
    (one remote endpoint for all). A worker tries its own node's server first, then the others (in IP order),
    then the shared ones, and uses the first that answers `GET /models`.
    """

    by_node: tuple[tuple[str, str], ...] = ()
    template: str | None = None
    shared: tuple[str, ...] = ()
    resource: str = LLM_SERVER_RESOURCE
    timeout: float = 3.0

    @classmethod
    def parse(cls, text: str | None) -> ModelServers | None:
        """`$SERVICEROBOT_LLM_SERVERS`: comma-separated items, each `IP=URL` (that node's server), a URL with
        `{node_ip}` (the server on each node with the `llm_server` resource) or a plain URL (for everyone).

        Raises:
            ClusterError: an item that is none of these.
        """
        if text is None or not text.strip():
            return None
        by_node, shared, template = [], [], None
        for item in (i.strip() for i in text.split(",")):
            if not item:
                continue
            ip, eq, url = item.partition("=")
            _check_placeholders(item)
            if eq and not ip.startswith(("http://", "https://")):
                if not url.startswith(("http://", "https://")):
                    raise ClusterError(f"{LLM_SERVERS_VAR}: {excerpt(item)}: after 'IP=' give the server's URL "
                                       "(http://IP:PORT/v1)")
                by_node.append((ip.strip(), url.strip()))
            elif not item.startswith(("http://", "https://")):
                raise ClusterError(f"{LLM_SERVERS_VAR}: {item!r} is not a URL; give IP=URL pairs, a URL with "
                                   "{node_ip} (nodes with the llm_server resource) or one URL for every worker")
            elif "{node_ip}" in item:
                if template is not None:
                    raise ClusterError(f"{LLM_SERVERS_VAR}: give at most one URL with {{node_ip}}")
                template = item
            else:
                shared.append(item)
        return cls(tuple(by_node), template, tuple(shared))

    def own(self, node_ip: str, nodes: Iterable[dict] = ()) -> list[str]:
        """The URLs of the server(s) on `node_ip` itself (`nodes`: at least that node's `ray.nodes()` entry)."""
        return self._split(node_ip, nodes)[0]

    def candidates(self, node_ip: str, nodes: Iterable[dict] = ()) -> list[str]:
        """The URLs a worker on `node_ip` tries, in order: its node's, the other nodes', the shared ones."""
        own, others = self._split(node_ip, nodes)
        return list(dict.fromkeys(own + [url for _, url in sorted(others)] + list(self.shared)))

    def _split(self, node_ip: str, nodes: Iterable[dict]) -> tuple[list[str], list[tuple[str, str]]]:
        own: list[str] = []
        others: list[tuple[str, str]] = []
        for ip, url in self.by_node:
            (own.append(url) if ip == node_ip else others.append((ip, url)))
        if self.template is not None:
            for node in nodes:
                if node.get("Alive", True) and _resources(node).get(self.resource, 0) > 0:
                    ip = node.get("NodeManagerAddress", "")
                    url = self.template.format(node_ip=ip)
                    (own.append(url) if ip == node_ip else others.append((ip, url)))
        return own, others

    def pick(self, node_ip: str, nodes: Callable[[], list[dict]] | list[dict] = (),
             answers: Callable[[str], bool] | None = None) -> str:
        """The first candidate that answers (`answers(url)`, default `GET url/models` with `timeout`).

        Raises:
            ClusterError: none answers (each is named).
        """
        answers = answers or self.answers
        listed = nodes() if callable(nodes) else nodes
        tried = self.candidates(node_ip, listed)
        for url in tried:
            if answers(url):
                return url
        raise ClusterError(f"no language model server answers for the worker on {node_ip}: tried "
                           f"{', '.join(tried) or 'none (no server configured for this node and no shared one)'}; "
                           f"start one per node (docs/cluster.md) or fix {LLM_SERVERS_VAR}")

    def answers(self, url: str) -> bool:
        """Whether the server at `url` answers `GET /models` within `timeout` seconds."""
        try:
            with urllib.request.urlopen(f"{url.rstrip('/')}/models", timeout=self.timeout) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False
