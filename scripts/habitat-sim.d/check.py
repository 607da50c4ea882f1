"""Health check of the habitat-sim root (scripts/habitat-sim): the engine imports, converts NumPy 2 arrays and
renders an RGB frame with llvmpipe on an empty scene. Exit 0 when all of that works."""

import sys
import time

start = time.time()
import habitat_sim
import magnum  # noqa: F401
import numpy as np

assert habitat_sim.__version__.startswith("0.2.2"), habitat_sim.__version__
backend = habitat_sim.SimulatorConfiguration()
backend.scene_id = "NONE"
backend.gpu_device_id = -1
backend.enable_physics = False
sensor = habitat_sim.CameraSensorSpec()
sensor.uuid, sensor.sensor_type = "rgb", habitat_sim.SensorType.COLOR
sensor.resolution = [48, 64]  # a list -> Eigen conversion: the one NumPy 2 breaks without the fix
sensor.position = [0.0, 1.5, 0.0]
agent = habitat_sim.agent.AgentConfiguration()
agent.sensor_specifications = [sensor]
sim = habitat_sim.Simulator(habitat_sim.Configuration(backend, [agent]))
try:
    state = habitat_sim.AgentState()
    state.position = np.array([0.5, 0.0, -0.5], dtype=np.float32)
    sim.get_agent(0).set_state(state)
    rgb = sim.get_sensor_observations()["rgb"]
    assert rgb.shape == (48, 64, 4) and rgb.dtype == np.uint8, (rgb.shape, rgb.dtype)
    assert np.allclose(sim.get_agent(0).get_state().position, [0.5, 0.0, -0.5], atol=1e-4)
finally:
    sim.close()
print(f"habitat-sim {habitat_sim.__version__}, NumPy {np.__version__}, Python {sys.version.split()[0]}: "
      f"rendered {rgb.shape[1]}x{rgb.shape[0]} in {time.time() - start:.1f} s")
