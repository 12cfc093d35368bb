/* spec.h — what a container's OCI configuration (config.json) asks of convgpu, and the edits
 * that wire a registered container to convgpud: mounts, environment, hooks. Pure functions on
 * jansson values: no files, no daemon, so they are unit-tested directly. */
#ifndef CONVGPU_OCI_SPEC_H
#define CONVGPU_OCI_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

/* Where things appear inside the container. */
#define OCI_CG_DIR "/run/convgpu"                       /* the container's private dir */
#define OCI_CG_SOCKET "/run/convgpu/container.sock"     /* the interposer's default socket */
#define OCI_CG_LIB "/usr/lib/convgpu/libconvgpu.so"     /* the interposer */
#define OCI_CG_PRELOAD "/etc/ld.so.preload"             /* loads it even without LD_PRELOAD */
/* The emulated GPU's state file (emulating daemons only). Not under OCI_CG_DIR, which is mounted
 * read-only, and not at its host path, which is under OCI_CG_DIR when the daemon runs on the
 * default runtime directory. */
#define OCI_CG_EMU_STATE "/run/convgpu-emu/state"
/* The environment variable and annotations that ask for GPU memory, in priority order. */
#define OCI_ENV_MEMORY "CONVGPU_GPU_MEMORY"
#define OCI_ENV_DEVICE "CONVGPU_GPU_DEVICE"
#define OCI_ANN_MEMORY "com.convgpu.gpu-memory"
#define OCI_ANN_DEVICE "com.convgpu.device"
/* Several GPUs (the limit and share per GPU): CONVGPU_GPUS=N or the annotation. */
#define OCI_ENV_GPUS "CONVGPU_GPUS"
/* Set by the Kubernetes device plugin's convgpu.io/gpu slots (docs/KUBERNETES.md): the GPUs of
 * a multi-GPU container, over which the memory and compute totals kubelet counted are split
 * evenly. */
#define OCI_ENV_K8S_GPUS "CONVGPU_K8S_GPUS"
#define OCI_MAX_GPUS 64
#define OCI_ANN_GPUS "com.convgpu.gpus"
#define OCI_ANN_PAPER "com.nvidia.memory.limit"
/* The compute share and its mode, each from the environment, else the annotation. */
#define OCI_ENV_COMPUTE "CONVGPU_GPU_COMPUTE"
#define OCI_ENV_COMPUTE_MODE "CONVGPU_COMPUTE_MODE"
#define OCI_ANN_COMPUTE "com.convgpu.gpu-compute"
#define OCI_ANN_COMPUTE_MODE "com.convgpu.compute-mode"
/* A whole GPU (exclusive mode), from the environment, else the annotation: yes/true/1 or
 * no/false/0. */
#define OCI_ENV_EXCLUSIVE "CONVGPU_EXCLUSIVE"
#define OCI_ANN_EXCLUSIVE "com.convgpu.exclusive"
/* The image, which names the container's profile (src/daemon/profile.h): ours, else the one
 * containerd's CRI writes; without either the profile is the command's name. */
#define OCI_ANN_IMAGE "com.convgpu.image"
#define OCI_ANN_CRI_IMAGE "io.kubernetes.cri.image-name"

struct oci_request {
    bool wanted;          /* the container asks for GPU memory */
    uint64_t bytes;       /* the limit */
    long device;          /* a GPU index, or -1: the placement policy chooses */
    unsigned gpus;        /* 0: not asked (one); else 1..64 GPUs, each with the limit */
    unsigned ndevices;    /* > 0: the GPUs are named (devices[], distinct; gpus == ndevices) */
    unsigned devices[OCI_MAX_GPUS];
    const char *source;   /* where the limit came from: the variable or annotation name */
    bool has_user;        /* process.user gave the uid/gid the container runs as */
    uint32_t uid, gid;
    unsigned compute_pct; /* 0: none asked (the daemon's default applies) */
    const char *compute_source;
    bool has_mode;        /* a mode was given (else the daemon's default-compute-mode) */
    cg_compute_mode compute_mode;
    bool exclusive;       /* a whole GPU; bytes may then be 0: the GPU's capacity */
    bool has_priority;    /* CONVGPU_PRIORITY / com.convgpu.priority (the option table's) */
    int priority;
    bool no_swap;         /* CONVGPU_NO_SWAP / com.convgpu.no-swap */
    const char *image;    /* the profile key when an annotation names the image, else NULL */
    const char *command;  /* process.args[0], else NULL */
    /* Kubernetes mode (oci_spec_k8s_request): the device plugin's tokens, the pod's sandbox id
     * and the tenant its namespace names; nothing else of the bundle is read. */
    unsigned nallocs;
    const char *allocs[3];
    const char *pod;
    char tenant[33];
};

/* The variables the device plugin's Allocate sets (docs/KUBERNETES.md): one per resource. */
#define OCI_ENV_ALLOCATION "CONVGPU_ALLOCATION"
#define OCI_ENV_ALLOCATION_COMPUTE "CONVGPU_ALLOCATION_COMPUTE"
#define OCI_ENV_ALLOCATION_GPUS "CONVGPU_ALLOCATION_GPUS"
/* What containerd's CRI writes from kubelet's sandbox configuration; a pod cannot set them. */
#define OCI_ANN_CRI_SANDBOX_ID "io.kubernetes.cri.sandbox-id"
#define OCI_ANN_CRI_NAMESPACE "io.kubernetes.cri.sandbox-namespace"
/* The pod's UID (containerd 1.6.11 and later): the pod that claims an allocation. Unlike the
 * sandbox id it survives a re-created sandbox, whose containers kubelet starts again with the
 * same allocation (it does not call Allocate again). */
#define OCI_ANN_CRI_SANDBOX_UID "io.kubernetes.cri.sandbox-uid"
/* The runtime's own environment (containerd's, through a systemd drop-in) that puts the shim
 * in Kubernetes mode. */
#define OCI_SHIM_MODE_ENV "CONVGPU_SHIM_MODE"

/* Kubernetes mode: the request is only the device plugin's allocation tokens (each variable
 * at most once, 32 lowercase hex digits), the pod from the CRI pod UID (else, before containerd
 * 1.6.11, the sandbox id) and the tenant from
 * the CRI sandbox namespace; CONVGPU_GPU_MEMORY, the compute, exclusive, device and GPU
 * variables and every com.convgpu / com.nvidia annotation are not read. Returns 0 (req->wanted
 * false: no token, the container passes through with nothing), or -1 with err (a variable given
 * twice, a malformed token). */
int oci_spec_k8s_request(json_t *config, struct oci_request *req, char *err, size_t errlen);

/* Reads the request from process.env and annotations. Returns 0 (check req->wanted), or -1 when
 * the request is malformed (bad size, zero, bad device, no process section, a share that is not
 * a whole percent 1-100, an unknown mode, a mode without a share, a share without a GPU-memory
 * or exclusive request, an exclusive value that is not yes/no, a CONVGPU_K8S_GPUS list that does
 * not parse or over which the memory or compute total does not split evenly); err says why. The strings in
 * req point into config. */
int oci_spec_request(json_t *config, struct oci_request *req, char *err, size_t errlen);

struct oci_inject {
    const char *container_dir; /* host path of the container's private dir (from the daemon) */
    const char *preload_file;  /* host path of the generated ld.so.preload */
    json_t *env;               /* the "env" object of the daemon's create answer */
    const char *hook_path;     /* absolute host path of convgpu-runtime */
    const char *const *hook_args; /* options before "hook" (runtime dir, log), NULL-terminated */
    bool nvidia;               /* a real GPU: also set NVIDIA_VISIBLE_DEVICES for the toolkit */
    bool hooks;                /* add the createRuntime and poststop hooks (see hook.c) */
};

/* Edits config in place: removes a previous injection (the mounts and hooks this shim adds,
 * recognised by their exact shape and sources, never by a list the bundle could write), then adds
 * the mounts, the environment and, with in->hooks, the hooks. Returns 0, or -1 with err (config may then be
 * partly edited: the caller discards it). */
int oci_spec_inject(json_t *config, const struct oci_inject *in, char *err, size_t errlen);

/* The text of the container's ld.so.preload: the interposer first, then the lines of the
 * image's own file (may be NULL) that are not the interposer. Returns malloc'd text. */
char *oci_preload_text(const char *image_preload);

#endif
