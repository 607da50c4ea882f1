"""The PNG plots of a report (matplotlib Figures, no pyplot). Part of `servicerobot.experiments.report`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from servicerobot.experiments.report_records import _agent, _num
from servicerobot.experiments.report_summary import _kg_curve, _Summary
from servicerobot.files import write_atomic

PLOTS = {
    "success_by_variant": "success_by_variant.png",
    "kg_accuracy_over_time": "kg_accuracy_over_time.png",
    "planning_time": "planning_time.png",
}


def _colour(variant: str, summary: _Summary) -> str:
    """The same colour for a variant in every plot."""
    return f"C{summary.variants.index(variant) % 10}"


def _group_label(env: str, variant: str, summary: _Summary) -> str:
    return variant if len(summary.envs) == 1 else f"{env}\n{variant}"


def _draw_plots(summary: _Summary, out: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """Draw the PNG plots; returns (written, skipped-with-reason)."""
    try:
        # Figure objects with no pyplot: no GUI backend is touched, and nothing global changes.
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        skipped = dict.fromkeys(PLOTS, "matplotlib is not installed (pip install matplotlib)")
        _remove_stale(out, skipped)
        return {}, skipped
    written: dict[str, Path] = {}
    skipped: dict[str, str] = {}

    def save(name: str, fig: Figure) -> None:
        path = out / PLOTS[name]
        fig.tight_layout()
        write_atomic(path, lambda fh: fig.savefig(fh, format="png", dpi=120))
        written[name] = path

    rows = [r for r in summary.rows if r["tasks"]]
    if rows:
        fig = Figure(figsize=(max(7.0, 3.2 + 0.6 * len(summary.rows)), 4))
        ax = fig.add_subplot()
        width = 0.8 / len(summary.variants)
        for i, variant in enumerate(summary.variants):
            mine = [(summary.envs.index(r["env"]), r) for r in rows if r["variant"] == variant]
            if not mine:
                continue
            xs = [x - 0.4 + width * (i + 0.5) for x, _ in mine]
            rates = [r["success_rate"] for _, r in mine]
            err = [[r["success_rate"] - r["success_lo"] for _, r in mine],
                   [r["success_hi"] - r["success_rate"] for _, r in mine]]
            ax.bar(xs, rates, width, yerr=err, capsize=3, label=variant, color=_colour(variant, summary))
        ax.set_xticks(range(len(summary.envs)))
        ax.set_xticklabels(summary.envs)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("task success rate")
        ax.set_title("Task success (95% Wilson intervals)")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        save("success_by_variant", fig)
    else:
        skipped["success_by_variant"] = "no tasks in any episode"

    series = []
    for (env, variant), recs in summary.groups.items():
        curve = _kg_curve(recs)
        if curve:
            series.append((env, variant, curve))
    if series:
        fig = Figure(figsize=(8.5, 4))
        ax = fig.add_subplot()
        for env, variant, curve in series:
            ax.plot(range(1, len(curve) + 1), curve, color=_colour(variant, summary),
                    linestyle=("-", "--", ":", "-.")[summary.envs.index(env) % 4],
                    label=_group_label(env, variant, summary).replace("\n", " / "))
        ax.set_ylim(0, 1.05)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # updates are counted: no tick at 1.5
        ax.set_xlabel("KG updates (episode order, episodes sorted by seed)")
        ax.set_ylabel("cumulative share correct")
        ax.set_title("Knowledge-graph update accuracy")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        save("kg_accuracy_over_time", fig)
    else:
        skipped["kg_accuracy_over_time"] = "no scored knowledge-graph updates"

    boxes = []
    for (env, variant), recs in summary.groups.items():
        times = [v for r in recs if (v := _num(_agent(r).get("planning_time"))) is not None]
        if times:
            boxes.append((_group_label(env, variant, summary), times, _colour(variant, summary)))
    if boxes:
        fig = Figure(figsize=(max(5.0, 1.0 + 1.1 * len(boxes)), 4.5))
        ax = fig.add_subplot()
        parts = ax.boxplot([times for _, times, _ in boxes], showmeans=True, patch_artist=True,
                           meanprops={"marker": "^", "markerfacecolor": "black", "markeredgecolor": "black"})
        for patch, (_, _, colour) in zip(parts["boxes"], boxes):
            patch.set_facecolor(colour)
            patch.set_alpha(0.6)
        ax.set_xticks(range(1, len(boxes) + 1))
        ax.set_xticklabels([label for label, _, _ in boxes], fontsize="small", rotation=30, ha="right")
        ax.set_ylim(bottom=0)
        ax.set_ylabel("planning seconds per episode")
        ax.set_title("Planning time per episode")
        save("planning_time", fig)
    else:
        skipped["planning_time"] = "no per-episode planning times"
    _remove_stale(out, skipped)
    return written, skipped


def _remove_stale(out: Path, skipped: dict[str, str]) -> None:
    """Delete a skipped plot's file left by an earlier report in the same folder: it would not match."""
    for name in skipped:
        with contextlib.suppress(FileNotFoundError):
            (out / PLOTS[name]).unlink()
