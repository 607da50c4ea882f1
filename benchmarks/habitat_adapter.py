"""Habitat/Gibson world figures (JSON): adapter accuracy, task success, speed. Runs inside the habitat sandbox:

    ../shared/habitat-sandbox/run --pip -e . -- python benchmarks/habitat_adapter.py [--quick] [--part P]

adapter: over seeded generated scenes x random robot poses (half the containers opened), precision and
  recall of the adapter's percept (semantic + depth through habitat-sim) against the symbolic ground truth:
  "object in view" (the objects the household world shows in the robot's room: its fixtures, items on
  them and in open ones), room facts and support facts (on / inside).
success: tasks completed by the oracle (symbolic and habitat) and by search-rag in "both" mode (habitat).
speed: env steps/s (random valid-or-not actions, percept every step) and render() frames/s.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np

import servicerobot  # noqa: F401  (registers the gym ids)
from servicerobot.envs.habitat.executor import HabitatExecutor
from servicerobot.envs.household.state import HouseholdState
from servicerobot.pddl import Atom
from servicerobot.scenes.gibson import generate_3dsg, to_household_scene
from servicerobot.scenes.gibson_classes import ITEM_TYPES
from servicerobot.scenes.household import ROBOT


def _ratio(hit: int, total: int) -> float | None:
    return round(hit / total, 4) if total else None


def adapter(n_scenes: int, n_poses: int, seed: int = 0) -> dict:
    ex = HabitatExecutor()
    counts = {k: [0, 0, 0] for k in ("in_view", "in_view_items", "room", "support")}  # hit, predicted, truth
    t0 = time.time()
    for s in range(n_scenes):
        rng = np.random.default_rng([seed, s])
        sg = generate_3dsg(rng)
        scene = to_household_scene(sg, rng)
        facts = set(scene.init)
        for a in sorted(scene.init):  # open half the closed containers, so "inside" is seen too
            if a.predicate == "closed" and rng.random() < 0.5:
                facts.discard(a)
        facts = frozenset(facts)
        ex.reset(scene, facts, rng)
        state = HouseholdState(scene, facts)
        types = {n: e.pddl_type for n, e in scene.entities.items()}
        for _ in range(n_poses):
            room = scene.rooms[int(rng.integers(len(scene.rooms)))]
            x0, y0, w, h = room.rect
            point = None
            for _ in range(30):
                cand = ex.sim.pathfinder.snap_point(np.array([x0 + rng.uniform(0.4, w - 0.4), 0.0,
                                                              -(y0 + rng.uniform(0.4, h - 0.4))]))
                if np.all(np.isfinite(cand)) and x0 < cand[0] < x0 + w and y0 < -cand[2] < y0 + h:
                    point = np.asarray(cand)
                    break
            if point is None:
                continue
            ex.position, ex.yaw = point, float(rng.uniform(-np.pi, np.pi))
            moved = {a for a in state.atoms if a.predicate == "in-room" and a.args[0] == ROBOT}
            state.apply(frozenset({Atom("in-room", (ROBOT, room.name))}), frozenset(moved))
            truth_view = {e for e in state.visible() if types[e] not in ("room", "robot", "person")}
            sightings = ex.sightings()
            seen = set()
            for sig in sightings.values():
                name = ex.name_of_sid.get(sig.semantic_id)
                if name is None:
                    continue
                est_room = ex.region_room.get(sig.region)
                true_room = state.room_of(name)
                counts["room"][1] += 1
                counts["room"][0] += est_room == true_room
                if est_room == room.name:
                    seen.add(name)
            counts["room"][2] += len(truth_view)
            counts["in_view"][0] += len(seen & truth_view)
            counts["in_view"][1] += len(seen)
            counts["in_view"][2] += len(truth_view)
            items_seen = {e for e in seen if types[e] in ITEM_TYPES}
            items_truth = {e for e in truth_view if types[e] in ITEM_TYPES}
            counts["in_view_items"][0] += len(items_seen & items_truth)
            counts["in_view_items"][1] += len(items_seen)
            counts["in_view_items"][2] += len(items_truth)
            symbolic = {"room": room.name, "entities": {ROBOT: "robot"}, "facts": [], "observed": [room.name]}
            percept = ex.percept(symbolic)
            predicted = {(f[0], f[1], f[2]) for f in percept["facts"] if f[1] in ("on", "inside")}
            truth = {(a.args[0], a.predicate, a.args[1]) for a in state.atoms if a.predicate in ("on", "inside")}
            counts["support"][0] += len(predicted & truth)
            counts["support"][1] += len(predicted)
            counts["support"][2] += sum(1 for t in truth if t[0] in items_truth)
    # Room facts: recall counts the in-view truth whose room the adapter got right among what it saw.
    out = {}
    for key, (hit, pred, true) in counts.items():
        out[key] = {"precision": _ratio(hit, pred), "recall": _ratio(min(hit, true), true),
                    "correct": hit, "predicted": pred, "truth": true}
    ex.close()
    return {"scenes": n_scenes, "poses_per_scene": n_poses, "views_per_percept": ex.headings,
            "camera": f"{ex.width}x{ex.height} hfov {ex.hfov}", "seconds": round(time.time() - t0, 1), **out}


def _episodes(simulator: str, variant: str, seeds: range, n_tasks: int) -> dict:
    import gymnasium as gym

    from servicerobot.experiments.episode import make_agent

    done = total = steps = errors = 0
    t0 = time.time()
    per_seed = []
    for seed in seeds:
        env = gym.make("ServiceRobot-Habitat-v0", simulator=simulator, n_tasks=n_tasks, update_mode="both")
        agent = make_agent(variant, env)
        obs, info = env.reset(seed=seed)
        while True:
            obs, _, term, trunc, info = env.step(agent.act(obs))
            steps += 1
            errors += bool(info["action_error"])
            if term or trunc:
                break
        done += info["tasks_completed"]
        total += info["tasks_total"]
        per_seed.append(info["tasks_completed"])
        env.close()
    return {"simulator": simulator, "variant": variant, "seeds": len(seeds), "tasks": total, "completed": done,
            "success": _ratio(done, total), "steps": steps, "action_errors": errors,
            "seconds": round(time.time() - t0, 1), "completed_per_seed": per_seed}


def speed(n_steps: int) -> dict:
    import gymnasium as gym

    env = gym.make("ServiceRobot-Habitat-v0", simulator="habitat", render_mode="rgb_array", update_mode="both")
    env.reset(seed=0)
    world = env.unwrapped.world
    rng = np.random.default_rng(0)
    rooms = world.scene.room_names
    t0 = time.time()
    for k in range(n_steps):
        here = world.state.robot_room()
        action = f"(move robot {here} {rooms[int(rng.integers(len(rooms)))]})" if k % 2 else "(wait)"
        _obs, *_ = env.step(action)
    step_s = time.time() - t0
    t0 = time.time()
    for _ in range(n_steps):
        frame = env.render()
    render_s = time.time() - t0
    env.close()
    return {"steps": n_steps, "steps_per_s": round(n_steps / step_s, 1), "render_fps": round(n_steps / render_s, 1),
            "frame": list(frame.shape)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run (under a minute)")
    parser.add_argument("--part", choices=("adapter", "success", "speed", "all"), default="all")
    args = parser.parse_args(argv)
    quick = args.quick
    result: dict = {"benchmark": "habitat_adapter", "quick": quick, "python": platform.python_version()}
    try:
        import habitat_sim

        result["habitat_sim"] = habitat_sim.__version__
    except ImportError:
        sys.exit("habitat_sim is not importable: run this inside ../shared/habitat-sandbox (see its README)")
    if args.part in ("adapter", "all"):
        result["adapter"] = adapter(4 if quick else 50, 5 if quick else 20)
    if args.part in ("success", "all"):
        n, m = (3, 2) if quick else (50, 20)
        result["oracle_symbolic"] = _episodes("symbolic", "oracle", range(n), 3)
        result["oracle_habitat"] = _episodes("habitat", "oracle", range(n), 3)
        result["search_rag_habitat"] = _episodes("habitat", "search-rag", range(m), 3)
        result["oracle_habitat_same_seeds"] = {
            "success": _ratio(sum(result["oracle_habitat"]["completed_per_seed"][:m]), 3 * m)}
    if args.part in ("speed", "all"):
        result["speed"] = speed(20 if quick else 200)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
