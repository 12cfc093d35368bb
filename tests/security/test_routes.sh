#!/usr/bin/env bash
# test_routes.sh — issue #36: every route of the control API declares who may call it, and the
# declaration holds. The routes come from the daemon itself (`convgpud --routes`, the table in
# src/daemon/api_route.c), so a route added without the right declaration, or a handler that
# forgets its caller, fails here. Against a real daemon (--control-group CTL), U (uid 1101) is a
# member of CTL, neither root nor an operator; O (uid 1102) owns a container; root is root.
# For every route, called by U with a body that would be valid:
#   admin and operator routes answer 403 (and change nothing: the state is compared);
#   owner routes on O's container answer 404, worded as for a missing container;
#   anyone routes never answer 403 for U's own view.
# Then root calls every admin and operator route: none answers 403.
. "$(dirname "$0")/lib.sh"
ctl_group cgt-rt
cleanup_routes() { cleanup; groupdel "$CTL" 2>/dev/null; }
trap cleanup_routes EXIT
start_daemon --emulate 5GiB --control-group "$CTL"

"$BUILD/bin/convgpud" --routes >"$TMP/routes"
n=$(wc -l <"$TMP/routes")
check "convgpud --routes lists the routes ($n)" test "$n" -ge 20
check "... each with who may call it" bash -c "! grep -vqE ' (anyone|owner|operator|admin)\$' '$TMP/routes'"

O_ID=$(create_for o-box 256MiB 1102)
U_ID=$(create_for u-box 256MiB 1101)
body_for() { # body_for METHOD PATH : a body the route would accept from someone allowed
    case "$1 $2" in
    "POST /v1/containers") echo '{"gpu_memory":"64MiB"}' ;;
    "POST "*/start) echo "{\"pid\":$$}" ;;
    "PUT "*/limit) echo '{"gpu_memory":"128MiB"}' ;;
    "PUT /v1/policy") echo '{"resume":"best-fit"}' ;;
    "PUT /v1/tenants/"*) echo '{"weight":3}' ;;
    "POST /v1/allocations") echo '{"gpu_memory":268435456,"device":0}' ;;
    "PUT /v1/interference") echo '{"rows":[]}' ;;
    "POST "*/move) echo '{"device":0}' ;;
    *) echo "" ;;
    esac
}
path_for() { # path_for PATH WHOSE_ID : the pattern with its arguments filled in
    local p=$1
    p=${p//\{\}\/start/$2/start}
    p=${p//\{\}\/limit/$2/limit}
    p=${p//\{\}\/swap-out/$2/swap-out}
    p=${p//\{\}\/swap-in/$2/swap-in}
    p=${p//\{\}\/pause/$2/pause}
    p=${p//\{\}\/resume/$2/resume}
    p=${p//\{\}\/move/$2/move}
    case $p in
    /v1/containers/\{\}) p=/v1/containers/$2 ;;
    /v1/tenants/\{\}) p=/v1/tenants/uid-1101 ;;
    /v1/profiles/\{\*\}) p=/v1/profiles/no-such-key ;;
    esac
    echo "$p"
}

before=$(world)
while read -r method path who; do
    [ "$method" = DELETE ] && [ "$who" = owner ] && continue # checked last: it removes
    url=$(path_for "$path" "$O_ID")
    r=$(capi 1101 "$method" "$url" "$(body_for "$method" "$url")")
    case $who in
    admin | operator)
        check "$method $path ($who) as a user: 403 ($(status "$r"))" test "$(status "$r")" = 403 ;;
    owner)
        check "$method $path ($who) on another's container: 404 ($(status "$r"))" test "$(status "$r")" = 404
        check "... worded as a missing one" grep -q "no such container: $O_ID" <<<"$r" ;;
    anyone)
        check "$method $path ($who) as a user: not 403 ($(status "$r"))" test "$(status "$r")" != 403 ;;
    esac
done <"$TMP/routes"
r=$(capi 1101 DELETE "/v1/containers/$O_ID")
check "DELETE of another's container: 404 ($(status "$r"))" test "$(status "$r")" = 404
after=$(world)
# U's own creates (anyone may create) add containers of U's; O's and the policy are unchanged.
check "nothing of O's changed" test "$(grep -c "$O_ID" <<<"$before")" = "$(grep -c "$O_ID" <<<"$after")"
check "the policy is unchanged" grep -q '"resume":"fifo"' <<<"$(api GET /v1/policy)"

# The owner's own container: owner routes pass the privilege check (they may still refuse the
# request itself, e.g. 409 for a swap with swap off, but never 403 for who the caller is).
while read -r method path who; do
    [ "$who" = owner ] || continue
    [ "$method" = DELETE ] && continue
    url=$(path_for "$path" "$U_ID")
    [ "$method" = POST ] && [ "${url##*/}" = start ] && continue # needs U's own process
    r=$(capi 1101 "$method" "$url" "$(body_for "$method" "$url")")
    check "$method $path on U's own container: not 403/404 ($(status "$r"))" \
        bash -c "[ '$(status "$r")' != 403 ] && [ '$(status "$r")' != 404 ]"
done <"$TMP/routes"

# Root passes every privilege check.
while read -r method path who; do
    case $who in admin | operator) ;; *) continue ;; esac
    url=$(path_for "$path" "$O_ID")
    r=$(api "$method" "$url" "$(body_for "$method" "$url")")
    check "$method $path ($who) as root: not 403 ($(status "$r"))" test "$(status "$r")" != 403
done <"$TMP/routes"
finish
