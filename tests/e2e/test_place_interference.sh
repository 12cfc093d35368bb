#!/usr/bin/env bash
# test_place_interference.sh — convgpud --placement interference (issue 37 item 3, seed 003):
# the rows `convgpu interfere --save` stores (PUT /v1/interference) steer a new container away
# from the GPUs whose containers it was measured to slow down, or be slowed by; an unmeasured
# neighbour counts as none. The matrix is reread when rows are stored or cleared and at start,
# and restored containers keep their application.
. "$(dirname "$0")/lib.sh"
start_daemon --emulate 2GiB,2GiB,2GiB --placement interference
dev_of() { container_field "$1" device; }
new() { # new NAME IMAGE [DEVICE]: a container of 256MiB of that image (its profile key)
    local body
    body=$(printf '{"name":"%s","gpu_memory":"256MiB","image":"%s"%s}' "$1" "$2" \
        "${3:+,\"device\":$3}")
    api POST /v1/containers "$body" | cut -d' ' -f1
}
check "a train container on GPU 0" test "$(new t0 train 0)" = 201
check "a cache container on GPU 1" test "$(new c1 cache 1)" = 201
check "a train container on GPU 2" test "$(new t2 train 2)" = 201
out=$(api PUT /v1/interference '{"rows": [{"foreground": "infer", "background": "train", "slowdown": 1.8, "runs": 3}, {"foreground": "cache", "background": "infer", "slowdown": 1.1, "runs": 3}]}')
check "rows stored" test "$(cut -d' ' -f1 <<<"$out")" = 200
r=$(new i1 infer)
check "an infer container goes where it is slowed least: GPU 1 (1.1x, its neighbour's way round), not beside train (1.8x)" test "$r $(dev_of i1)" = "201 1"
r=$(new o1 other)
check "a container of an application nobody measured goes by load and room: GPU 0" test "$r $(dev_of o1)" = "201 0"
# The matrix survives a restart (state.db) and is read at start.
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
start_daemon --emulate 2GiB,2GiB,2GiB --placement interference
r=$(new i2 infer)
check "after a restart, another infer container still avoids train: GPU 1" test "$r $(dev_of i2)" = "201 1"
api DELETE /v1/interference >/dev/null
r=$(new i3 infer)
check "rows cleared: placement no longer steers (GPU 2, the most room by load-balance's rule)" test "$r $(dev_of i3)" = "201 2"
finish
