#!/bin/sh
# create-rm.sh CONVGPU RUNTIME_DIR — one container created and removed through the CLI/API
# (timed as a whole by bench/run-all.sh, container creation).
set -eu
id=$("$1" --runtime-dir "$2" create --gpu-memory 64MiB | head -n 1)
"$1" --runtime-dir "$2" rm "$id" >/dev/null
