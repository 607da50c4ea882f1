"""What each world asks of a cluster node, the up-front check of a cluster, and model server choice (no Ray:
the live cluster is tests/test_ray_cluster_gpu.py)."""

from __future__ import annotations

import socket

import pytest
from cluster_probe import CountingServer

from servicerobot.envs.world import NodeNeeds
from servicerobot.experiments.cluster import (
    ClusterError,
    ModelServers,
    actor_options,
    check_hosts,
    gpu_options,
    gpu_share,
    hosts,
    needs_of,
    slots,
)
from servicerobot.experiments.config import EnvConfig
from servicerobot.experiments.runner import stable_part

UNITY = EnvConfig("thor", {"controller": "unity"}, "ServiceRobot-AI2THOR-v0")
HABITAT_GPU = EnvConfig("hab", {"simulator": "habitat", "gpu_device_id": 0}, "ServiceRobot-Habitat-v0")
NODES = [{"Alive": True, "NodeManagerAddress": "10.0.0.1", "Resources": {"CPU": 4.0, "llm_server": 1.0, "memory": 1e9}},
         {"Alive": True, "NodeManagerAddress": "10.0.0.2", "Resources": {"CPU": 8.0, "GPU": 2.0, "unity": 1.0}},
         {"Alive": False, "NodeManagerAddress": "10.0.0.3", "Resources": {"CPU": 8.0, "GPU": 2.0, "habitat": 1.0}}]


def test_each_world_declares_what_an_episode_needs():
    assert needs_of(EnvConfig("h", {"size": "small"})) == NodeNeeds()
    assert needs_of(EnvConfig("t", {}, "ServiceRobot-AI2THOR-v0")) == NodeNeeds()  # symbolic THOR: a CPU
    unity = needs_of(UNITY)
    assert unity.gpu and unity.resources == ("unity",) and unity.gpu_option == "gpu_device"
    assert needs_of(EnvConfig("w", {"world": "ai2thor", "controller": "unity"})) == unity  # world= on the default id
    hab = needs_of(HABITAT_GPU)
    assert hab.gpu and hab.resources == ("habitat",) and hab.gpu_option == "gpu_device_id"
    cpu_habitat = needs_of(EnvConfig("h", {"simulator": "habitat"}, "ServiceRobot-Habitat-v0"))
    assert not cpu_habitat.gpu and cpu_habitat.resources == ("habitat",)
    assert needs_of(EnvConfig("g", {}, "ServiceRobot-Habitat-v0")) == NodeNeeds()
    assert needs_of(EnvConfig("cm", {}, "ContextMatters")) == NodeNeeds()
    assert needs_of(EnvConfig("p", {"controller": "unity"}, "cluster_probe:ServiceRobotProbe-AI2THOR-v0")) == unity


def test_ray_is_asked_for_a_gpu_share_and_labels_and_the_physical_id_goes_to_the_declared_option():
    unity = needs_of(UNITY)
    assert actor_options(unity, gpu_share(4)) == {"num_cpus": 1, "num_gpus": 0.25, "resources": {"unity": 0.001}}
    assert actor_options(NodeNeeds(), 1.0) == {"num_cpus": 1, "num_gpus": 0}
    assert gpu_options(unity, ["3"]) == {"gpu_device": 3} and gpu_options(NodeNeeds(), ["3"]) == {}
    with pytest.raises(ClusterError, match="UUIDs"):
        gpu_options(unity, ["GPU-1a2b"])
    for bad in (0, 101, "2"):
        with pytest.raises(ClusterError, match="episodes per GPU"):
            gpu_share(bad)
    assert [n["NodeManagerAddress"] for n in hosts(unity, NODES, 1.0)] == ["10.0.0.2"]
    assert slots(unity, NODES, 0.25) == 8 and slots(unity, NODES, 1.0) == 2 and slots(NodeNeeds(), NODES, 1.0) == 12


def test_a_grid_no_live_node_can_host_is_refused_up_front_saying_what_to_add():
    check_hosts({needs_of(UNITY): ["thor"], NodeNeeds(): ["house"]}, NODES, 1.0, "the cluster")
    with pytest.raises(ClusterError) as err:
        check_hosts({needs_of(HABITAT_GPU): ["hab"]}, NODES, 1.0, "the Ray cluster at '10.0.0.1:6379'")
    text = str(err.value)
    for part in ("env 'hab' needs a node with a GPU and the custom resource `habitat`", "gpu_device_id",
                 "10.0.0.1: 4 CPU, llm_server; 10.0.0.2: 8 CPU, 2 GPU, unity",
                 """ray start --address HEAD:PORT --num-gpus=N --resources '{"habitat": 1}'""", "docs/cluster.md"):
        assert part in text
    assert "10.0.0.3" not in text  # a dead node is not offered


def test_model_servers_are_read_from_one_setting():
    servers = ModelServers.parse("http://{node_ip}:8080/v1, 10.0.0.9=http://10.0.0.9:9000/v1, http://far:8000/v1")
    assert servers.template == "http://{node_ip}:8080/v1" and servers.shared == ("http://far:8000/v1",)
    assert servers.by_node == (("10.0.0.9", "http://10.0.0.9:9000/v1"),)
    assert ModelServers.parse(None) is None and ModelServers.parse(" ") is None
    # own node first, then the other nodes (address order), then the shared endpoint
    assert servers.candidates("10.0.0.9", NODES) == ["http://10.0.0.9:9000/v1", "http://10.0.0.1:8080/v1",
                                                       "http://far:8000/v1"]
    assert servers.candidates("10.0.0.1", NODES)[0] == "http://10.0.0.1:8080/v1"
    for bad, why in (("far:8000", "is not a URL"), ("10.0.0.1=far", "after 'IP='"),
                     ("http://{node_ip}:1/v1,http://{node_ip}:2/v1", "at most one")):
        with pytest.raises(ClusterError, match=why):
            ModelServers.parse(bad)


def test_a_worker_falls_back_to_a_server_that_answers():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # closed when the block ends: nothing listens there
    live = CountingServer("127.0.0.1")
    try:
        servers = ModelServers.parse(f"10.0.0.1=http://127.0.0.1:{dead}/v1,{live.url}")
        assert servers.pick("10.0.0.1") == live.url  # its own is down: the shared one answers
        assert ModelServers.parse(live.url).pick("10.0.0.7") == live.url  # one endpoint for every worker
    finally:
        live.stop()
    with pytest.raises(ClusterError, match=f"tried http://127.0.0.1:{dead}/v1, {live.url}"):
        servers.pick("10.0.0.1")


def test_placement_is_left_out_when_records_are_compared():
    record = {"key": "k", "tasks": [], "placement": {"node": "10.0.0.2", "gpus": ["3"]}, "timing": {"wall_s": 1}}
    assert stable_part(record) == {"key": "k", "tasks": []}
