"""`servicerobot demo` says why each task failed: in summary.json, in its progress lines, and on the frames."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np

import servicerobot
from servicerobot.experiments.demo import run_demo, waiting_line
from servicerobot.failures import REASONS


def test_static_demo_summary_gives_each_task_its_outcome_and_reason(tmp_path, capsys):
    rows = run_demo(tmp_path, episodes=1, tasks=3, size="small", seed=0, variant="static", video=False,
                    interpreter="rules")
    (row,) = json.loads((tmp_path / "summary.json").read_text())
    assert row == rows[0]
    tasks = row["tasks"]
    assert len(tasks) == row["tasks_total"] == 3
    assert sum(t["outcome"] == "completed" for t in tasks) == row["tasks_completed"]
    assert sum(t["outcome"] == "failed" for t in tasks) == row["tasks_failed"]
    failed = [t for t in tasks if t["outcome"] == "failed"]
    assert failed, "the static agent is expected to fail a task of this episode"
    for task in failed:
        assert task["reason"] in REASONS and task["task"]
    err = capsys.readouterr().err  # not a terminal: plain lines, no progress bar
    for number, task in enumerate(tasks, 1):
        if task["outcome"] == "failed":
            assert f"episode 0 task {number}/3: failed ({task['reason']})" in err
    assert "\r" not in err


def test_waiting_line_says_why_the_robot_waits():
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=1)
    agent = servicerobot.ServiceAgent.from_env(env, variant="static")
    obs, _ = env.reset(seed=0)
    assert waiting_line(agent, "(wait)").startswith("no task")
    action = agent.act(obs)
    assert waiting_line(agent, "(move robot a b)") == ""
    if action.strip() == "(wait)":
        assert waiting_line(agent, action) != ""
    env.close()


def test_frames_show_the_failure_banner_and_count_failed_and_open_tasks():
    env = gym.make("ServiceRobot-v0", size="small", n_tasks=2, render_mode="rgb_array")
    env.reset(seed=0)
    plain = env.render()
    env.unwrapped.set_overlay(banner="task failed: goal believed done (Put the mug away.)")
    banner = env.render()
    top = banner[:12].reshape(-1, 3).mean(axis=0)
    assert top[0] > 120 and top[1] < 80 and top[2] < 80, "a red strip across the top of the map"
    assert np.array_equal(plain[60:], banner[60:]), "the banner covers only the top of the map"
    assert env.unwrapped.overlay()["tasks_failed"] == 0
    env.unwrapped.set_overlay(banner="")
    assert np.array_equal(env.render(), plain)
    env.close()


def test_demo_help_lists_the_variants_and_refuses_others(capsys):
    import pytest

    from servicerobot.cli import main

    with pytest.raises(SystemExit) as info:
        main(["demo", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "search-rag" in out and "visual-only" in out and "see README" not in out
    with pytest.raises(SystemExit) as info:
        main(["demo", "--variant", "clever"])
    assert info.value.code == 2
    assert "invalid choice: 'clever'" in capsys.readouterr().err


def test_run_prints_a_plain_line_per_episode_when_not_on_a_terminal(tmp_path, capsys):
    from servicerobot.cli import main

    config = tmp_path / "tiny.yaml"
    config.write_text("name: tiny\nseeds: {start: 0, count: 2}\nvariants: [oracle]\n"
                      "envs:\n  - name: small\n    kwargs: {size: small, n_tasks: 1}\n")
    assert main(["run", str(config), "--out", str(tmp_path / "r.jsonl"), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "run [1/2] tiny/small/oracle/0 ok | tasks 1/1" in err
    assert "run [2/2] tiny/small/oracle/1 ok | tasks 2/2" in err
    assert "\r" not in err  # no progress bar redrawn in a log


def test_frame_text_is_never_cut_mid_word():
    from servicerobot.envs.household.rendering import _SHORT_NOUN
    from servicerobot.envs.panel import _fit, _fit_parts, _font

    font = _font(11)
    text = "Could you put the dirty plates from the dining table in the kitchen sink?"
    cut = _fit(text, font, 150)
    assert cut.endswith("…") and text.startswith(cut[:-1]) and text[len(cut) - 1] == " "
    plan = " -> ".join(f"(move robot room_{i} room_{i + 1})" for i in range(8))
    fitted = _fit_parts(plan, " -> ", font, 300)
    kept, more = fitted.rsplit("  (+", 1)
    assert plan.startswith(kept) and kept.count("(move") + int(more.rstrip(")")) == 8
    env = gym.make("ServiceRobot-v0", render_mode="rgb_array")
    env.reset(seed=0)
    env.render()
    renderer = env.unwrapped.world._renderer
    for fixture, label in renderer._label.items():
        noun = env.unwrapped.world.scene.entities[fixture].noun
        assert label == "" or label in noun.split() or label == _SHORT_NOUN.get(noun), (noun, label)
    env.close()


def test_frames_label_the_items_a_task_is_about():
    env = gym.make("ServiceRobot-v0", size="small", render_mode="rgb_array")
    env.reset(seed=0)
    plain = env.render()
    renderer = env.unwrapped.world._renderer
    item, (x, y) = next(iter(renderer._item_xy.items()))
    env.unwrapped.set_overlay(highlight=[item, "no_such_entity"])
    marked = env.render()
    x, y = int(x), int(y)
    near = (slice(max(0, y - 12), y + 12), slice(max(0, x - 12), x + 40))
    assert not np.array_equal(plain[near], marked[near])  # a ring and a name tag beside the item
    assert np.array_equal(plain[renderer.map_h:], marked[renderer.map_h:])
    env.close()


def test_camera_frames_get_the_same_text_panel():
    from servicerobot.envs.panel import panel_height, with_panel

    camera = np.full((240, 320, 3), 90, dtype=np.uint8)  # e.g. habitat-sim's or THOR's RGB image
    overlay = {"task": "Put the mug in the sink.", "tasks_completed": 1, "tasks_failed": 1, "tasks_total": 3,
               "last_action": "(wait)", "waiting": "goal believed done: memory holds (in mug_1 sink_1)"}
    frame = with_panel(camera, overlay, 160, 120)
    top = 120 - panel_height(120)
    assert frame.shape == (120, 160, 3) and frame.dtype == np.uint8
    assert (frame[:top] == 90).all()  # the picture, scaled into the rows above the panel
    assert len(np.unique(frame[top:].reshape(-1, 3), axis=0)) > 5  # text drawn in the panel
    failed = with_panel(camera, {**overlay, "banner": "task failed: goal believed done"}, 160, 120)
    assert failed[2:6].reshape(-1, 3).mean(axis=0)[0] > 120 and not (failed[:top] == 90).all()


def test_report_leaves_out_columns_no_row_has_data_for(tmp_path, capsys):
    from servicerobot.cli import main

    config = tmp_path / "tiny.yaml"
    config.write_text("name: tiny\nseeds: [0]\nvariants: [oracle]\n"
                      "envs:\n  - name: small\n    kwargs: {size: small, n_tasks: 1}\n")
    out = tmp_path / "r.jsonl"
    assert main(["run", str(config), "--out", str(out), "--workers", "1"]) == 0
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 0
    capsys.readouterr()
    text = (tmp_path / "rep" / "report.md").read_text()
    header = next(line for line in text.splitlines() if line.startswith("| Env config"))
    assert "Success [95% CI]" in header and "Episodes" in header
    assert "Goal parseable" not in header and "KG accuracy" not in header  # the oracle's goals are not scored


def test_the_panel_fits_narrow_frames():
    from servicerobot.envs.panel import TextPanel

    overlay = {"task": "Put the mug away.", "tasks_completed": 1, "tasks_failed": 1, "tasks_total": 4,
               "plan": ["(move robot a b)", "(pick-up robot mug_1 table_1 b)"], "banner": "task failed: out of steps"}
    for width in (16, 64, 100, 640):
        panel = TextPanel(width, 40)
        assert panel.render(overlay).shape == (40, width, 3)
        frame = np.zeros((80, width, 3), dtype=np.uint8)
        panel.banner(frame, overlay["banner"], 40)
    assert TextPanel(100, 40)._panel_key is None
    wide, narrow = TextPanel(640, 40), TextPanel(100, 40)
    wide.render(overlay)
    narrow.render(overlay)
    assert wide._panel_key[1] == "done 1  failed 1  open 2" and narrow._panel_key[1] == "1/1/2"
