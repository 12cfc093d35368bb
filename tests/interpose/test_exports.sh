# test_exports.sh — libconvgpu.so exports exactly the hooked entry points (hooks.def) and dlsym,
# and (outside sanitizer builds) needs nothing but libc/libdl/libpthread.
. "$(dirname "$0")/lib.sh"

want=$(sed -n 's/^CG_HOOK([A-Z]*, *\([A-Za-z0-9_]*\),.*/\1/p' \
       "$CONVGPU_SOURCE_DIR/src/interpose/hooks.def"; echo dlsym)
want=$(echo "$want" | sort)
have=$(nm -D --defined-only "$LIB" | awk '{print $3}' | sort)
if [ "$want" = "$have" ]; then pass "exported symbols = hooks.def + dlsym"; else
    fail "exported symbols differ"; diff <(echo "$want") <(echo "$have") | sed 's/^/    | /'
fi

check "SONAME is libconvgpu.so" sh -c "readelf -d '$LIB' | grep -q 'Library soname: \[libconvgpu.so\]'"
needed=$(readelf -d "$LIB" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
if [ -n "${CONVGPU_SANITIZE:-}" ]; then
    needed=$(echo "$needed" | tr ' ' '\n' | grep -v -E '^(libasan|libubsan|libtsan|libstdc\+\+|libm|libgcc_s)\.' | tr '\n' ' ')
fi
bad=$(echo "$needed" | tr ' ' '\n' | grep -v -E '^(libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux.*|)$' || true)
if [ -z "$bad" ]; then pass "links only libc/libdl/libpthread ($needed)"; else fail "links $bad"; fi
[ -n "${CONVGPU_SANITIZE:-}" ] || check "no undefined symbols beyond libc" sh -c "! nm -D --undefined-only '$LIB' | grep -v -E '@GLIBC|__asan|__ubsan|__sanitizer|__lsan|w ' | grep -q ."
finish
