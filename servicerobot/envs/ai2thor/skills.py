"""Household skills -> AI2-THOR actions: one table for both executors.

`THOR_ACTION` names the THOR action a skill ends with; `target` says which argument is the object that
action takes (`objectId`) and which fixture the robot navigates to first (Teleport to its interaction pose).
"""

from __future__ import annotations

__all__ = ["NAVIGATE_TO", "NOT_IN_THOR", "TARGET", "THOR_ACTION"]

THOR_ACTION: dict[str, str] = {
    "move": "Teleport",
    "pick-up": "PickupObject",
    "take-out": "PickupObject",
    "place-on": "PutObject",
    "put-in": "PutObject",
    "throw-away": "PutObject",
    "open": "OpenObject",
    "close": "CloseObject",
    "switch-on-light": "ToggleObjectOn",
    "switch-off-light": "ToggleObjectOff",
    "turn-on-faucet": "ToggleObjectOn",
    "turn-off-faucet": "ToggleObjectOff",
    "wash": "CleanObject",
    "make-bed": "CleanObject",
    "hand-over": "DisableObject",
    "take-from": "EnableObject",
}
# Index of the argument whose objectId the THOR action takes ("faucet" = the sink's faucet).
TARGET: dict[str, int | str] = {
    "pick-up": 1, "take-out": 1, "place-on": 2, "put-in": 2, "throw-away": 2, "open": 1, "close": 1,
    "switch-on-light": 1, "switch-off-light": 1, "turn-on-faucet": "faucet", "turn-off-faucet": "faucet",
    "wash": 1, "make-bed": 1, "hand-over": 1, "take-from": 1,
}
# Index of the fixture the robot goes to before acting (its ALFWorld interaction pose, else THOR's
# GetInteractablePoses).
NAVIGATE_TO: dict[str, int] = {
    "pick-up": 2, "take-out": 2, "place-on": 2, "put-in": 2, "throw-away": 2, "open": 1, "close": 1,
    "switch-on-light": 1, "switch-off-light": 1, "turn-on-faucet": 1, "turn-off-faucet": 1, "wash": 2,
    "make-bed": 1,
}
NOT_IN_THOR: dict[str, str] = {
    "run-washer": "iTHOR scenes have no washing machine",
    "run-dryer": "iTHOR scenes have no dryer",
}
