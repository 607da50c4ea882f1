#!/usr/bin/env bash
# One node of a servicerobot Ray cluster inside a SLURM job (started by recipes/slurm-grid.sbatch through srun):
# a model server on this node's address (when $LLM_SERVER_CMD is set), then `ray start` declaring what is
# staged here (recipes/node-resources.sh). Blocks until the job ends.
# Usage: slurm-node.sh head|worker HEAD_IP PORT
set -euo pipefail
role=$1 head_ip=$2 port=$3
here=$(cd "$(dirname "$0")" && pwd)
ip=$(hostname -I | awk '{print $1}')
export RAY_USAGE_STATS_ENABLED=0
if [ -n "${LLM_SERVER_CMD:-}" ]; then
  # e.g. LLM_SERVER_CMD='llama-server -m /staged/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf --host {ip} --port 8080'
  # or   LLM_SERVER_CMD='vllm serve /staged/Qwen2.5-7B-Instruct --host {ip} --port 8080'   (HF_HUB_OFFLINE=1)
  ${LLM_SERVER_CMD//\{ip\}/$ip} > "/tmp/llm-server-$SLURM_JOB_ID-$ip.log" 2>&1 &
  for _ in $(seq 120); do  # a model takes a while to load; ray start waits for it so that llm_server is declared
    curl -sf "http://$ip:8080/v1/models" >/dev/null && break
    sleep 5
  done
fi
resources=$(LLM_URL="http://$ip:8080/v1" bash "$here/node-resources.sh")
# GPUs: Ray counts those in CUDA_VISIBLE_DEVICES (set by SLURM for --gpus-per-node); the runner passes their
# ids from that list to the renderer (Vulkan/EGL ignore CUDA_VISIBLE_DEVICES).
common=(--node-ip-address "$ip" --num-cpus "${SLURM_CPUS_PER_TASK:-1}" --resources "$resources" --block)
if [ "$role" = head ]; then
  exec ray start --head --port "$port" --include-dashboard=false "${common[@]}"
else
  exec ray start --address "$head_ip:$port" "${common[@]}"
fi
