"""PDDLGym's shipped files, read without importing `pddlgym` (which needs `gym` and pillow < 10).

`pddlgym_root()` finds the installed package's `pddl/` folder; `registered_domains()` reads the table of
environments and their keyword arguments from the package's `__init__.py` with `ast`, so our ids follow
whatever release is installed. `read_domain_text` applies the few repairs that PDDLGym's regex-based
parser never notices but a PDDL parser must (each one named in the returned list).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from servicerobot.errors import DependencyNotInstalled, PDDLSemanticError, ServiceRobotError, install_hint
from servicerobot.limits import excerpt, read_text_bounded, shorten
from servicerobot.pddl.sexpr import SList, Token, parse_sexpr

__all__ = ["MAX_DOMAIN_BYTES", "MAX_OUTCOMES", "MAX_PROBLEM_BYTES", "PDDLGymFileError", "PDDLGymMissingError",
           "PDDLGymSpec", "pddlgym_root", "read_domain_text", "read_pddl_file", "registered_domains", "sexpr_text",
           "split_probabilistic"]

# pddlgym's largest files: a 9.7 KB domain (navigation10), a 1.3 MB problem (manyferry_test)
MAX_DOMAIN_BYTES = 256 << 10
MAX_PROBLEM_BYTES = 4 << 20
MAX_OUTCOMES = 1024  # deterministic actions one probabilistic action is split into

INSTALL_HINT = (f'{install_hint("pddlgym")}, then python -m servicerobot.envs.pddlgym.install (pddlgym pins '
                'pillow<10: it installs its wheel with that pin relaxed; docs/pddlgym.md)')


class PDDLGymMissingError(DependencyNotInstalled):
    """The `pddlgym` package (whose PDDL files these environments read) is not installed."""


class PDDLGymFileError(ServiceRobotError, ValueError):
    """A domain file or problem folder that cannot be read: missing, not a regular file (a folder, a FIFO,
    a device), over the size limit, or not UTF-8 text."""


class PDDLGymDialectError(PDDLSemanticError):
    """A PDDLGym domain that breaks its own conventions (an action predicate used outside a top-level
    precondition conjunct, no action predicate at all, probabilities that are not probabilities, or
    more outcomes than `MAX_OUTCOMES`)."""


def read_pddl_file(path: str | Path, cap: int, what: str) -> str:
    """The text of a PDDL file, read through `limits.read_text_bounded` (regular files of at most `cap` bytes).

    Raises:
        PDDLGymFileError: the file is missing, not a regular file, too large or not UTF-8.
    """
    try:
        return read_text_bounded(path, cap, what, PDDLGymFileError)
    except FileNotFoundError:
        raise PDDLGymFileError(f"{shorten(str(path), 200)}: the {what} does not exist") from None


@dataclass(frozen=True)
class PDDLGymSpec:
    """One PDDLGym environment as its package registers it: `PDDLEnv<Name>[Test]-v0`."""

    name: str                   # lowercase file stem, e.g. "blocks"
    operators_as_actions: bool
    dynamic_action_space: bool
    render: str | None          # the name of PDDLGym's render function, if it has one

    def files(self, test: bool = False) -> tuple[Path, Path]:
        """(domain file, problem folder) inside the installed package."""
        root = pddlgym_root()
        return root / f"{self.name}.pddl", root / (f"{self.name}_test" if test else self.name)


def pddlgym_root() -> Path:
    """The `pddl/` folder of the installed `pddlgym` package (found without importing it).

    Raises:
        PDDLGymMissingError: pddlgym is not installed.
    """
    spec = importlib.util.find_spec("pddlgym")
    if spec is None or not spec.submodule_search_locations:
        raise PDDLGymMissingError(f"pddlgym is not installed: {INSTALL_HINT}")
    for location in spec.submodule_search_locations:
        folder = Path(location) / "pddl"
        if folder.is_dir():
            return folder
    raise PDDLGymMissingError(f"the installed pddlgym has no pddl/ folder; reinstall it: {INSTALL_HINT}")


def _render_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Lambda):  # navigation: lambda obs: navigation_render(obs, ...)
        for sub in ast.walk(node.body):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                return sub.func.id
    return None


_REGISTERED: dict[str, PDDLGymSpec] | None = None


def registered_domains() -> dict[str, PDDLGymSpec]:
    """Every PDDL environment the installed pddlgym registers (its `for env_name, kwargs in [...]` table).

    Raises:
        PDDLGymMissingError: pddlgym is not installed, or its table could not be read.
    """
    global _REGISTERED
    if _REGISTERED is not None:
        return _REGISTERED
    init = pddlgym_root().parent / "__init__.py"
    tree = ast.parse(read_pddl_file(init, MAX_PROBLEM_BYTES, "pddlgym package's __init__.py"))
    found: dict[str, PDDLGymSpec] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.For) and isinstance(node.iter, ast.List)):
            continue
        for item in node.iter.elts:
            if not (isinstance(item, ast.Tuple) and len(item.elts) == 2 and isinstance(item.elts[0], ast.Constant)
                    and isinstance(item.elts[1], ast.Dict)):
                continue
            kwargs = {k.value: v for k, v in zip(item.elts[1].keys, item.elts[1].values)
                      if isinstance(k, ast.Constant)}

            def flag(key: str, kwargs: dict = kwargs) -> bool:
                value = kwargs.get(key)
                return bool(isinstance(value, ast.Constant) and value.value)

            name = str(item.elts[0].value).lower()
            found[name] = PDDLGymSpec(name, flag("operators_as_actions"), flag("dynamic_action_space"),
                                      _render_name(kwargs["render"]) if "render" in kwargs else None)
    if not found:
        raise PDDLGymMissingError(f"could not read the environment table from {init}")
    _REGISTERED = found
    return found


_ACTIONS = re.compile(r"\(:actions\s([^()]*)\)", re.IGNORECASE)
_GLUED_DASH = re.compile(r"(\?[^\s()]+)\s+-(?=[a-zA-Z])")


def sexpr_text(expr: SList | Token) -> str:
    """An s-expression back as PDDL text (one line)."""
    if isinstance(expr, list):
        return "(" + " ".join(sexpr_text(e) for e in expr) + ")"
    return str(expr)


def read_domain_text(path: Path) -> tuple[str, tuple[str, ...], list[str]]:
    """(text, action predicate names from the `; (:actions ...)` comment, repairs applied) for a domain file,
    read with `read_pddl_file` (which raises `PDDLGymFileError`).

    Repairs: closing parentheses missing at the end of the file (PDDLGym's parser stops at the last action
    and never looks), and a type glued to its dash in a parameter list (`?obj -ball`).
    """
    raw = read_pddl_file(path, MAX_DOMAIN_BYTES, "domain file")
    match = _ACTIONS.search(raw)
    action_names = tuple(match.group(1).lower().split()) if match else ()
    repairs: list[str] = []
    code = "\n".join(line.split(";", 1)[0] for line in raw.splitlines())
    depth = 0
    for ch in code:
        depth += (ch == "(") - (ch == ")")
    if depth > 0:
        raw = raw + "\n" + ")" * depth + "\n"
        repairs.append(f"added {depth} closing parenthesis missing at the end of the file")
    glued = _GLUED_DASH.findall(raw)
    if glued:
        raw = _GLUED_DASH.sub(r"\1 - ", raw)
        repairs.append(f"separated a type from its dash after {', '.join(sorted(set(glued)))} ('-ball' -> '- ball')")
    return raw, action_names, repairs


def split_probabilistic(text: str) -> tuple[str, dict[str, tuple[tuple[float, str], ...]]]:
    """Compile `(probabilistic p1 e1 p2 e2 ...)` effects into one deterministic action per outcome.

    An action with probabilistic effects `name` becomes `name~0`, `name~1`, ... (the product of each
    effect's outcomes, "no change" included when the probabilities sum below 1), all with its precondition.
    Returns the new domain text and, per original action, its (probability, action name) outcomes; an
    action without probabilistic effects is absent from the map.
    """
    expr = parse_sexpr(text)
    outcomes: dict[str, tuple[tuple[float, str], ...]] = {}
    new_body: list = []
    for part in expr:
        if not (isinstance(part, list) and part and part[0] == ":action"):
            new_body.append(part)
            continue
        name = str(part[1])
        keys = {str(part[i]): i for i in range(2, len(part) - 1) if str(part[i]).startswith(":")}
        effect = part[keys[":effect"] + 1] if ":effect" in keys else None
        items = list(effect[1:]) if isinstance(effect, list) and effect and effect[0] == "and" else [effect]
        choices: list[list[tuple[float, list]]] = []
        fixed: list = []
        for item in items:
            if isinstance(item, list) and item and item[0] == "probabilistic":
                choices.append(_outcomes(name, item))
            elif item is not None:
                fixed.append(item)
        if not choices:
            new_body.append(part)
            continue
        count = _product(len(options) for options in choices)  # counted before the product is built
        if count > MAX_OUTCOMES:
            sizes = " x ".join(str(len(o)) for o in choices[:8]) + (" x ..." if len(choices) > 8 else "")
            shown = f"{count:,}" if count < 10 ** 18 else f"over 2^{count.bit_length() - 1}"
            raise PDDLGymDialectError(
                f"action {excerpt(name)}: its {len(choices)} probabilistic effects have {sizes} outcomes, "
                f"{shown} together, over the limit of {MAX_OUTCOMES:,} deterministic actions; merge the "
                "effects into fewer (probabilistic ...) blocks")
        combos: list[tuple[float, list]] = [(1.0, [])]
        for options in choices:
            combos = [(p * q, lits + more) for p, lits in combos for q, more in options]
        variants = []
        for k, (p, lits) in enumerate(combos):
            variant = [f"{name}~{k}" if i == 1 else e for i, e in enumerate(part)]
            variant[keys[":effect"] + 1] = ["and", *fixed, *lits]
            new_body.append(variant)
            variants.append((p, f"{name}~{k}"))
        outcomes[name] = tuple(variants)
    new_text = sexpr_text(new_body).replace(":probabilistic-effects", "")
    return new_text, outcomes


def _product(numbers) -> int:
    out = 1
    for n in numbers:
        out *= n
    return out


def _outcomes(action: str, item: list) -> list[tuple[float, list]]:
    """The (probability, effect literals) of one `(probabilistic p1 e1 ...)`, "no change" added for 1 - sum.

    Raises:
        PDDLGymDialectError: a probability that is not a number in [0, 1], a missing effect, or a sum over 1.
    """
    if len(item) % 2 == 0:
        raise PDDLGymDialectError(f"action {excerpt(action)}: (probabilistic ...) must alternate probabilities "
                                  f"and effects, got {excerpt(sexpr_text(item))}")
    options, total = [], 0.0
    for i in range(1, len(item) - 1, 2):
        try:
            p = float(str(item[i]))
        except ValueError:
            p = float("nan")
        if not 0.0 <= p <= 1.0:  # also refuses nan
            raise PDDLGymDialectError(f"action {excerpt(action)}: probability {excerpt(str(item[i]))} must be a "
                                      "number in [0, 1]")
        total += p
        body = item[i + 1]
        options.append((p, list(body[1:]) if isinstance(body, list) and body and body[0] == "and" else [body]))
    if total > 1 + 1e-9:
        raise PDDLGymDialectError(f"action {excerpt(action)}: the probabilities of one (probabilistic ...) add up "
                                  f"to {total:g}, over 1")
    if total < 1 - 1e-12:
        options.append((1 - total, []))
    return options
