"""Execution-consistency verification of a TAMP plan.

`verify_plan` replays the task plan symbolically (each move starts where the robot is, inspections happen
at the object and only of suspicious objects), checks that the motion is continuous and follows graph edges,
that no place path contains an avoided place and that **no motion segment enters an avoided place's polygon**
(an exact segment-polygon test: touching a corner or running along an edge is not entering), that the chosen
goal clause holds, and, given a collision checker, that every segment is collision-free at the time it is
driven (suspicious objects inflated until inspected).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection
from dataclasses import dataclass, field

from servicerobot.errors import PlanVerificationError
from servicerobot.planners.tamp.geometry import segment_enters_polygon
from servicerobot.planners.tamp.goals import DnfGoal
from servicerobot.planners.tamp.motion import CollisionChecker, InspectionAware
from servicerobot.planners.tamp.result import TampPlan
from servicerobot.scenes.tamp_map import TampMap

__all__ = ["VerificationReport", "verify_plan"]


@dataclass
class VerificationReport:
    """The verdict on one plan: `ok`, the clause checked, and every violation found."""

    ok: bool
    clause: int | None
    violations: list[str] = field(default_factory=list)
    segments_checked: int = 0

    def raise_if_failed(self) -> None:
        """Raise PlanVerificationError listing the violations, if there are any."""
        if not self.ok:
            shown = "\n  ".join(self.violations[:20])
            more = f"\n  ... and {len(self.violations) - 20} more" if len(self.violations) > 20 else ""
            raise PlanVerificationError(f"plan breaks clause {self.clause} of its goal:\n  {shown}{more}")


def verify_plan(tamp_map: TampMap, plan: TampPlan, *, goal: DnfGoal | None = None, clause: int | None = None,
                checker: CollisionChecker | None = None, strict: bool = False) -> VerificationReport:
    """Check `plan` against `goal` (default: the plan's) and its clause `clause` (default: the plan's; if
    neither is known, any clause may hold), and collisions too when a `checker` is given.
    With `strict`, raise PlanVerificationError on a violation."""
    goal = goal or plan.goal
    clause = plan.clause if clause is None else clause
    bad: list[str] = []
    if len(plan.steps) != len(plan.actions):
        bad.append(f"{len(plan.actions)} task actions but {len(plan.steps)} refined steps")
    at = tamp_map.start
    visited = {at}
    inspected: set[str] = set()
    entered: set[str] = set()
    where = tamp_map.places[at].centre
    aware = isinstance(checker, InspectionAware)
    if aware:
        checker.set_inspected(())
    edges = tamp_map.graph
    for k, (act, step) in enumerate(zip(plan.actions, plan.steps)):
        label = f"step {k} {act}"
        if act.name == "inspect":
            o = act.args[0]
            if at != o:
                bad.append(f"{label}: the robot is at {at!r}, not at the object")
            obj = tamp_map.objects.get(o)
            if obj is None or not obj.suspicious or o in inspected:
                bad.append(f"{label}: {o!r} is not a suspicious object still to inspect")
            inspected.add(o)
            if aware:
                checker.set_inspected(inspected)
            continue
        if act.name != "move" or len(act.args) != 2:
            bad.append(f"{label}: not a move or inspect action")
            continue
        a, b = act.args
        if a != at:
            bad.append(f"{label}: starts from {a!r} but the robot is at {at!r}")
        if b not in tamp_map.places and b not in tamp_map.objects:
            bad.append(f"{label}: {b!r} is neither a place nor an object")
        places = step.places
        if b in tamp_map.places and places and places[-1] != b:
            bad.append(f"{label}: its place path ends in {places[-1]!r}, not {b!r}")
        for p, q in itertools.pairwise(places):
            if not edges.has_edge(p, q):
                bad.append(f"{label}: places {p!r} and {q!r} are not adjacent")
        entered.update(places)
        if step.polyline:
            if math.dist(step.polyline[0], where) > 1e-6:
                bad.append(f"{label}: motion starts at {step.polyline[0]}, the robot is at {where}")
            if places and math.dist(step.polyline[-1], tamp_map.places[places[-1]].centre) > 1e-6:
                bad.append(f"{label}: motion ends away from the centre of {places[-1]!r}")
            where = step.polyline[-1]
            if checker is not None:
                for p, q in zip(step.polyline, step.polyline[1:]):
                    hit = checker.blocking(p, q)
                    if hit:
                        bad.append(f"{label}: segment {p}->{q} collides with {', '.join(hit)}")
        at = b
        visited.add(b)
    safe = {o for o, obj in tamp_map.objects.items() if not obj.suspicious} | inspected
    seen = visited | entered
    if clause is None:
        holds = [i for i in range(len(goal.clauses)) if _clause_ok(goal, i, seen, safe, tamp_map, plan, [])]
        if holds:
            clause = holds[0]
        else:
            bad.append("no goal clause holds at the end of the plan")
    else:
        _clause_ok(goal, clause, seen, safe, tamp_map, plan, bad)
    report = VerificationReport(not bad, clause, bad, sum(max(0, len(s.polyline) - 1) for s in plan.steps))
    if strict:
        report.raise_if_failed()
    return report


def _clause_ok(goal: DnfGoal, i: int, visited: Collection[str], safe: Collection[str], tamp_map: TampMap,
               plan: TampPlan, bad: list[str]) -> bool:
    n0 = len(bad)
    for lit in goal.clauses[i]:
        if lit.kind == "visit" and lit.symbol not in visited:
            bad.append(f"clause {i}: {lit} does not hold: the plan never reaches {lit.symbol!r}")
        elif lit.kind == "safe" and lit.symbol not in safe:
            bad.append(f"clause {i}: {lit} does not hold: {lit.symbol!r} is never inspected")
        elif lit.kind == "avoid":
            p = lit.symbol
            if p in visited:
                bad.append(f"clause {i}: {lit} does not hold: a place path enters {p!r}")
            polygon = tamp_map.places[p].polygon if p in tamp_map.places else None
            if polygon is None:
                continue
            for k, step in enumerate(plan.steps):
                for a, b in zip(step.polyline, step.polyline[1:]):
                    if segment_enters_polygon(a, b, polygon):
                        bad.append(f"clause {i}: {lit} does not hold: the motion of step {k} ({step.action}) "
                                   f"enters place {p!r} on segment {a}->{b}")
                        break
    return len(bad) == n0
