"""Small operator pipeline configs, built as dicts, shared by the tests."""

from __future__ import annotations

import copy
from typing import Any

#: conv → relu: the smallest linear pipeline with a weight.
LINEAR: dict[str, Any] = {
    "schema": "refstack.pipeline/1",
    "name": "linear",
    "inputs": {
        "x": {"shape": [1, 3, 8, 8], "dtype": "f32"},
        "w": {"shape": [4, 3, 3, 3], "dtype": "f32"},
    },
    "pipeline": [
        {
            "name": "conv",
            "operator": "conv2d",
            "inputs": ["x", "w"],
            "outputs": ["c"],
            "attrs": {"pads": [1, 1, 1, 1]},
            "constraints": {"memory_alignment": 256, "precision_policy": "fp32"},
        },
        {"name": "act", "operator": "relu", "inputs": ["c"], "outputs": ["y"]},
    ],
    "outputs": ["y"],
}

#: x → relu (a) → {neg: mul by -1 (b1), keep: relu (b2)} → add (merge): a branch and a merge.
BRANCH_MERGE: dict[str, Any] = {
    "schema": "refstack.pipeline/1",
    "name": "branch_merge",
    "inputs": {
        "x": {"shape": [2, 4, 3], "dtype": "f32"},
        "k": {"shape": [4, 1], "dtype": "f32"},
    },
    "pipeline": [
        {"name": "a", "operator": "relu", "inputs": ["x"], "outputs": ["t"]},
        {"name": "b1", "operator": "mul", "inputs": ["t", "k"], "outputs": ["u"]},
        {
            "name": "b2",
            "operator": "relu",
            "inputs": ["t"],
            "outputs": ["v"],
            "constraints": {"stream_affinity": "async_preload"},
        },
        {"name": "m", "operator": "add", "inputs": ["u", "v"], "outputs": ["y"]},
    ],
    "outputs": ["y"],
}


#: {x → relu (b1), z → relu (b2, own stream)} → add (merge): two independent branches.
TWO_BRANCHES: dict[str, Any] = {
    "schema": "refstack.pipeline/1",
    "name": "two_branches",
    "inputs": {"x": {"shape": [4, 3], "dtype": "f32"}, "z": {"shape": [4, 3], "dtype": "f32"}},
    "pipeline": [
        {"name": "b1", "operator": "relu", "inputs": ["x"], "outputs": ["u"]},
        {
            "name": "b2",
            "operator": "relu",
            "inputs": ["z"],
            "outputs": ["v"],
            "constraints": {"stream_affinity": "async_preload"},
        },
        {"name": "m", "operator": "add", "inputs": ["u", "v"], "outputs": ["y"]},
    ],
    "outputs": ["y"],
}


def cfg(base: dict[str, Any], **patch: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with top-level keys replaced."""
    out = copy.deepcopy(base)
    out.update(patch)
    return out
