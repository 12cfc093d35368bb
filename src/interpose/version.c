/* version.c — the interposer's version, written into the file itself, so that a tool can read
 * which convgpu a libconvgpu.so on disk belongs to without loading it into a process
 * (`convgpu doctor` compares it with the daemon's). Nothing in the interposer reads it; the
 * marker's prefix is the promise: "convgpu-interposer-version=" then the version. */
#include "ledger.h"
#include "proto.h"

#define CG_STR_(x) #x
#define CG_STR(x) CG_STR_(x)

__attribute__((used)) const char cg_interposer_version[] =
    "convgpu-interposer-version=" CONVGPU_VERSION " proto=" CG_STR(CG_PROTO_VERSION)
    " ledger=" CG_STR(CG_LEDGER_VERSION);
