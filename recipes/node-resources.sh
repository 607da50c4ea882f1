#!/usr/bin/env bash
# Print the Ray custom resources this node can offer, as the JSON `ray start --resources` takes, from what is
# staged here (nothing is downloaded):
#   unity       an NVIDIA GPU and the AI2-THOR Unity build at $THOR_BUILD (an executable file)
#   habitat     habitat-sim importable by this Python
#   llm_server  an OpenAI-compatible server answering at $LLM_URL (default http://127.0.0.1:8080/v1)
# Usage: ray start --address HEAD:6379 --resources "$(bash recipes/node-resources.sh)"
set -u
res=()
if [ -n "${THOR_BUILD:-}" ] && [ -x "${THOR_BUILD}" ] && ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  res+=('"unity": 1')
fi
if python -c "import habitat_sim" >/dev/null 2>&1; then
  res+=('"habitat": 1')
fi
url="${LLM_URL:-http://127.0.0.1:8080/v1}"
if python - "$url" >/dev/null 2>&1 <<'PY'
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/models", timeout=3)
PY
then
  res+=('"llm_server": 1')
fi
(IFS=,; echo "{${res[*]}}")
